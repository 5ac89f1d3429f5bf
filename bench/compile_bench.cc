// compile() benchmarks, measured side by side in one run:
//   1. compile latency of a first call: cold (the C++ compiler runs), disk-cached (a fresh
//      in-memory cache, as a second process sees it) and memory-cached (another compiled function
//      with the same graph in this process);
//   2. per-call overhead of a cached compiled function (tiny input) next to the eager ops;
//   3. cpu RMSNorm at ROWS x HIDDEN: compiled vs the hand-written fused kernel (rms_norm, target:
//      within 15 %) vs naive (six eager ops), interleaved, median of the repetitions.
//
//   compile_bench [--shape ROWS,HIDDEN] [--reps N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/usage.h"
#include "opscope/compile.h"
#include "opscope/device.h"
#include "opscope/tensor.h"

namespace {

using opscope::Tensor;

std::vector<Tensor> NaiveRmsNorm(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor r = opscope::rsqrt(opscope::mean(x * x, {-1}, true) + 1e-6);
  return {x * r * in[1]};
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds of one call of `f`, median over `reps` (after one warm-up call).
double TimeUs(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    double t0 = NowUs();
    f();
    t.push_back(NowUs() - t0);
  }
  return Median(t);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage = "usage: compile_bench [--shape ROWS,HIDDEN] [--reps N]";
  if (opscope::bench::WantsHelp(argc, argv)) return opscope::bench::Usage(kUsage);
  if (argc % 2 == 0) return opscope::bench::Usage(kUsage, argv[argc - 1]);
  int64_t rows = 1024, hidden = 4096;
  int reps = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--shape") {
      if (std::sscanf(argv[i + 1], "%ld,%ld", &rows, &hidden) != 2) {
        std::fprintf(stderr, "--shape expects ROWS,HIDDEN, got %s\n", argv[i + 1]);
        return 2;
      }
    } else if (a == "--reps") {
      reps = std::max(3, std::atoi(argv[i + 1]));
    } else {
      return opscope::bench::Usage(kUsage, argv[i]);
    }
  }
  opscope::RegisterCpuBackend();
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("opscope-compile-bench-" + std::to_string(::getpid()));
  opscope::CompileOptions options{.backend = "cpu", .cache_dir = dir.string()};

  // 1. Compile latency.
  Tensor xs = opscope::randn({64, 512}, 1), ws = opscope::randn({512}, 2);
  std::vector<double> cold, disk, memory;
  for (int i = 0; i < 3; ++i) {
    fs::remove_all(dir);
    opscope::ClearCompileMemoryCache();
    auto f = opscope::compile(NaiveRmsNorm, options);
    double t0 = NowUs();
    f({xs, ws});
    cold.push_back(NowUs() - t0);
    if (f.last().cache != "compiled") {
      std::fprintf(stderr, "cold compile did not run the compiler (%s): %s\n",
                   f.last().cache.c_str(), f.last().fallback_reason.c_str());
      return 1;
    }
    opscope::ClearCompileMemoryCache();
    auto g = opscope::compile(NaiveRmsNorm, options);
    t0 = NowUs();
    g({xs, ws});
    disk.push_back(NowUs() - t0);
    auto h = opscope::compile(NaiveRmsNorm, options);
    t0 = NowUs();
    h({xs, ws});
    memory.push_back(NowUs() - t0);
    if (g.last().cache != "disk" || h.last().cache != "memory") {
      std::fprintf(stderr, "unexpected cache sources: %s, %s\n", g.last().cache.c_str(),
                   h.last().cache.c_str());
      return 1;
    }
  }
  std::printf("compile latency (first call, rmsnorm graph, median of 3):\n");
  std::printf("  cold (C++ compiler runs)   %10.1f us\n", Median(cold));
  std::printf("  disk-cached (new process)  %10.1f us   (%.1fx faster than cold)\n", Median(disk),
              Median(cold) / Median(disk));
  std::printf("  memory-cached              %10.1f us   (%.1fx faster than cold)\n", Median(memory),
              Median(cold) / Median(memory));

  // 2. Per-call overhead on a tiny input.
  Tensor xt = opscope::randn({1, 8}, 3), wt = opscope::randn({8}, 4);
  auto tiny = opscope::compile(NaiveRmsNorm, options);
  tiny({xt, wt});
  int calls = 20000;
  double t0 = NowUs();
  for (int i = 0; i < calls; ++i) tiny({xt, wt});
  double compiled_call = (NowUs() - t0) / calls;
  t0 = NowUs();
  for (int i = 0; i < calls; ++i) NaiveRmsNorm(std::vector<Tensor>{xt, wt});
  double eager_call = (NowUs() - t0) / calls;
  t0 = NowUs();
  for (int i = 0; i < calls; ++i) opscope::rms_norm(xt, {8}, wt, 1e-6);
  double fused_call = (NowUs() - t0) / calls;
  std::printf("per-call cost on a [1, 8] input (guard check + output allocation + kernel):\n");
  std::printf("  compiled   %8.3f us/call\n", compiled_call);
  std::printf("  eager naive (6 ops) %8.3f us/call   fused rms_norm op %8.3f us/call\n", eager_call,
              fused_call);

  // 3. RMSNorm at the requested shape, interleaved.
  Tensor x = opscope::randn({rows, hidden}, 5), w = opscope::randn({hidden}, 6);
  auto compiled = opscope::compile(NaiveRmsNorm, options);
  compiled({x, w});
  if (!compiled.last().fallback_reason.empty()) {
    std::fprintf(stderr, "compile fell back to eager: %s\n",
                 compiled.last().fallback_reason.c_str());
    return 1;
  }
  std::vector<double> tc, tf, tn;
  for (int r = 0; r < reps; ++r) {
    tc.push_back(TimeUs([&] { compiled({x, w}); }, 1));
    tf.push_back(TimeUs([&] { opscope::rms_norm(x, {hidden}, w, 1e-6); }, 1));
    tn.push_back(TimeUs([&] { NaiveRmsNorm(std::vector<Tensor>{x, w}); }, 1));
  }
  // On a shared machine the minimum is the least disturbed figure; the median is printed too.
  auto Min = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  double c = Min(tc), f = Min(tf), n = Min(tn);
  double gbps = 2.0 * rows * hidden * 4 / (c * 1e3);
  std::printf("cpu rmsnorm [%ld, %ld] f32, %d interleaved reps (min / median):\n", rows, hidden,
              reps);
  std::printf("  naive (6 eager ops)        %10.1f / %10.1f us\n", n, Median(tn));
  std::printf("  fused (hand-written op)    %10.1f / %10.1f us\n", f, Median(tf));
  std::printf("  compiled (generated C++)   %10.1f / %10.1f us   (%.1f GB/s read+write at min)\n",
              c, Median(tc), gbps);
  std::printf("  compiled / fused = %.3f at min, %.3f at median (target <= 1.15)\n", c / f,
              Median(tc) / Median(tf));
  std::printf("  naive / compiled = %.2fx at min\n", n / c);
  fs::remove_all(dir);
  return 0;
}
