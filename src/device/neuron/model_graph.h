// What `opscope model` costs: one op at a shape, or a small op graph from a text file, as one
// device program (EstimateModelOp and EstimateModelGraph in opscope/neuron.h run them).
//
//   Program p = ModelOpProgram("rmsnorm", {128, 4096}, /*elem_bytes=*/4);
//   ProgramCost c = EstimateProgram(p, Preset("trn1"));
//
// The graph format, one statement per line ('#' starts a comment):
//
//   input x 4096,1024          # a program input in HBM: name, shape (up to 4 dims), [f32|bf16|fp8]
//   input w 1024,2048
//   h = rmsnorm x              # an intermediate: lives in SBUF (spilled only when SBUF is full)
//   y = mm h w
//   output y                   # program outputs, stored to HBM
//
// Ops: add sub mul div max min (two operands, each a value or a number; a value may be the full
// shape, a row vector [C] shared by every row, or a per-row column [R, 1]); exp silu sigmoid tanh
// gelu sqrt rsqrt reciprocal neg square log copy (one value); sum mean amax (along the last dim,
// keeping it as 1); rmsnorm X [W]; layernorm X [W [B]]; softmax X (over the last dim); mm A B
// ([M, K] x [K, N]); bmm A B ([B, M, K] x [B, K, N]).
//
// Thread-safe (no state).
#ifndef OPSCOPE_SRC_DEVICE_NEURON_MODEL_GRAPH_H_
#define OPSCOPE_SRC_DEVICE_NEURON_MODEL_GRAPH_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "device/neuron/program.h"
#include "opscope/neuron.h"

namespace opscope::neuron {

// The ops ModelOpProgram knows, in the order `opscope model --help` lists them.
std::vector<std::string> ModelOpNames();
// One op over `shape`: add mul silu exp (any rank, flattened to [rows, last]), rmsnorm softmax
// layernorm (likewise, normalized over the last dim, with weight and bias where the op has them),
// mm (M, K, N), bmm (B, M, K, N). elem_bytes 4 (f32), 2 (bf16) or 1 (fp8, mm and bmm only).
Program ModelOpProgram(std::string_view op, const std::vector<int64_t>& shape, int32_t elem_bytes);

// A graph in the format above; `elem_bytes` is the dtype of inputs that do not name one.
inline constexpr size_t kMaxGraphBytes = 1 << 20;
Program ParseModelGraph(std::string_view text, std::string_view source, int32_t elem_bytes);
// Reads `path` (a regular file of at most kMaxGraphBytes) and parses it.
Program ReadModelGraphFile(const std::string& path, int32_t elem_bytes);

// "f32" -> 4, "bf16" -> 2, "fp8" -> 1; throws ModelError for anything else.
int32_t ElemBytesOf(std::string_view dtype);
const char* DtypeName(int32_t elem_bytes);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_MODEL_GRAPH_H_
