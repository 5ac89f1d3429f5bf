// C++ code generation for fused kernels (the cpu backend), as TorchInductor's C++ backend does.
//
// Each FusedKernel becomes one function
//   extern "C" void opscope_kernel_<k>(const float* const* in, float* const* out);
// `in[i]` points at the first element of kernel.inputs[i], `out[j]` at kernel.outputs[j]; shapes
// and strides are compile-time constants (compile() guards on them). The loop nest: one loop per
// non-reduced domain dim; inside, one pass per reduction (innermost loop `omp simd` with a
// reduction clause), row values as scalars, then one pass writing the element outputs. The
// source includes no headers (math through __builtin_*), so it compiles fast.
#ifndef OPSCOPE_SRC_COMPILE_CPP_CODEGEN_H_
#define OPSCOPE_SRC_COMPILE_CPP_CODEGEN_H_

#include <string>
#include <string_view>

#include "compile/fusion.h"
#include "compile/graph.h"

namespace opscope::compiler {

std::string KernelSymbol(int kernel_index);

// The whole translation unit for `plan`. `banner` goes in a leading comment (graph, key).
std::string GenerateCpp(const Graph& graph, const FusionPlan& plan, std::string_view banner);

// One kernel's function definition.
std::string GenerateKernel(const Graph& graph, const FusedKernel& kernel, int kernel_index);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_CPP_CODEGEN_H_
