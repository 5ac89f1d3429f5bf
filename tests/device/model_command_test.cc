// `opscope model`: the op and graph programs it costs, the public estimate and configuration it
// runs on, the graph format's errors (each naming the file and line), and the CLI end to end
// (text and --json, read back by a JSON parser).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "device/neuron/device.h"
#include "device/neuron/model_graph.h"
#include "opscope/neuron.h"
#include "tests/analysis/test_support.h"

namespace opscope::neuron {
namespace {

std::string GraphError(const std::string& text) {
  try {
    ParseModelGraph(text, "g.txt", 4);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelGraph, ParsesOpsIntoOneProgram) {
  Program p = ParseModelGraph(
      "# rmsnorm then matmul\ninput x 256,512\ninput w 512,128 bf16\n\nh = rmsnorm x\n"
      "y = mm h w   # trailing comment\nz = mul y 0.5\noutput z\n",
      "g.txt", 4);
  ASSERT_EQ(p.buffers.size(), 7u);  // x, w, h (+ sum_sq, rstd), y, z
  EXPECT_EQ(p.buffers[1].elem_bytes, 2);
  int hbm = 0;
  for (const auto& b : p.buffers) hbm += b.memory == Memory::kHbm ? 1 : 0;
  EXPECT_EQ(hbm, 3);  // x, w and the output; everything else lives in SBUF
  EXPECT_EQ(p.ops.back().name, "tensor_scalar");
  EXPECT_GT(EstimateProgram(p, Preset("trn1")).busy_ns[int(Engine::kTensor)], 0);
  // Row vectors and per-row columns broadcast; a bmm takes batch-first shapes.
  Program q = ParseModelGraph(
      "input x 8,64,32\ninput b 32\ninput r 512,1\ny = add x b\nz = mul x r\ninput k 8,32,16\n"
      "o = bmm x k\noutput y z o\n",
      "g.txt", 4);
  EXPECT_EQ(q.ops.back().batch, 8);
}

TEST(ModelGraph, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(GraphError("input x 4,4\ny = mull x x\noutput y"),
            "g.txt:2: unknown op 'mull' (known: add div max min mul sub copy exp gelu log neg "
            "reciprocal rsqrt sigmoid silu sqrt square tanh sum mean amax rmsnorm layernorm "
            "softmax mm bmm)");
  EXPECT_EQ(GraphError("input x 4,4\ny = add x q\noutput y"), "g.txt:2: 'q' is not defined");
  EXPECT_EQ(GraphError("input x 4,0"),
            "g.txt:1: shape '4,0' must be positive integers separated by commas");
  EXPECT_EQ(GraphError("input x 4,4\ninput x 4,4"), "g.txt:2: 'x' is already defined");
  EXPECT_EQ(GraphError("input a 4,4\ninput b 3,4\ny = add a b\noutput y"),
            "g.txt:3: operand 'b' [3, 4] does not broadcast to [4, 4]");
  EXPECT_EQ(GraphError("input a 4,8\ninput b 4,8\ny = mm a b\noutput y"),
            "g.txt:3: 'mm' needs [M, K] and [K, N], got [4, 8] and [4, 8]");
  EXPECT_EQ(GraphError("input a 4,4\ny = exp a"), "g.txt: the graph has no 'output' line");
  EXPECT_EQ(GraphError("input a 4,4 f16"), "g.txt:1: unknown dtype 'f16' (f32, bf16 or fp8)");
  EXPECT_NE(GraphError("input a 1099511627776,1099511627776").find("at most"), std::string::npos);
  EXPECT_EQ(GraphError("y := exp a"),
            "g.txt:1: expected 'input NAME SHAPE', 'NAME = OP ARGS' or 'output NAME...'");
}

TEST(ModelGraph, OpProgramsAndTheirShapes) {
  for (const auto& op : ModelOpNames()) {
    std::vector<int64_t> shape = {256, 512};
    if (op == "mm") shape = {256, 512, 128};
    if (op == "bmm") shape = {4, 64, 128, 256};
    SCOPED_TRACE(op);
    EXPECT_GT(EstimateProgram(ModelOpProgram(op, shape, 4), Preset("trn1")).device_ns, 0);
    EXPECT_GT(EstimateProgram(ModelOpProgram(op, shape, 2), Preset("trn2")).device_ns, 0);
  }
  EXPECT_THROW(ModelOpProgram("mm", {4, 4}, 4), ModelError);
  EXPECT_THROW(ModelOpProgram("add", {4, 4}, 1), ModelError);  // fp8 is for TensorE
  EXPECT_THROW(ModelOpProgram("conv", {4, 4}, 4), ModelError);
  EXPECT_THROW(ModelOpProgram("add", {1 << 30, 1 << 30}, 4), ModelError);
}

TEST(ModelGraph, FilesAreLimited) {
  const std::string dir = ::testing::TempDir() + "/model_graph_dir";
  std::filesystem::create_directories(dir);
  EXPECT_THROW(ReadModelGraphFile(dir, 4), ModelError);
  EXPECT_THROW(ReadModelGraphFile(dir + "/missing.g", 4), ModelError);
  if (std::filesystem::exists("/dev/zero")) {
    try {
      ReadModelGraphFile("/dev/zero", 4);
      FAIL();
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("larger than"), std::string::npos) << e.what();
    }
  }
}

// Runs `opscope model ARGS`; returns its exit status and its output (stdout and stderr).
int RunCli(const std::string& args, std::string* out) {
  testing::CommandResult r = testing::RunOpscope("model " + args, testing::Stderr::kMerged);
  *out = std::move(r.output);
  return r.exit_code;
}

// The public estimate is the internal cost of the same program, with the configuration's lanes.
TEST(ModelEstimate, IsTheCostOfTheOpsProgram) {
  ModelConfig config = ModelConfig::Preset("trn2");
  config.ApplyOverrides("dma_queues = 8", "inline");
  const ModelEstimate e = EstimateModelOp("rmsnorm", {256, 4096}, "bfloat16", config, true);
  Program p = ModelOpProgram("rmsnorm", {256, 4096}, 2);
  p.eager = true;
  const ProgramCost c = EstimateProgram(p, ParamsOf(config));
  EXPECT_EQ(e.cost.device_ns, c.device_ns);
  EXPECT_EQ(e.cost.phase_ns, c.phase_ns);
  EXPECT_EQ(e.cost.busy_ns, c.busy_ns);
  EXPECT_EQ(e.ops, int64_t(p.ops.size()));
  EXPECT_EQ(e.io_tensors, p.IoTensors());
  EXPECT_EQ(e.dtype, "bf16");
  EXPECT_EQ(e.lanes[size_t(Engine::kDma)], 2 * 8);  // trn2: two physical cores per logical core
  EXPECT_EQ(e.lanes[size_t(Engine::kVector)], 2);
  EXPECT_GT(e.cost.phase_ns[size_t(ExecPhase::kEagerDispatch)], 0);
  EXPECT_THROW(EstimateModelOp("rmsnorm", {4, 4}, "int8", config), ModelError);
  EXPECT_THROW(EstimateModelOp("conv", {4, 4}, "f32", config), ModelError);
}

// A configuration changes only by whole, valid overrides; its values read back by key.
TEST(ModelConfig, OverridesAreCheckedAndAllOrNothing) {
  ModelConfig config;
  EXPECT_EQ(config.preset(), "trn1");
  EXPECT_DOUBLE_EQ(config.Get("dma_queues"), 16);
  config.ApplyOverrides("dma_queues = 4\nexec_launch_us = 3", "a.cfg");
  EXPECT_DOUBLE_EQ(config.Get("dma_queues"), 4);
  EXPECT_THROW(config.ApplyOverrides("exec_launch_us = 5\nnum_cores = 0", "b.cfg"), ParamsError);
  EXPECT_DOUBLE_EQ(config.Get("exec_launch_us"), 3);  // the bad file changed nothing
  EXPECT_THROW(config.Get("no_such_key"), ParamsError);
  EXPECT_THROW(ModelConfig::Preset("trn9"), ParamsError);
  const ModelConfig copy = config;
  config.ApplyOverrides("preset = trn2", "c.cfg");
  EXPECT_EQ(copy.preset(), "trn1");
  EXPECT_DOUBLE_EQ(copy.Get("dma_queues"), 4);
  EXPECT_EQ(config.preset(), "trn2");
  EXPECT_NE(config.Format().find("dma_queues = 16"), std::string::npos) << config.Format();
}

TEST(ModelConfig, ConfiguresTheDefaultDevice) {
  ModelConfig config = ModelConfig::Preset("trn2");
  config.ApplyOverrides("max_inflight_executions = 4", "inline");
  ResetDefaultDevice(config);
  EXPECT_EQ(DefaultDeviceConfig().preset(), "trn2");
  EXPECT_DOUBLE_EQ(DefaultDeviceConfig().Get("max_inflight_executions"), 4);
  EXPECT_EQ(DefaultDevice().num_cores(), 4);  // 8 physical cores, 2 per logical core
  ResetDefaultDevice(ModelConfig::FromEnvironment());
  EXPECT_EQ(DefaultDeviceConfig().preset(), "trn1");
}

TEST(ModelCommand, PrintsDeviceTimeAndTheBreakdown) {
  std::string out;
  ASSERT_EQ(RunCli("rmsnorm --shape 128,4096", &out), 0) << out;
  EXPECT_NE(out.find("device time:"), std::string::npos) << out;
  EXPECT_NE(out.find("VectorE"), std::string::npos) << out;
  ASSERT_EQ(RunCli("rmsnorm --shape 128,4096 --eager --json", &out), 0) << out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS) << out;
  double device_us = 0, dispatch = 0, busy = 0;
  ASSERT_EQ(doc["device_us"].get(device_us), simdjson::SUCCESS);
  ASSERT_EQ(doc["phases_us"]["eager_dispatch"].get(dispatch), simdjson::SUCCESS);
  ASSERT_EQ(doc["breakdown"]["ScalarE"]["busy_us"].get(busy), simdjson::SUCCESS);
  EXPECT_GT(device_us, dispatch);
  EXPECT_GT(busy, 0);
  const std::string graph = ::testing::TempDir() + "/model_command_test.g";
  {
    std::ofstream g(graph);
    g << "input x 512,1024\ninput w 1024,256\nh = rmsnorm x\ny = mm h w\noutput y\n";
  }
  ASSERT_EQ(RunCli("--graph " + graph + " --preset trn2 --dtype bf16 --json", &out), 0) << out;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS) << out;
  std::string_view preset;
  ASSERT_EQ(doc["preset"].get(preset), simdjson::SUCCESS);
  EXPECT_EQ(preset, "trn2");
  EXPECT_EQ(RunCli("mm --shape 4,4", &out), 1);
  EXPECT_NE(out.find("--shape takes M,K,N"), std::string::npos) << out;
  EXPECT_EQ(RunCli("add", &out), 1);
  EXPECT_NE(out.find("OP needs --shape"), std::string::npos) << out;
}

}  // namespace
}  // namespace opscope::neuron
