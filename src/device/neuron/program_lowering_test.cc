// Lowering compiled graphs to Neuron programs, costed by the device model (model facts, not
// timings of this machine). The graphs are built as compile() describes its fused kernels.
#include "device/neuron/program_lowering.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "device/neuron/aten_programs.h"

namespace opscope::neuron {
namespace {

using Kind = ProgramGraph::Value::Kind;

int Add(ProgramGraph& g, Kind kind, OpId op, std::vector<int> operands,
        std::vector<int64_t> sizes) {
  g.values.push_back({kind, op, std::move(operands), std::move(sizes), false});
  return static_cast<int>(g.values.size()) - 1;
}
int Input(ProgramGraph& g, std::vector<int64_t> sizes) {
  return Add(g, Kind::kInput, OpId::kAdd, {}, std::move(sizes));
}
int Op(ProgramGraph& g, OpId op, std::vector<int> operands, std::vector<int64_t> sizes) {
  return Add(g, Kind::kOp, op, std::move(operands), std::move(sizes));
}

// x * rsqrt(mean(x * x, -1) + eps) * w as one kernel: the reduction and what follows from it
// per row are row values.
ProgramGraph RmsNormGraph(int64_t rows, int64_t hidden) {
  ProgramGraph g;
  int x = Input(g, {rows, hidden});
  int w = Input(g, {hidden});
  int sq = Op(g, OpId::kMul, {x, x}, {rows, hidden});
  int ms = Op(g, OpId::kMean, {sq}, {rows, 1});
  int e = Op(g, OpId::kAdd, {ms}, {rows, 1});  // + eps (a scalar operand)
  int r = Op(g, OpId::kRsqrt, {e}, {rows, 1});
  int xr = Op(g, OpId::kMul, {x, r}, {rows, hidden});
  int y = Op(g, OpId::kMul, {xr, w}, {rows, hidden});
  g.values[y].output = true;
  g.kernels.push_back({{rows, hidden}, {1}, {sq, ms, e, r, xr, y}, {ms, e, r}, {y}});
  return g;
}

TEST(ProgramLoweringTest, RmsNormLowersLikeTheHandFusedKernel) {
  Params params = Preset("trn1");
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{128, 4096}, {1024, 4096}, {64, 1024}}) {
    Program compiled = LowerProgramGraph(RmsNormGraph(rows, hidden), "compiled");
    Program fused = FusedRmsNormProgram(rows, hidden);
    ASSERT_EQ(compiled.ops.size(), 3u);
    EXPECT_EQ(compiled.ops[0].op_class, OpClass::kRowReduce);
    EXPECT_EQ(compiled.ops[1].engine, Engine::kScalar);
    EXPECT_EQ(compiled.HbmBytes(), fused.HbmBytes());
    ProgramCost c = EstimateProgram(compiled, params);
    ProgramCost f = EstimateProgram(fused, params);
    double ratio = static_cast<double>(c.device_ns) / static_cast<double>(f.device_ns);
    EXPECT_NEAR(ratio, 1.0, 0.15) << rows << "x" << hidden << ": compiled " << c.device_ns
                                  << " ns, fused " << f.device_ns << " ns";
  }
}

TEST(ProgramLoweringTest, SoftmaxIsOneProgramWithIntermediatesInSbuf) {
  ProgramGraph g;
  int x = Input(g, {256, 1024});
  int m = Op(g, OpId::kAmax, {x}, {256, 1});
  int d = Op(g, OpId::kSub, {x, m}, {256, 1024});
  int e = Op(g, OpId::kExp, {d}, {256, 1024});
  int s = Op(g, OpId::kSum, {e}, {256, 1});
  int y = Op(g, OpId::kDiv, {e, s}, {256, 1024});
  g.values[y].output = true;
  g.kernels.push_back({{256, 1024}, {1}, {m, d, e, s, y}, {m, s}, {y}});
  Program p = LowerProgramGraph(g, "softmax");
  EXPECT_EQ(p.name, "softmax");
  EXPECT_EQ(p.HbmBytes(), 2 * 256 * 1024 * 4);  // x in, y out; nothing else touches HBM
  int reductions = 0;
  for (const auto& op : p.ops) reductions += op.op_class == OpClass::kRowReduce;
  EXPECT_EQ(reductions, 2);
}

TEST(ProgramLoweringTest, RefusesWhatIsNotAPointwiseOpOrReduction) {
  ProgramGraph g;
  int a = Input(g, {4, 4});
  int mm = Op(g, OpId::kMm, {a, a}, {4, 4});
  g.values[mm].output = true;
  g.kernels.push_back({{4, 4}, {}, {mm}, {}, {mm}});
  try {
    LowerProgramGraph(g, "x");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("aten::mm"), std::string::npos) << e.what();
  }
  ProgramGraph forward;
  Input(forward, {4});
  Op(forward, OpId::kNeg, {2}, {4});  // reads a value defined later
  Op(forward, OpId::kNeg, {0}, {4});
  EXPECT_THROW(LowerProgramGraph(forward, "x"), std::invalid_argument);
}

}  // namespace
}  // namespace opscope::neuron
