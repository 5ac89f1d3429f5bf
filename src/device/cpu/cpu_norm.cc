// Row-wise CPU kernels: softmax over any dim, and the fused normalizations (layer_norm,
// rms_norm), each one pass per row over data that stays in cache.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "device/cpu/cpu_kernels.h"
#include "device/cpu/strided_loop.h"

namespace opscope::cpu {
namespace {

void SoftmaxRow(const float* x, float* y, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  float s = 0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - m);
    s += y[i];
  }
  const float inv = 1.0f / s;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

}  // namespace

void SoftmaxKernel(const OpCall& c) {
  const TensorRef& in = c.inputs[0];
  const TensorRef& out = c.outputs[0];
  if (in.numel() == 0) return;
  if (in.ndim == 0) {
    *out.f32() = 1.0f;
    return;
  }
  const int dim = static_cast<int>(c.attrs->dim);
  const int64_t n = in.sizes[dim];
  // Iterate over every row start: the shape with `dim` collapsed to 1.
  std::array<int64_t, kMaxDims> sizes{};
  for (int d = 0; d < in.ndim; ++d) sizes[d] = d == dim ? 1 : in.sizes[d];
  const auto loop = MakeLoop<2>(in.ndim, sizes.data(), {in.strides, out.strides});
  const int64_t si = in.strides[dim], so = out.strides[dim];
  std::vector<float> xin(n), yout(n);
  ForEachRow<2>(
      loop, {in.offset, out.offset},
      [&](const std::array<int64_t, 2>& off, int64_t rows, const std::array<int64_t, 2>& st) {
        for (int64_t r = 0; r < rows; ++r) {
          const float* x = static_cast<const float*>(in.data) + off[0] + r * st[0];
          float* y = static_cast<float*>(out.data) + off[1] + r * st[1];
          if (si == 1 && so == 1) {
            SoftmaxRow(x, y, n);
            continue;
          }
          for (int64_t i = 0; i < n; ++i) xin[i] = x[i * si];
          SoftmaxRow(xin.data(), yout.data(), n);
          for (int64_t i = 0; i < n; ++i) y[i * so] = yout[i];
        }
      });
}

namespace {

// Outputs at least this large are written with streaming (non-temporal) stores: they cannot stay
// in cache anyway, and streaming skips the read-for-ownership of every output line, which
// otherwise adds a third of the traffic.
constexpr int64_t kStreamingBytes = int64_t{8} << 20;

// y = x * inv * w (w may be null) with streaming stores where the CPU has them.
OPSCOPE_CPU_CLONES void ScaleRowStreaming(const float* x, const float* w, float* y, int64_t n,
                                          float inv) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i < n && (reinterpret_cast<uintptr_t>(y + i) & 15) != 0; ++i) {
    y[i] = w != nullptr ? x[i] * inv * w[i] : x[i] * inv;
  }
  const __m128 vinv = _mm_set1_ps(inv);
  if (w != nullptr) {
    for (; i + 4 <= n; i += 4) {
      _mm_stream_ps(y + i, _mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(x + i), vinv), _mm_loadu_ps(w + i)));
    }
  } else {
    for (; i + 4 <= n; i += 4) _mm_stream_ps(y + i, _mm_mul_ps(_mm_loadu_ps(x + i), vinv));
  }
#endif
  for (; i < n; ++i) y[i] = w != nullptr ? x[i] * inv * w[i] : x[i] * inv;
}

}  // namespace

OPSCOPE_CPU_CLONES void RmsNormRows(const float* x, const float* weight, float* y, int64_t rows,
                                    int64_t n, float eps) {
  const float inv_n = 1.0f / static_cast<float>(n);
  const bool streaming = rows * n * static_cast<int64_t>(sizeof(float)) >= kStreamingBytes;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    float* __restrict yr = y + r * n;
    const float inv = 1.0f / std::sqrt(SumOfSquares(xr, n) * inv_n + eps);
    if (streaming) {
      ScaleRowStreaming(xr, weight, yr, n, inv);
    } else if (weight != nullptr) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * inv * weight[i];
    } else {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * inv;
    }
  }
#if defined(__SSE2__)
  if (streaming) _mm_sfence();  // streaming stores are visible to other threads after this
#endif
}

OPSCOPE_CPU_CLONES void LayerNormRows(const float* x, const float* weight, const float* bias,
                                      float* y, int64_t rows, int64_t n, float eps) {
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    float* __restrict yr = y + r * n;
    const float mean = Sum(xr, n) * inv_n;
    float v = 0;
#pragma omp simd reduction(+ : v)
    for (int64_t i = 0; i < n; ++i) v += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.0f / std::sqrt(v * inv_n + eps);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float t = (xr[i] - mean) * inv;
      if (weight != nullptr) t *= weight[i];
      if (bias != nullptr) t += bias[i];
      yr[i] = t;
    }
  }
}

namespace {

// Row length of a normalization call: the product of attrs->shape (normalized_shape).
int64_t NormalizedSize(const OpCall& c) {
  int64_t n = 1;
  for (int64_t s : c.attrs->shape) n *= s;
  return n;
}

const float* Optional(const OpCall& c, size_t i) {
  return i < c.inputs.size() && c.inputs[i].defined() ? c.inputs[i].f32() : nullptr;
}

}  // namespace

void LayerNormKernel(const OpCall& c) {
  const int64_t n = NormalizedSize(c);
  if (n == 0) return;
  LayerNormRows(c.inputs[0].f32(), Optional(c, 1), Optional(c, 2), c.outputs[0].f32(),
                c.inputs[0].numel() / n, n, static_cast<float>(c.attrs->eps));
}

void RmsNormKernel(const OpCall& c) {
  const int64_t n = NormalizedSize(c);
  if (n == 0) return;
  RmsNormRows(c.inputs[0].f32(), Optional(c, 1), c.outputs[0].f32(), c.inputs[0].numel() / n, n,
              static_cast<float>(c.attrs->eps));
}

}  // namespace opscope::cpu
