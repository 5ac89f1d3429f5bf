// The Neuron cost model: parameters and their file format, tiling, the list scheduler, and the
// reference story's structure at the demo's default shape (model facts, not timings of this host).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "device/neuron/aten_programs.h"
#include "device/neuron/instruction_graph.h"
#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

TEST(NeuronParams, PresetsDifferWhereTheHardwareDoes) {
  Params trn1 = Preset("trn1");
  Params trn2 = Preset("trn2");
  EXPECT_EQ(trn1.preset, "trn1");
  EXPECT_EQ(trn1.num_cores, 2);
  EXPECT_EQ(trn2.num_cores, 8);
  EXPECT_DOUBLE_EQ(trn1.vector_ghz, 1.12);
  EXPECT_DOUBLE_EQ(trn2.vector_ghz, 0.96);
  EXPECT_GT(trn2.dma_queue_gbps, trn1.dma_queue_gbps);
  EXPECT_THROW(Preset("trn9"), ParamsError);
  try {
    Preset("inf1");
  } catch (const ParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("trn1"), std::string::npos) << e.what();
  }
}

TEST(NeuronParams, OverridesApplyAndRoundTrip) {
  Params p = Preset("trn1");
  ApplyOverrides("# comment\n\nexec_fixed_us = 12.5  # trailing\n  dma_queues=4\n", "t.cfg", &p);
  EXPECT_DOUBLE_EQ(p.exec_fixed_us, 12.5);
  EXPECT_DOUBLE_EQ(p.dma_queues, 4);
  Params q;
  ApplyOverrides(FormatParams(p), "dump", &q);
  EXPECT_EQ(FormatParams(q), FormatParams(p));
  ApplyOverrides("preset = trn2\nvector_ghz = 2\n", "t.cfg", &q);
  EXPECT_EQ(q.preset, "trn2");
  EXPECT_DOUBLE_EQ(q.num_cores, 8);
  EXPECT_DOUBLE_EQ(q.vector_ghz, 2);
}

