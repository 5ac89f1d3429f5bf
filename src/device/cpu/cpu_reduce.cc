// Reduction CPU kernels: sum, mean, amax, amin over any set of dims, with fast paths for reducing
// the trailing dims (rows) or the leading dims (columns) of a contiguous input.
#include <cmath>
#include <limits>
#include <vector>

#include "device/cpu/cpu_kernels.h"
#include "device/cpu/strided_loop.h"

namespace opscope::cpu {
namespace {

float MaxRow(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
#pragma omp simd reduction(max : m) reduction(| : nan)
  for (int64_t i = 0; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan = nan | (x[i] != x[i]);
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

float MinRow(const float* x, int64_t n) {
  float m = std::numeric_limits<float>::infinity();
  bool nan = false;
#pragma omp simd reduction(min : m) reduction(| : nan)
  for (int64_t i = 0; i < n; ++i) {
    m = x[i] < m ? x[i] : m;
    nan = nan | (x[i] != x[i]);
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

}  // namespace

namespace {
constexpr int kLanes = 32;  // independent partial sums: 4 AVX or 8 SSE vectors
}  // namespace

OPSCOPE_CPU_CLONES float SumOfSquares(const float* x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j] * x[i + j];
  }
  float s = 0;
  for (; i < n; ++i) s += x[i] * x[i];
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

OPSCOPE_CPU_CLONES float Sum(const float* x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  }
  float s = 0;
  for (; i < n; ++i) s += x[i];
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

void ReduceKernel(const OpCall& c) {
  const TensorRef& in = c.inputs[0];
  const TensorRef& out = c.outputs[0];
  const uint32_t mask = c.reduce_mask;
  const bool is_max = c.op == OpId::kAmax;
  const bool is_min = c.op == OpId::kAmin;
  int64_t reduced = 1;
  for (int d = 0; d < in.ndim; ++d) {
    if (mask & (1u << d)) reduced *= in.sizes[d];
  }
  const float scale = c.op == OpId::kMean ? 1.0f / static_cast<float>(reduced) : 1.0f;
  const int64_t outer = out.numel();
  float* po = out.f32();
  const float* pi = in.f32();

  // Fast path: a contiguous input whose reduced dims are exactly the trailing ones.
  int split = in.ndim;
  while (split > 0 && (mask & (1u << (split - 1)))) --split;
  const uint32_t tail = ((1u << in.ndim) - 1) & ~((1u << split) - 1);
  const bool suffix = in.is_contiguous() && mask == tail;
  if (suffix && reduced > 0) {
    for (int64_t r = 0; r < outer; ++r) {
      const float* row = pi + r * reduced;
      po[r] = is_max   ? MaxRow(row, reduced)
              : is_min ? MinRow(row, reduced)
                       : Sum(row, reduced) * scale;
    }
    return;
  }

  // General: accumulate in double over the input, output strides 0 on reduced dims.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(outer, is_max ? -kInf : is_min ? kInf : 0.0);
  std::array<int64_t, kMaxDims> acc_strides{};
  int64_t s = 1;
  for (int d = in.ndim - 1; d >= 0; --d) {
    if (mask & (1u << d)) continue;
    acc_strides[d] = s;
    s *= in.sizes[d];
  }
  const auto loop = MakeLoop<2>(in.ndim, in.sizes, {in.strides, acc_strides.data()});
  double* pa = acc.data();
  ForEachRow<2>(
      loop, {in.offset, 0},
      [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
        const float* x = static_cast<const float*>(in.data) + off[0];
        double* a = pa + off[1];
        if (is_max) {
          for (int64_t i = 0; i < n; ++i) {
            const double v = x[i * st[0]];
            double& m = a[i * st[1]];
            if (v > m || std::isnan(v)) m = std::isnan(m) ? m : v;
          }
        } else if (is_min) {
          for (int64_t i = 0; i < n; ++i) {
            const double v = x[i * st[0]];
            double& m = a[i * st[1]];
            if (v < m || std::isnan(v)) m = std::isnan(m) ? m : v;
          }
        } else if (st[1] == 0) {
          double sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += x[i * st[0]];
          *a += sum;
        } else if (st[0] == 1 && st[1] == 1) {
          for (int64_t i = 0; i < n; ++i) a[i] += x[i];
        } else {
          for (int64_t i = 0; i < n; ++i) a[i * st[1]] += x[i * st[0]];
        }
      });
  const double dscale = c.op == OpId::kMean ? 1.0 / static_cast<double>(reduced) : 1.0;
  for (int64_t r = 0; r < outer; ++r) po[r] = static_cast<float>(acc[r] * dscale);
}

}  // namespace opscope::cpu
