// How ATen ops become device programs on the Neuron model: which engine runs each op, with which
// instruction, over which tiles. Eager ops are programs of one op (a few for composite kernels
// like softmax); aten::_fused_rms_norm is one program of three ops whose intermediates stay in
// SBUF.
//
// Shapes are given as the 2-D view the device tiles: rows over partitions, cols along the free
// dimension (a tensor [..., N] is [numel / N, N]; a per-row value is [rows, 1]; a vector shared
// by every row is [1, N]).
#ifndef OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_
#define OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/neuron.h"

namespace opscope::neuron {

struct Shape2D {
  int64_t rows = 1;
  int64_t cols = 1;
};

// Flattens a tensor shape to the device's 2-D view: [prod(shape[:-1]), shape[-1]] ([1, 1] for a
// scalar).
Shape2D View2D(const std::vector<int64_t>& shape);

// The program for one eager ATen op (`op` as the dispatcher names it, "aten::mul"): its inputs
// and its output in the 2-D view. Reductions (mean, sum, amax, amin) reduce along cols. Unknown ops
// run as a generic VectorE pass. The program's compute is left empty for the caller to set.
Program EagerProgram(std::string_view op, const std::vector<Shape2D>& inputs, Shape2D output);

// aten::_fused_rms_norm over x [rows, hidden] with weight [hidden]: one pass that squares and
// sums each row (VectorE), rsqrt(mean + eps) per row (ScalarE), and x * r * w (VectorE). x is read
// from HBM once (kept in SBUF when it fits), y written once.
Program FusedRmsNormProgram(int64_t rows, int64_t hidden, bool has_weight = true);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_ATEN_PROGRAMS_H_
