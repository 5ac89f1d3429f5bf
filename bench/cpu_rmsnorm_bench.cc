// CPU RMSNorm: fused kernel bandwidth against memcpy of the same bytes, and naive vs fused time.
//
//   cpu_rmsnorm_bench [--rows N] [--hidden N] [--iters N]
//   (default: 1024 x 4096 f32 for bandwidth, then the demo's default 128 x 4096; 20 iters)
//
// Measured in one run, single-threaded, best of `iters` rounds after a warm-up, the variants
// interleaved within each round:
//   memcpy       copies rows*hidden*4 bytes (reads and writes the bytes rms_norm reads and writes)
//   fused kernel the cpu backend's aten::_fused_rms_norm kernel into a preallocated output,
//                called through DeviceBackend::Execute (the kernel alone: no dispatcher, no
//                allocation)
//   fused op     opscope::rms_norm: dispatcher + output allocation + kernel (what users call)
//   naive ops    x*x, mean(-1, keepdim), +eps, rsqrt, x*r, *w: six ops, five temporaries
// Prints bandwidths (bytes read + written per second), the fused/memcpy ratio (target >= 70 %)
// and the naive/fused time ratio.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/usage.h"
#include "opscope/device.h"
#include "opscope/tensor.h"

namespace {

// Best time of each variant over `rounds` rounds, the variants interleaved within each round so
// that load from other processes affects them alike.
std::vector<double> BestSeconds(int rounds, const std::vector<std::function<void()>>& variants) {
  for (const auto& fn : variants) fn();  // warm-up: page faults, caches, allocator pools
  std::vector<double> best(variants.size(), 1e30);
  for (int r = 0; r < rounds; ++r) {
    for (size_t v = 0; v < variants.size(); ++v) {
      const auto t0 = std::chrono::steady_clock::now();
      variants[v]();
      const auto t1 = std::chrono::steady_clock::now();
      best[v] = std::min(best[v], std::chrono::duration<double>(t1 - t0).count());
    }
  }
  return best;
}

long ArgOr(int argc, char** argv, const char* flag, long fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  }
  return fallback;
}

// Measures one shape and prints its block; returns false when fused and naive disagree.
bool MeasureShape(int64_t rows, int64_t hidden, int iters) {
  const double eps = 1e-6;
  const opscope::Tensor x = opscope::randn({rows, hidden}, 1);
  const opscope::Tensor w = opscope::randn({hidden}, 2);
  const size_t bytes = static_cast<size_t>(rows * hidden) * sizeof(float);
  const double moved = 2.0 * static_cast<double>(bytes) + hidden * sizeof(float);  // x in, y out, w

  std::vector<float> src(rows * hidden, 1.0f), dst(rows * hidden, 0.0f);
  opscope::Tensor fused_out, naive_out;
  // The kernel call the dispatcher would make for rms_norm(x, {hidden}, w, eps).
  const opscope::Tensor y = opscope::empty({rows, hidden});
  opscope::OpAttrs attrs;
  attrs.shape = {hidden};
  attrs.eps = eps;
  const opscope::TensorRef in[] = {opscope::MakeTensorRef(x), opscope::MakeTensorRef(w)};
  const opscope::TensorRef out[] = {opscope::MakeTensorRef(y)};
  const opscope::OpCall call{opscope::OpId::kFusedRmsNorm, in, out, &attrs};
  opscope::DeviceBackend& cpu = opscope::GetBackend(opscope::DeviceType::kCPU);
  const std::vector<double> best = BestSeconds(
      iters, {[&] { std::memcpy(dst.data(), src.data(), bytes); }, [&] { cpu.Execute(call); },
              [&] { fused_out = opscope::rms_norm(x, {hidden}, w, eps); },
              [&] {
                opscope::Tensor r = opscope::rsqrt(opscope::mean(x * x, {-1}, true) + eps);
                naive_out = x * r * w;
              }});
  const double t_memcpy = best[0], t_kernel = best[1], t_fused = best[2], t_naive = best[3];

  // The two paths agree (a benchmark of wrong results measures nothing).
  const std::vector<float> a = fused_out.ToVector(), b = naive_out.ToVector();
  double max_diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    max_diff = std::max<double>(max_diff, std::fabs(a[i] - b[i]));
  }

  const double gbps_memcpy = 2.0 * static_cast<double>(bytes) / t_memcpy / 1e9;
  const double gbps_kernel = moved / t_kernel / 1e9;
  const double gbps_fused = moved / t_fused / 1e9;
  std::printf("cpu rms_norm, %lld x %lld f32 (%.1f MiB in, %.1f MiB out), best of %d, 1 thread\n",
              static_cast<long long>(rows), static_cast<long long>(hidden), bytes / 1048576.0,
              bytes / 1048576.0, iters);
  std::printf("  memcpy (baseline)   %9.3f ms  %7.2f GB/s\n", t_memcpy * 1e3, gbps_memcpy);
  std::printf("  fused kernel        %9.3f ms  %7.2f GB/s  %5.1f %% of memcpy\n", t_kernel * 1e3,
              gbps_kernel, 100 * gbps_kernel / gbps_memcpy);
  std::printf("  fused op rms_norm   %9.3f ms  %7.2f GB/s  %5.1f %% of memcpy (target >= 70 %%)\n",
              t_fused * 1e3, gbps_fused, 100 * gbps_fused / gbps_memcpy);
  std::printf("  naive 6 ops         %9.3f ms  naive/fused time ratio %.2fx\n", t_naive * 1e3,
              t_naive / t_fused);
  std::printf("  max |fused - naive| %.3g\n", max_diff);
  return max_diff < 1e-3;
}

// Host cost of one op call through the dispatcher on a 1-element tensor (allocation, checks,
// kernel launch), with no profiler session.
void MeasureDispatch(int iters) {
  const opscope::Tensor a = opscope::ones({1});
  constexpr int kCalls = 20000;
  opscope::Tensor out;
  const std::vector<double> best = BestSeconds(iters, {[&] {
                                                 for (int i = 0; i < kCalls; ++i) out = a * a;
                                               }});
  std::printf("dispatch: aten::mul on 1 element, %.3f us per op call (profiler off)\n",
              best[0] / kCalls * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (opscope::bench::WantsHelp(argc, argv)) {
    return opscope::bench::Usage(
        "usage: cpu_rmsnorm_bench [--rows N>0] [--hidden N>0] [--iters N>0]");
  }
  const int64_t rows = ArgOr(argc, argv, "--rows", 0);
  const int64_t hidden = ArgOr(argc, argv, "--hidden", 4096);
  const int iters = static_cast<int>(ArgOr(argc, argv, "--iters", 20));
  if (rows < 0 || hidden <= 0 || iters <= 0) {
    std::fprintf(stderr, "usage: %s [--rows N>0] [--hidden N>0] [--iters N>0]\n", argv[0]);
    return 2;
  }
  opscope::RegisterCpuBackend();
  bool ok = true;
  if (rows > 0) {
    ok = MeasureShape(rows, hidden, iters);
  } else {
    ok = MeasureShape(1024, hidden, iters);  // bandwidth: 16 MiB each way, beyond the caches
    ok = MeasureShape(128, hidden, iters * 5) && ok;  // the demo's default shape (cache-resident)
  }
  MeasureDispatch(iters);
  return ok ? 0 : 1;
}
