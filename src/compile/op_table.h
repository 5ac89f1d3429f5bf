// What compile() knows about each ATen op it can fuse: its kind, arity and how to compute one
// element. Ops not listed here are "extern": they run through the eager dispatcher between
// fused kernels (as TorchInductor runs extern kernels).
#ifndef OPSCOPE_SRC_COMPILE_OP_TABLE_H_
#define OPSCOPE_SRC_COMPILE_OP_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace opscope::compiler {

enum class OpKind {
  kInput,
  kConstant,
  kPointwise,  // one output element from the same-index elements of its (broadcast) operands
  kReduction,  // sum/mean/amax/amin over attrs.dims
  kExtern,     // anything else: runs eagerly, never fused
};

struct OpInfo {
  OpKind kind = OpKind::kExtern;
  int arity = 0;  // number of operands for pointwise ops (1 or 2)
};

OpInfo LookupOp(std::string_view op);
inline bool IsFusible(std::string_view op) {
  OpKind k = LookupOp(op).kind;
  return k == OpKind::kPointwise || k == OpKind::kReduction;
}

// A C++ expression computing a pointwise op from operand expressions `a` (and `b`), in float.
// `alpha` is aten::add/sub's alpha. Pure: the same inputs give the same text.
std::string PointwiseExpr(std::string_view op, const std::vector<std::string>& args, double alpha);

// Evaluates a pointwise op on scalars in double precision (constant folding, reference checks).
double EvalPointwise(std::string_view op, double a, double b, double alpha);

// Reduction helpers: the identity element, and the C++ statement folding `x` into `acc`.
double ReductionInit(std::string_view op);
std::string ReductionUpdate(std::string_view op, std::string_view acc, std::string_view x);

// Formats a double so that it reads back bit-exactly as a float literal in C++ ("1e-06f").
std::string FloatLiteral(double v);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_OP_TABLE_H_
