// N-operand strided iteration for CPU kernels: coalesces dims that are contiguous for every
// operand, then hands the innermost run of each position to a row function, so fast paths see
// long unit-stride (or stride-0) rows whatever the layout.
#ifndef OPSCOPE_SRC_DEVICE_CPU_STRIDED_LOOP_H_
#define OPSCOPE_SRC_DEVICE_CPU_STRIDED_LOOP_H_

#include <array>
#include <cstdint>

#include "opscope/device.h"

namespace opscope::cpu {

template <int N>
struct LoopShape {
  int ndim = 0;
  std::array<int64_t, kMaxDims> sizes{};
  std::array<std::array<int64_t, kMaxDims>, N> strides{};  // per operand, in elements
};

// Builds the loop over `sizes[0..ndim)` with each operand's strides, dropping size-1 dims and
// merging neighbours that are contiguous for all operands.
template <int N>
LoopShape<N> MakeLoop(int ndim, const int64_t* sizes,
                      const std::array<const int64_t*, N>& strides) {
  LoopShape<N> s;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    if (s.ndim > 0) {
      bool mergeable = true;
      for (int k = 0; k < N; ++k) {
        mergeable = mergeable && strides[k][d] * sizes[d] == s.strides[k][s.ndim - 1];
      }
      if (mergeable) {
        s.sizes[s.ndim - 1] *= sizes[d];
        for (int k = 0; k < N; ++k) s.strides[k][s.ndim - 1] = strides[k][d];
        continue;
      }
    }
    s.sizes[s.ndim] = sizes[d];
    for (int k = 0; k < N; ++k) s.strides[k][s.ndim] = strides[k][d];
    ++s.ndim;
  }
  return s;
}

// Calls row(offsets, n, inner_strides) for every innermost run; offsets are element offsets per
// operand relative to `base`. A 0-d loop is one run of length 1.
template <int N, typename Row>
void ForEachRow(const LoopShape<N>& s, const std::array<int64_t, N>& base, Row&& row) {
  std::array<int64_t, N> inner{};
  if (s.ndim == 0) {
    row(base, int64_t{1}, inner);
    return;
  }
  const int last = s.ndim - 1;
  for (int k = 0; k < N; ++k) inner[k] = s.strides[k][last];
  const int64_t n = s.sizes[last];
  for (int d = 0; d < s.ndim; ++d) {
    if (s.sizes[d] == 0) return;
  }
  std::array<int64_t, kMaxDims> counter{};
  std::array<int64_t, N> off = base;
  for (;;) {
    row(off, n, inner);
    int d = last - 1;
    for (; d >= 0; --d) {
      if (++counter[d] < s.sizes[d]) {
        for (int k = 0; k < N; ++k) off[k] += s.strides[k][d];
        break;
      }
      for (int k = 0; k < N; ++k) off[k] -= s.strides[k][d] * (s.sizes[d] - 1);
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace opscope::cpu

#endif  // OPSCOPE_SRC_DEVICE_CPU_STRIDED_LOOP_H_
