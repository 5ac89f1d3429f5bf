// The IR, the passes, the fusion predicate and the memory planner, on graphs built directly.
#include "compile/fusion.h"

#include <gtest/gtest.h>

#include "compile/graph.h"
#include "compile/memory_plan.h"
#include "compile/passes.h"

namespace opscope::compiler {
namespace {

Operand V(int v) { return Operand::Value(v); }
Operand S(double s) { return Operand::Scalar(s); }

// x * rsqrt(mean(x * x, -1, keepdim) + eps) * w
Graph RmsNormGraph(int64_t rows, int64_t hidden) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({rows, hidden}));
  int w = g.AddInput(TensorType::Contiguous({hidden}));
  int sq = g.AddOp(OpId::kMul, {V(x), V(x)});
  int ms = g.AddOp(OpId::kMean, {V(sq)}, {.dims = {-1}, .keepdim = true});
  int e = g.AddOp(OpId::kAdd, {V(ms), S(1e-6)});
  int r = g.AddOp(OpId::kRsqrt, {V(e)});
  int xr = g.AddOp(OpId::kMul, {V(x), V(r)});
  int y = g.AddOp(OpId::kMul, {V(xr), V(w)});
  g.SetOutputs({y});
  return g;
}

TEST(GraphTest, InfersBroadcastAndReducedShapes) {
  Graph g;
  int a = g.AddInput(TensorType::Contiguous({4, 1, 8}));
  int b = g.AddInput(TensorType::Contiguous({3, 1}));
  int c = g.AddOp(OpId::kAdd, {V(a), V(b)});
  EXPECT_EQ(g.node(c).type.sizes, (std::vector<int64_t>{4, 3, 8}));
  int s = g.AddOp(OpId::kSum, {V(c)}, {.dims = {0, -1}, .keepdim = false});
  EXPECT_EQ(g.node(s).type.sizes, (std::vector<int64_t>{3}));
  int k = g.AddOp(OpId::kAmax, {V(c)}, {.dims = {1}, .keepdim = true});
  EXPECT_EQ(g.node(k).type.sizes, (std::vector<int64_t>{4, 1, 8}));
  Graph bad;
  int p = bad.AddInput(TensorType::Contiguous({3}));
  int q = bad.AddInput(TensorType::Contiguous({4}));
  EXPECT_THROW(bad.AddOp(OpId::kMul, {V(p), V(q)}), GraphError);
  EXPECT_THROW(bad.AddOp(OpId::kSum, {V(p)}, {.dims = {2}}), GraphError);
}

TEST(GraphTest, PrintsStablyAndHashDependsOnShapes) {
  std::string a = RmsNormGraph(4, 8).ToString();
  EXPECT_EQ(a, RmsNormGraph(4, 8).ToString());
  EXPECT_NE(a, RmsNormGraph(4, 16).ToString());
  EXPECT_NE(a.find("aten::mean(%2, dims=[-1], keepdim=1)"), std::string::npos) << a;
  EXPECT_NE(StableHash(a), StableHash(RmsNormGraph(4, 16).ToString()));
  EXPECT_EQ(HexHash(0x1234).size(), 16u);
}

TEST(PassesTest, DeadCodeIsRemovedAndInputsKept) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({4}));
  int unused_in = g.AddInput(TensorType::Contiguous({4}));
  g.AddOp(OpId::kExp, {V(x)});  // dead
  int y = g.AddOp(OpId::kNeg, {V(x)});
  g.SetOutputs({y});
  EXPECT_EQ(EliminateDeadCode(g), 1);
  EXPECT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.num_inputs(), 2);
  EXPECT_TRUE(g.node(unused_in).is_input());
  EXPECT_EQ(g.node(g.outputs()[0]).op, OpId::kNeg);
}

TEST(PassesTest, CommonSubexpressionsMerge) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({4}));
  int a = g.AddOp(OpId::kExp, {V(x)});
  int b = g.AddOp(OpId::kExp, {V(x)});
  int c = g.AddOp(OpId::kAdd, {V(a), V(b)});
  int d = g.AddOp(OpId::kAdd, {V(a), V(b)}, {.alpha = 2});  // different alpha: kept
  g.SetOutputs({c, d});
  EXPECT_EQ(EliminateCommonSubexpressions(g), 1);
  int exps = 0;
  for (const Node& n : g.nodes()) exps += n.is_op() && n.op == OpId::kExp;
  EXPECT_EQ(exps, 1);
  const Node& add = g.node(g.outputs()[0]);
  EXPECT_EQ(add.operands[0].value, add.operands[1].value);
  EXPECT_NE(g.outputs()[0], g.outputs()[1]);
}

