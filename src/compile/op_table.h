// How compile() computes the ops it fuses. Which ops those are comes from the op registry
// (opscope/ops.h): FusionClass::kPointwise and kReduction rows are fused, kDecomposed rows are
// captured as the ops they are made of, everything else is "extern" and runs through the eager
// dispatcher between fused kernels (as TorchInductor runs extern kernels). The registry's row
// says whether an op is fused; this table only gives the formula, and op_table_test.cc names a
// fused row that has none.
#ifndef OPSCOPE_SRC_COMPILE_OP_TABLE_H_
#define OPSCOPE_SRC_COMPILE_OP_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "opscope/ops.h"

namespace opscope::compiler {

inline bool IsPointwise(OpId op) { return GetOpInfo(op).fusion == FusionClass::kPointwise; }
inline bool IsReduction(OpId op) { return GetOpInfo(op).fusion == FusionClass::kReduction; }
inline bool IsFusible(OpId op) { return IsPointwise(op) || IsReduction(op); }

// A C++ expression computing a pointwise op from operand expressions `a` (and `b`), in float.
// `alpha` is aten::add/sub's alpha. Pure: the same inputs give the same text. Throws
// std::invalid_argument for an op that is not pointwise.
std::string PointwiseExpr(OpId op, const std::vector<std::string>& args, double alpha);

// Evaluates a pointwise op on scalars in double precision (constant folding, reference checks).
// Throws std::invalid_argument for an op that is not pointwise.
double EvalPointwise(OpId op, double a, double b, double alpha);

// What a reduction does: start from `init`, fold each element in with `combine`, then divide by
// the element count when `mean`. Throws std::invalid_argument for an op that is not a reduction.
struct Reduction {
  enum Combine { kSum, kMax, kMin } combine = kSum;
  double init = 0;
  bool mean = false;
};
Reduction ReductionOf(OpId op);
// True when op_table.cc has a formula for `op` (pointwise or reduction). It must agree with
// IsFusible(op), the registry's word (op_table_test.cc checks every op).
bool DefinesFusedOp(OpId op);
// `acc` with `x` folded in.
double ReductionCombine(const Reduction& r, double acc, double x);
// The C++ statement folding `x` into `acc`, and the `#pragma omp simd reduction` operator.
std::string ReductionUpdate(const Reduction& r, std::string_view acc, std::string_view x);
const char* ReductionClause(const Reduction& r);  // "+", "max", "min"

// Formats a double so that it reads back bit-exactly as a float literal in C++ ("1e-06f").
std::string FloatLiteral(double v);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_OP_TABLE_H_
