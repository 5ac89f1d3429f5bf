// The neuron lowering, costed by the device model (model facts, not timings of this machine).
#include "compile/neuron_lowering.h"

#include <gtest/gtest.h>

#include "device/neuron/aten_programs.h"

namespace opscope::compiler {
namespace {

Operand V(int v) { return Operand::Value(v); }

Program RmsNormProgram(int64_t rows, int64_t hidden) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({rows, hidden}, "neuron:0"));
  int w = g.AddInput(TensorType::Contiguous({hidden}, "neuron:0"));
  int ms =
      g.AddOp(OpId::kMean, {V(g.AddOp(OpId::kMul, {V(x), V(x)}))}, {.dims = {-1}, .keepdim = true});
  int r = g.AddOp(OpId::kRsqrt, {V(g.AddOp(OpId::kAdd, {V(ms), Operand::Scalar(1e-6)}))});
  g.SetOutputs({g.AddOp(OpId::kMul, {V(g.AddOp(OpId::kMul, {V(x), V(r)})), V(w)})});
  return PlanProgram(std::move(g), "neuron", "");
}

TEST(NeuronLoweringTest, RmsNormLowersLikeTheHandFusedKernel) {
  neuron::Params params = neuron::Preset("trn1");
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{128, 4096}, {1024, 4096}, {64, 1024}}) {
    neuron::Program compiled = LowerToNeuron(RmsNormProgram(rows, hidden), "compiled");
    neuron::Program fused = neuron::FusedRmsNormProgram(rows, hidden);
    ASSERT_EQ(compiled.ops.size(), 3u);
    EXPECT_EQ(compiled.ops[0].op_class, neuron::OpClass::kRowReduce);
    EXPECT_EQ(compiled.ops[1].engine, neuron::Engine::kScalar);
    EXPECT_EQ(compiled.HbmBytes(), fused.HbmBytes());
    neuron::ProgramCost c = neuron::EstimateProgram(compiled, params);
    neuron::ProgramCost f = neuron::EstimateProgram(fused, params);
    double ratio = static_cast<double>(c.device_ns) / static_cast<double>(f.device_ns);
    EXPECT_NEAR(ratio, 1.0, 0.15) << rows << "x" << hidden << ": compiled " << c.device_ns
                                  << " ns, fused " << f.device_ns << " ns";
  }
}

TEST(NeuronLoweringTest, ExternOpsCannotBeLowered) {
  Graph g;
  int a = g.AddInput(TensorType::Contiguous({4, 4}, "neuron:0"));
  g.SetOutputs(
      {g.AddOpWithType(OpId::kMm, {V(a), V(a)}, {}, TensorType::Contiguous({4, 4}, "neuron:0"))});
  Program p = PlanProgram(std::move(g), "neuron", "");
  try {
    LowerToNeuron(p, "x");
    FAIL() << "expected GraphError";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("aten::mm"), std::string::npos) << e.what();
  }
}

TEST(NeuronLoweringTest, SoftmaxIsOneProgramWithIntermediatesInSbuf) {
  Graph g;
  int x = g.AddInput(TensorType::Contiguous({256, 1024}, "neuron:0"));
  int m = g.AddOp(OpId::kAmax, {V(x)}, {.dims = {-1}, .keepdim = true});
  int e = g.AddOp(OpId::kExp, {V(g.AddOp(OpId::kSub, {V(x), V(m)}))});
  int s = g.AddOp(OpId::kSum, {V(e)}, {.dims = {-1}, .keepdim = true});
  g.SetOutputs({g.AddOp(OpId::kDiv, {V(e), V(s)})});
  neuron::Program p = LowerToNeuron(PlanProgram(std::move(g), "neuron", ""), "softmax");
  EXPECT_EQ(p.HbmBytes(), 2 * 256 * 1024 * 4);  // x in, y out; nothing else touches HBM
  int reductions = 0;
  for (const auto& op : p.ops) reductions += op.op_class == neuron::OpClass::kRowReduce;
  EXPECT_EQ(reductions, 2);
}

}  // namespace
}  // namespace opscope::compiler