std::string ErrorOf(const std::string& text) {
  Params p;
  try {
    ApplyOverrides(text, "my.cfg", &p);
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "";
}

TEST(NeuronParams, ErrorsNameTheKeyAndLine) {
  EXPECT_EQ(ErrorOf("vector_ghz = 1\nvectr_ghz = 2\n"),
            "my.cfg:2: unknown key 'vectr_ghz' (see docs/neuron-model.md for the parameters)");
  EXPECT_EQ(ErrorOf("\n\nvector_ghz = fast"),
            "my.cfg:3: value of 'vector_ghz' is not a number: 'fast'");
  EXPECT_EQ(ErrorOf("vector_ghz"), "my.cfg:1: expected 'key = value', got 'vector_ghz'");
  EXPECT_EQ(ErrorOf("dma_queues = 0"), "my.cfg:1: 'dma_queues' must be positive, got 0");
  EXPECT_EQ(ErrorOf("exec_fixed_us = -1"),
            "my.cfg:1: 'exec_fixed_us' must not be negative, got -1");
  EXPECT_NE(ErrorOf("preset = trn7").find("unknown Neuron preset 'trn7'"), std::string::npos);
}

TEST(NeuronParams, FileOverridesAndMissingFile) {
  std::string path = ::testing::TempDir() + "/neuron_params_test.cfg";
  {
    std::ofstream out(path);
    out << "exec_fixed_us = 7\n";
  }
  Params p;
  ApplyOverridesFile(path, &p);
  EXPECT_DOUBLE_EQ(p.exec_fixed_us, 7);
  std::remove(path.c_str());
  try {
    ApplyOverridesFile(path, &p);
    FAIL() << "expected an error";
  } catch (const ParamsError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

TEST(NeuronLowering, TilesOverPartitionsAndFreeDimension) {
  Params p;
  p.dma_queues = 4;
  // [256, 4096] f32: 2 row tiles x 2 column chunks of 2048 (8 KiB per partition).
  Program prog = EagerProgram("aten::neg", {{256, 4096}}, {256, 4096});
  InstructionGraph g;
  g.Lower(prog, p);
  int compute = 0, loads = 0, stores = 0;
  int64_t bytes = 0;
  for (const auto& ins : g.instructions()) {
    if (ins.engine == Engine::kDma) {
      (ins.is_load ? loads : stores)++;
      bytes += ins.bytes;
    } else {
      ++compute;
      EXPECT_EQ(ins.engine, Engine::kVector);
    }
  }
  EXPECT_EQ(compute, 4);
  EXPECT_EQ(loads, 4 * 4);  // each tile's transfer is spread over the 4 queues
  EXPECT_EQ(stores, 4 * 4);
  EXPECT_EQ(bytes, 2 * 256 * 4096 * 4);
  EXPECT_EQ(g.dma_bytes(), bytes);
}

TEST(NeuronLowering, FusedIntermediatesStayInSbuf) {
  Params p;
  InstructionGraph g;
  g.Lower(FusedRmsNormProgram(128, 4096), p);
  // x read once, weight once, y written once; sum_sq and rstd never leave SBUF.
  EXPECT_EQ(g.dma_bytes(), (128 * 4096 + 4096 + 128 * 4096) * 4);
}

TEST(NeuronLowering, BadProgramsAreRejected) {
  Program p("bad");
  int x = p.AddBuffer({"x", 4, 4});
  EXPECT_THROW(p.AddOp({"neg", OpClass::kElementwise, Engine::kVector, {x}, 7}),
               std::invalid_argument);
  EXPECT_THROW(p.AddBuffer({"empty", 0, 4}), std::invalid_argument);
  int s = p.AddBuffer({"scratch", 4, 4, 4, Memory::kSbuf});
  int y = p.AddBuffer({"y", 4, 4});
  p.AddOp({"neg", OpClass::kElementwise, Engine::kVector, {s}, y});
  InstructionGraph g;
  EXPECT_THROW(g.Lower(p, Params()), std::invalid_argument);  // reads SBUF nobody wrote
}

TEST(NeuronScheduler, EnginesRunConcurrentlySubjectToDependencies) {
  Params p;
  p.dma_setup_ns = 0;
  // Two independent ops on different engines overlap; a dependent op waits.
  Program prog("overlap");
  int a = prog.AddBuffer({"a", 128, 2048, 4, Memory::kSbuf});
  int b = prog.AddBuffer({"b", 128, 2048, 4, Memory::kSbuf});
  int c = prog.AddBuffer({"c", 128, 2048, 4, Memory::kSbuf});
  prog.AddOp({"fill", OpClass::kElementwise, Engine::kVector, {}, a});
  prog.AddOp({"fill", OpClass::kElementwise, Engine::kGpSimd, {}, b});
  prog.AddOp({"add", OpClass::kElementwise, Engine::kScalar, {a, b}, c});
  InstructionGraph g;
  g.Lower(prog, p);
  int64_t makespan = g.Schedule(p);
  const auto& ins = g.instructions();
  ASSERT_EQ(ins.size(), 3u);
  EXPECT_EQ(ins[0].start_ns, 0);
  EXPECT_EQ(ins[1].start_ns, 0);  // GpSimdE runs beside VectorE
  EXPECT_EQ(ins[2].start_ns, std::max(ins[0].end_ns, ins[1].end_ns));
  EXPECT_EQ(makespan, ins[2].end_ns);
  // VectorE: 100 cycles at 1.12 GHz + 128 * 2048 FLOP at 2.3 TFLOPS.
  EXPECT_EQ(ins[0].duration_ns, std::llround(100 / 1.12 + 128 * 2048 / 2300.0));
}

TEST(NeuronScheduler, OneEngineRunsOneInstructionAtATime) {
  Params p;
  Program prog = EagerProgram("aten::neg", {{1024, 2048}}, {1024, 2048});
  InstructionGraph g;
  g.Lower(prog, p);
  g.Schedule(p);
  std::vector<std::pair<int64_t, int64_t>> vector_e;
  for (const auto& ins : g.instructions()) {
    if (ins.engine == Engine::kVector) vector_e.emplace_back(ins.start_ns, ins.end_ns);
  }
  std::sort(vector_e.begin(), vector_e.end());
  for (size_t i = 1; i < vector_e.size(); ++i) {
    EXPECT_GE(vector_e[i].first, vector_e[i - 1].second);
  }
  EXPECT_EQ(vector_e.size(), 8u);
}

TEST(NeuronCost, MoreBytesTakeLongerAndFixedCostIsCharged) {
  Params p;
  ProgramCost small = EstimateProgram(EagerProgram("aten::neg", {{128, 512}}, {128, 512}), p);
  ProgramCost big = EstimateProgram(EagerProgram("aten::neg", {{4096, 4096}}, {4096, 4096}), p);
  EXPECT_EQ(small.fixed_ns, 380000);
  EXPECT_GT(big.makespan_ns, 10 * small.makespan_ns);
  ProgramCost first = EstimateProgram(EagerProgram("aten::neg", {{128, 512}}, {128, 512}), p, true);
  EXPECT_EQ(first.device_ns - small.device_ns, 1000000);
  // A DMA-bound op runs near the DMA bandwidth: 16 queues x 17 B/ns.
  const double bytes = 2.0 * 4096 * 4096 * 4;
  EXPECT_GT(double(big.makespan_ns), bytes / (16 * 17));
  EXPECT_LT(double(big.makespan_ns), 1.5 * bytes / (16 * 17));
}

// The reference story at the demo's default shape: naive RMSNorm is six executions with
// aten::mul about half the device time, fused is one execution about one sixth of naive.
TEST(NeuronCost, RmsNormStoryStructureAtDefaultShape) {
  for (const char* preset : {"trn1", "trn2"}) {
    Params p = Preset(preset);
    const Shape2D x{128, 4096}, col{128, 1}, w{1, 4096};
    struct Step {
      const char* op;
      std::vector<Shape2D> in;
      Shape2D out;
    } steps[] = {{"aten::mul", {x, x}, x},    {"aten::mean", {x}, col},   {"aten::add", {col}, col},
                 {"aten::rsqrt", {col}, col}, {"aten::mul", {x, col}, x}, {"aten::mul", {x, w}, x}};
    int64_t naive = 0, mul = 0;
    for (const auto& s : steps) {
      int64_t t = EstimateProgram(EagerProgram(s.op, s.in, s.out), p).device_ns;
      naive += t;
      if (std::string(s.op) == "aten::mul") mul += t;
    }
    int64_t fused = EstimateProgram(FusedRmsNormProgram(128, 4096), p).device_ns;
    SCOPED_TRACE(preset);
    EXPECT_NEAR(double(mul) / naive, 0.5, 0.05);
    EXPECT_NEAR(double(naive) / fused, 6.0, 0.6);
  }
}

}  // namespace
}  // namespace opscope::neuron
