// compile()'s op table and capture against the registry: the ops it computes are exactly the ones
// the registry says it fuses, the ops capture decomposes are exactly its kDecomposed rows, and
// its evaluators agree with its generated expressions' meaning.
#include "compile/op_table.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compile/capture.h"

namespace opscope::compiler {
namespace {

TEST(OpTableTest, ComputesExactlyTheOpsTheRegistryFuses) {
  for (int i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<OpId>(i);
    EXPECT_EQ(DefinesFusedOp(op), IsFusible(op)) << OpName(op);
    if (IsPointwise(op)) {
      const int arity = GetOpInfo(op).arity;
      EXPECT_TRUE(arity == 1 || arity == 2) << OpName(op);
      EXPECT_NO_THROW(PointwiseExpr(op, {"a", "b"}, 1.0)) << OpName(op);
    } else {
      EXPECT_THROW(PointwiseExpr(op, {"a", "b"}, 1.0), std::invalid_argument) << OpName(op);
      EXPECT_THROW(EvalPointwise(op, 1, 2, 1), std::invalid_argument) << OpName(op);
    }
    EXPECT_EQ(HasDecomposition(op), GetOpInfo(op).fusion == FusionClass::kDecomposed) << OpName(op);
    if (IsReduction(op)) {
      EXPECT_EQ(GetOpInfo(op).arity, 1) << OpName(op);
    } else {
      EXPECT_THROW(ReductionOf(op), std::invalid_argument) << OpName(op);
    }
  }
}

TEST(OpTableTest, EvaluatesAsATenDefines) {
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kAdd, 1, 2, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kSub, 1, 2, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kMaximum, -1, 2, 1), 2.0);
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kMinimum, -1, 2, 1), -1.0);
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kRelu, -3, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(EvalPointwise(OpId::kReciprocal, 4, 0, 1), 0.25);
  EXPECT_NEAR(EvalPointwise(OpId::kSigmoid, 0, 0, 1), 0.5, 1e-15);
  EXPECT_NEAR(EvalPointwise(OpId::kGelu, 1, 0, 1), 0.8413447460685429, 1e-12);
  EXPECT_EQ(PointwiseExpr(OpId::kAdd, {"x", "y"}, 2.0), "(x + ((2.0f) * y))");
  EXPECT_EQ(PointwiseExpr(OpId::kPow, {"x", "(2.0f)"}, 1.0), "(x * x)");
  const Reduction mean = ReductionOf(OpId::kMean);
  EXPECT_TRUE(mean.mean);
  EXPECT_EQ(mean.combine, Reduction::kSum);
  const Reduction amin = ReductionOf(OpId::kAmin);
  EXPECT_EQ(amin.init, INFINITY);
  EXPECT_EQ(ReductionCombine(amin, 3, -2), -2);
  EXPECT_STREQ(ReductionClause(ReductionOf(OpId::kAmax)), "max");
  EXPECT_EQ(ReductionUpdate(ReductionOf(OpId::kSum), "acc", "v"), "acc += v;");
}

}  // namespace
}  // namespace opscope::compiler
