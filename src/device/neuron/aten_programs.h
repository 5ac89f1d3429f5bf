// How ATen ops become device programs on the Neuron model: which engine runs each op, with which
// instruction, over which tiles. Eager ops are programs of one op (a few for composite kernels
// like softmax); aten::_fused_rms_norm is one program of three ops whose intermediates stay in
// SBUF. The Append* builders add a composite to an existing program (graphs of several ops).
//
// Shapes are given as the 2-D view the device tiles: rows over partitions, cols along the free
// dimension (a tensor [..., N] is [numel / N, N]; a per-row value is [rows, 1]; a vector shared
// by every row is [1, N]). elem_bytes: 4 = FP32, 2 = BF16, 1 = FP8 (matmul operands only).
#ifndef OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_
#define OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "device/neuron/program.h"

namespace opscope::neuron {

struct Shape2D {
  int64_t rows = 1;
  int64_t cols = 1;
};

// Flattens a tensor shape to the device's 2-D view: [prod(shape[:-1]), shape[-1]] ([1, 1] for a
// scalar).
Shape2D View2D(const std::vector<int64_t>& shape);

// The op the device runs for the elementwise ATen op `op` ("aten::mul") over `inputs` (buffer
// indices of `program`) into `output`: ScalarE activations for transcendentals, VectorE
// tensor_tensor for two streamed tensors, tensor_scalar (VectorE or ScalarE, the scheduler picks)
// for one tensor and scalars, tensor_copy on any vector-class engine.
Op ElementwiseOp(std::string_view op, const Program& program, std::vector<int> inputs, int output);

// The program for one eager ATen op (`op` as the dispatcher names it, "aten::mul"): its inputs
// and its output in the 2-D view. Reductions (mean, sum, amax, amin) reduce along cols; aten::mm
// takes [M, K] x [K, N]. Unknown ops run as a generic vector pass. The program's compute is left
// empty for the caller to set; `eager` is not set.
Program EagerProgram(std::string_view op, const std::vector<Shape2D>& inputs, Shape2D output,
                     int32_t elem_bytes = 4);

// batch x ([M, K] x [K, N]) as one program (aten::mm when batch == 1, aten::bmm otherwise).
Program MatmulProgram(std::string_view op, int64_t batch, int64_t m, int64_t k, int64_t n,
                      int32_t elem_bytes = 4);

// aten::_fused_rms_norm over x [rows, hidden] with weight [hidden]: the sum of squares per row on
// ScalarE (activation with accumulate), rsqrt(mean + eps) per row on ScalarE, and (x * r) * w in
// one VectorE scalar_tensor_tensor. x is read from HBM once (kept in SBUF while it fits), y
// written once.
Program FusedRmsNormProgram(int64_t rows, int64_t hidden, bool has_weight = true,
                            int32_t elem_bytes = 4);
// Softmax over the rows of x [rows, cols]; layer norm of x [rows, cols] with optional weight and
// bias [cols].
Program SoftmaxProgram(int64_t rows, int64_t cols, int32_t elem_bytes = 4);
Program LayerNormProgram(int64_t rows, int64_t cols, bool has_weight, bool has_bias,
                         int32_t elem_bytes = 4);

// The same composites appended to `p`: `x` and the optional `weight`/`bias` (-1: none) are
// buffers of p; the result goes to `out` (a buffer of x's shape). Intermediates are SBUF buffers.
void AppendRmsNorm(Program* p, int x, int weight, int out);
void AppendSoftmax(Program* p, int x, int out);
void AppendLayerNorm(Program* p, int x, int weight, int bias, int out);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_
