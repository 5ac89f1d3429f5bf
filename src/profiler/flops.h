// Floating-point operation counts of ATen ops from their input shapes, as torch.profiler's
// with_flops=True computes them (torch/csrc/profiler/util.cpp computeFlops): only the ops PyTorch
// counts get a figure; every other op counts 0.
//
//   aten::mm, aten::addmm        2 * prod(mat1) / mat1[-1] * prod(mat2)
//                                (mm: inputs 0 and 1; addmm: inputs 1 and 2)
//   aten::bmm, aten::baddbmm     2 * prod(mat1) / mat1[-1] / mat1[0] * prod(mat2)
//   aten::mul, aten::add         prod(input 0)  (one operation per element)
//   aten::conv2d                 2 * N * H_out * W_out * kh * kw * C_in * C_out / groups, with
//                                stride, padding, dilation and groups from Concrete Inputs
//
// Thread safety: pure functions.
#ifndef OPSCOPE_PROFILER_FLOPS_H_
#define OPSCOPE_PROFILER_FLOPS_H_

#include <cstdint>
#include <string_view>

namespace opscope::internal {

// The op's FLOPs from its Input Dims text (read by ParseShapes, profiler/input_shapes.h) and, for
// conv2d, its Concrete Inputs text
// (["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]); 0 when PyTorch does not count the op or
// the shapes do not say.
int64_t FlopsFromShapes(std::string_view op, std::string_view input_dims,
                        std::string_view concrete_inputs = {});

// True for the ops FlopsFromShapes counts.
bool CountsFlops(std::string_view op);

}  // namespace opscope::internal

#endif  // OPSCOPE_PROFILER_FLOPS_H_