TEST(PassesTest, ConstantsFoldAndIdentitiesVanish) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({2, 4}));
  int two = g.AddConstant(2.0, {});
  int three = g.AddConstant(3.0, {});
  int six = g.AddOp(OpId::kMul, {V(two), V(three)});          // folds to 6
  int one = g.AddOp(OpId::kDiv, {V(six), S(6.0)});            // folds to 1
  int y = g.AddOp(OpId::kMul, {V(x), V(one)});                // x * 1 -> x
  int z = g.AddOp(OpId::kAdd, {V(y), V(six)});                // 6 inlined as a scalar
  int s = g.AddOp(OpId::kSum, {V(g.AddConstant(0.5, {4}))});  // folds to 2
  int out = g.AddOp(OpId::kMul, {V(z), V(s)});
  g.SetOutputs({out});
  PassStats stats = RunPasses(g);
  EXPECT_GT(stats.folded, 0);
  // Left: x, the add with inline 6, the mul with inline 2 (and the unused constants are gone).
  std::string text = g.ToString();
  EXPECT_EQ(g.nodes().size(), 3u) << text;
  EXPECT_NE(text.find("aten::add(%0, 6)"), std::string::npos) << text;
  EXPECT_NE(text.find("aten::mul(%1, 2)"), std::string::npos) << text;
}

TEST(FusionTest, RmsNormIsOneKernelWithNoMaterializedIntermediates) {
  Graph g = RmsNormGraph(16, 32);
  RunPasses(g);
  FusionPlan plan = PlanFusion(g);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.ToString(g);
  const FusedKernel& k = plan.kernels[0];
  EXPECT_EQ(k.domain, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(k.reduce_dims, (std::vector<int>{1}));
  EXPECT_EQ(k.inputs.size(), 2u);
  EXPECT_EQ(k.outputs.size(), 1u);
  MemoryPlan mp = PlanMemory(g, plan);
  EXPECT_TRUE(mp.slot_bytes.empty());
  EXPECT_EQ(mp.fused_away, 5);  // x*x, mean, +eps, rsqrt, x*r
  EXPECT_EQ(mp.materialized_bytes, 16 * 32 * 4);
  EXPECT_EQ(mp.eager_bytes, 3 * 16 * 32 * 4 + 3 * 16 * 4);  // x*x, x*r, y + three [16, 1]
}

TEST(FusionTest, PredicateRejectsWhatOneLoopNestCannotDo) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({8, 8}));
  int rowsum = g.AddOp(OpId::kSum, {V(x)}, {.dims = {1}, .keepdim = true});
  int colsum = g.AddOp(OpId::kSum, {V(x)}, {.dims = {0}, .keepdim = true});
  int squeezed = g.AddOp(OpId::kSum, {V(x)}, {.dims = {1}, .keepdim = false});
  int use_sq = g.AddOp(OpId::kExp, {V(squeezed)});
  int bcast = g.AddInput(TensorType::Contiguous({8, 1}));
  int over_bcast = g.AddOp(OpId::kSum, {V(bcast)}, {.dims = {1}, .keepdim = true});
  g.SetOutputs({rowsum, colsum, use_sq, over_bcast});

  FusedKernel k = SingleNodeKernel(g, rowsum);
  FusionDecision d = CanFuse(g, k, colsum);
  EXPECT_FALSE(d.legal);
  EXPECT_EQ(d.reason.substr(0, 2), "L4") << d.reason;
  EXPECT_TRUE(CanFuse(g, k, squeezed).legal);

  FusedKernel k2 = SingleNodeKernel(g, squeezed);
  d = CanFuse(g, k2, use_sq);
  EXPECT_FALSE(d.legal);
  EXPECT_EQ(d.reason.substr(0, 2), "L5") << d.reason;

  // Reducing dim 1 of an [8, 1] value inside a [8, 8] domain would sum a broadcast.
  d = CanFuse(g, k, over_bcast);
  EXPECT_FALSE(d.legal);
  EXPECT_EQ(d.reason.substr(0, 2), "L4") << d.reason;

  FusionPlan plan = PlanFusion(g);
  EXPECT_GE(plan.kernels.size(), 3u) << plan.ToString(g);
}

TEST(FusionTest, ExternOpsSplitKernelsAndSlotsAreReused) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({4, 4}));
  int a = g.AddOp(OpId::kExp, {V(x)});
  int m1 = g.AddOpWithType(OpId::kMm, {V(a), V(a)}, {}, TensorType::Contiguous({4, 4}));
  int b = g.AddOp(OpId::kNeg, {V(m1)});
  int m2 = g.AddOpWithType(OpId::kMm, {V(b), V(b)}, {}, TensorType::Contiguous({4, 4}));
  int c = g.AddOp(OpId::kRelu, {V(m2)});
  g.SetOutputs({c});
  FusionPlan plan = PlanFusion(g);
  ASSERT_EQ(plan.steps.size(), 5u) << plan.ToString(g);
  EXPECT_EQ(plan.steps[1].kind, Step::kExtern);
  MemoryPlan mp = PlanMemory(g, plan);
  // exp and neg outputs cross steps; exp's slot is free once the first mm ran.
  EXPECT_EQ(mp.values[a].storage, MemoryPlan::kSlot);
  EXPECT_EQ(mp.values[b].storage, MemoryPlan::kSlot);
  EXPECT_EQ(mp.values[a].slot, mp.values[b].slot) << mp.ToString();
  EXPECT_EQ(mp.values[m1].storage, MemoryPlan::kExtern);
  EXPECT_EQ(mp.values[c].storage, MemoryPlan::kOutput);
}

}  // namespace
}  // namespace opscope::compiler
