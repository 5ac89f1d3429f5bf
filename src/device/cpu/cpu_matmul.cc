// Matrix product CPU kernels (mm, bmm): operands packed row-major when strided, then an
// i-k-j loop whose inner loop over output columns vectorizes.
#include <vector>

#include "device/cpu/cpu_kernels.h"

namespace opscope::cpu {
namespace {

// Row-major view of a strided matrix: `data` points at element [0,0]; copies into `scratch`
// only when the rows are not unit-stride.
const float* PackRows(const float* data, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      std::vector<float>& scratch) {
  if (cs == 1 && (rs == cols || rows == 1)) return data;
  scratch.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) scratch[r * cols + k] = data[r * rs + k * cs];
  }
  return scratch.data();
}

void MatmulBlock(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t m) {
  for (int64_t i = 0; i < n; ++i) {
    float* __restrict crow = c + i * m;
    for (int64_t j = 0; j < m; ++j) crow[j] = 0;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * k + p];
      const float* __restrict brow = b + p * m;
      for (int64_t j = 0; j < m; ++j) crow[j] += av * brow[j];
    }
  }
}

}  // namespace

void MatmulKernel(const OpCall& c) {
  const TensorRef& a = c.inputs[0];
  const TensorRef& b = c.inputs[1];
  const TensorRef& out = c.outputs[0];
  const bool batched = c.op == OpId::kBmm;
  const int o = batched ? 1 : 0;  // first matrix dim
  const int64_t batches = batched ? a.sizes[0] : 1;
  const int64_t n = a.sizes[o], k = a.sizes[o + 1], m = b.sizes[o + 1];
  std::vector<float> sa, sb;
  for (int64_t bi = 0; bi < batches; ++bi) {
    const float* pa = a.f32() + (batched ? bi * a.strides[0] : 0);
    const float* pb = b.f32() + (batched ? bi * b.strides[0] : 0);
    float* pc = out.f32() + bi * n * m;
    const float* ra = PackRows(pa, n, k, a.strides[o], a.strides[o + 1], sa);
    const float* rb = PackRows(pb, k, m, b.strides[o], b.strides[o + 1], sb);
    MatmulBlock(ra, rb, pc, n, k, m);
  }
}

}  // namespace opscope::cpu
