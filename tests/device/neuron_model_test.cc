// The Neuron cost model's mechanisms: the NKI cost model of one instruction, DMA pieces per
// partition group with pipelined setup, tiling, SBUF residency with capacity and spills, PSUM
// banks, matmul operands from SBUF intermediates, trn2's logical core, the execution's phases,
// and the reference story's structure (model facts, not timings of this host).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "device/neuron/aten_programs.h"
#include "device/neuron/device.h"
#include "device/neuron/engine_model.h"
#include "device/neuron/instruction_graph.h"
#include "device/neuron/model_graph.h"
#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

TEST(NeuronEngineModel, VectorEngineFollowsTheNkiCostModel) {
  Params p = Preset("trn1");
  // One input tile of N elements per partition: ~N cycles; two: ~2N; at 1.12 GHz.
  ComputeTime one = VectorClassTime(Engine::kVector, {2048, 1, 4, 1, false}, p);
  ComputeTime two = VectorClassTime(Engine::kVector, {2048, 2, 4, 1, false}, p);
  EXPECT_EQ(one.occupancy_ns, std::llround(2048 / 1.12));
  EXPECT_EQ(two.occupancy_ns, std::llround(4096 / 1.12));
  // The static overhead: a dependent instruction waits for it, a tiny one costs at least it.
  EXPECT_EQ(one.ready_ns, std::llround((2048 + 100) / 1.12));
  EXPECT_EQ(VectorClassTime(Engine::kVector, {8, 1, 4, 1, false}, p).occupancy_ns,
            std::llround(100 / 1.12));
  // ScalarE: 128 lanes at 1.4 GHz, one tensor per instruction.
  EXPECT_EQ(VectorClassTime(Engine::kScalar, {2048, 1, 4, 1, false}, p).occupancy_ns,
            std::llround(2048 / 1.4));
  // trn2: 256 32-bit elements per cycle; BF16 one-input 4x of trn1 per cycle, two-input 2x.
  Params q = Preset("trn2");
  EXPECT_EQ(VectorClassTime(Engine::kVector, {2048, 1, 4, 1, false}, q).occupancy_ns,
            std::llround(1024 / 0.96));
  EXPECT_EQ(VectorClassTime(Engine::kVector, {2048, 1, 2, 1, false}, q).occupancy_ns,
            std::llround(512 / 0.96));
  EXPECT_EQ(VectorClassTime(Engine::kVector, {2048, 2, 2, 1, false}, q).occupancy_ns,
            std::llround(2048 / 0.96));
  // PSUM-sourced 16-bit copies get the 2x mode, not 4x.
  EXPECT_EQ(VectorClassTime(Engine::kVector, {2048, 1, 2, 1, true}, q).occupancy_ns,
            std::llround(1024 / 0.96));
}

TEST(NeuronEngineModel, TensorEngineAndDmaCosts) {
  Params p = Preset("trn1");
  // max(N, 64) cycles per matmul instruction for BF16, 4x for FP32, at 2.8 GHz.
  EXPECT_EQ(TensorTimeNs(1, 512, 2, false, p), std::llround(512 / 2.8));
  EXPECT_EQ(TensorTimeNs(8, 512, 4, false, p), std::llround(8 * 512 * 4 / 2.8));
  EXPECT_EQ(TensorTimeNs(1, 16, 2, false, p), std::llround(64 / 2.8));
  EXPECT_EQ(TensorTimeNs(1, 512, 1, false, Preset("trn2")), std::llround(256 / 2.4));
  // DMA: bytes at 17 B/ns per queue plus a descriptor per contiguous chunk.
  EXPECT_EQ(DmaDataNs(17000, 0, p), 1000);
  EXPECT_EQ(DmaDataNs(17000, 10, p), 1000 + 10 * 30);
  // Each queue serves 8 partitions: 128 rows over 16 queues, 4 rows on one.
  EXPECT_EQ(SplitTransfer(128, p).pieces, 16);
  EXPECT_EQ(SplitTransfer(128, p).rows_per_piece, 8);
  EXPECT_EQ(SplitTransfer(4, p).pieces, 1);
  EXPECT_EQ(SplitTransfer(64, p).pieces, 8);
}

TEST(NeuronLowering, TilesAndDmaPiecesPerPartitionGroup) {
  Params p = Preset("trn1");
  // [256, 4096] f32: 2 row tiles x 2 column tiles of 2048 (8 KiB per partition).
  Program prog = EagerProgram("aten::neg", {{256, 4096}}, {256, 4096});
  InstructionGraph g;
  g.Lower(prog, p);
  int compute = 0, loads = 0, stores = 0;
  int64_t bytes = 0;
  for (const auto& ins : g.instructions()) {
    if (ins.engine == Engine::kDma) {
      (ins.is_load ? loads : stores)++;
      bytes += ins.bytes;
      EXPECT_EQ(ins.chunks, 8);  // one contiguous chunk per partition row
    } else {
      ++compute;
    }
  }
  EXPECT_EQ(compute, 4);
  EXPECT_EQ(loads, 4 * 16);
  EXPECT_EQ(stores, 4 * 16);
  EXPECT_EQ(bytes, 2 * 256 * 4096 * 4);
  EXPECT_EQ(g.dma_bytes(), bytes);
}

TEST(NeuronLowering, FusedIntermediatesStayInSbuf) {
  InstructionGraph g;
  g.Lower(FusedRmsNormProgram(128, 4096), Preset("trn1"));
  // x read once, weight once, y written once; sum_sq and rstd never leave SBUF.
  EXPECT_EQ(g.dma_bytes(), (128 * 4096 + 4096 + 128 * 4096) * 4);
  EXPECT_EQ(g.spill_bytes(), 0);
}

TEST(NeuronLowering, BadProgramsAreRejected) {
  Program p("bad");
  int x = p.AddBuffer({"x", 4, 4});
  EXPECT_THROW(p.AddOp({"neg", OpClass::kElementwise, Engine::kVector, {x}, 7}),
               std::invalid_argument);
  EXPECT_THROW(p.AddBuffer({"empty", 0, 4}), std::invalid_argument);
  EXPECT_THROW(p.AddBuffer({"odd", 4, 4, 3}), std::invalid_argument);
  int s = p.AddBuffer({"scratch", 4, 4, 4, Memory::kSbuf});
  int y = p.AddBuffer({"y", 4, 4});
  EXPECT_THROW(p.AddOp({"mm", OpClass::kMatmul, Engine::kTensor, {x, y}, s, 1, 0, 3}),
               std::invalid_argument);  // batch 3 does not divide 4 rows
  p.AddOp({"neg", OpClass::kElementwise, Engine::kVector, {s}, y});
  InstructionGraph g;
  EXPECT_THROW(g.Lower(p, Params()), std::invalid_argument);  // reads SBUF nobody wrote
  // A program too large to model is an error, not minutes of work.
  EXPECT_THROW(EstimateProgram(EagerProgram("aten::neg", {{1 << 22, 1 << 20}}, {1 << 22, 1 << 20}),
                               Params()),
               std::invalid_argument);
}

// SBUF capacity is per tile: with less SBUF, a program that reuses its input reloads some tiles
// (the cost grows with the shortfall), instead of everything at once past a threshold.
TEST(NeuronLowering, SbufResidencyDegradesGraduallyAndSpills) {
  Params p = Preset("trn1");
  // softmax keeps exp(x - max) in SBUF for its row sum and divide: no spill with 24 MiB.
  ProgramCost roomy = EstimateProgram(SoftmaxProgram(1024, 16384), p);
  EXPECT_EQ(roomy.spill_bytes, 0);
  p.sbuf_bytes = 128.0 * 96 * 1024;  // 96 KiB per partition: a row tile's intermediate no longer
                                     // fits beside its input
  ProgramCost tight = EstimateProgram(SoftmaxProgram(1024, 16384), p);
  EXPECT_GT(tight.spill_bytes, 0);
  EXPECT_GT(tight.dma_bytes, roomy.dma_bytes);
  // The fused RMSNorm's cost per row is smooth across the old all-or-nothing threshold.
  Params q = Preset("trn1");
  auto per_row = [&](int64_t rows) {
    return double(EstimateProgram(FusedRmsNormProgram(rows, 4096), q).makespan_ns) / rows;
  };
  EXPECT_NEAR(per_row(768) / per_row(640), 1.0, 0.05);
  EXPECT_NEAR(per_row(1024) / per_row(512), 1.0, 0.05);
}

TEST(NeuronLowering, MatmulConsumesAnSbufIntermediateInOneProgram) {
  // RMSNorm then matmul: the normalized rows go from ScalarE/VectorE through TensorE transposes
  // straight into the matmul, one program, nothing but x, w and y crossing HBM.
  Program p = ParseModelGraph(
      "input x 512,1024\ninput w 1024,512\nh = rmsnorm x\ny = mm h w\noutput y\n", "g", 4);
  ProgramCost c = EstimateProgram(p, Preset("trn1"));
  EXPECT_EQ(c.dma_bytes, (512 * 1024 + 1024 * 512 + 512 * 512) * 4);
  EXPECT_GT(c.busy_ns[int(Engine::kTensor)], 0);
  EXPECT_GT(c.busy_ns[int(Engine::kScalar)], 0);
  // FP32 costs TensorE 4x BF16.
  ProgramCost f32 = EstimateProgram(MatmulProgram("aten::mm", 1, 1024, 1024, 1024, 4), Params());
  ProgramCost bf16 = EstimateProgram(MatmulProgram("aten::mm", 1, 1024, 1024, 1024, 2), Params());
  EXPECT_NEAR(double(f32.busy_ns[int(Engine::kTensor)]) / bf16.busy_ns[int(Engine::kTensor)], 4.0,
              0.3);
}

TEST(NeuronLowering, PsumBanksLimitMatmulGroupsInFlight) {
  Params p = Preset("trn1");
  Program mm = MatmulProgram("aten::mm", 1, 128, 128, 8192, 2);
  ProgramCost many = EstimateProgram(mm, p);
  p.psum_banks = 1;  // every group waits for the previous one's eviction
  ProgramCost one = EstimateProgram(mm, p);
  EXPECT_GT(one.makespan_ns, many.makespan_ns);
}

TEST(NeuronLowering, Trn2LogicalCoreSpreadsRowTilesOverTwoPhysicalCores) {
  Params p = Preset("trn2");
  Program prog = EagerProgram("aten::mul", {{4096, 4096}, {4096, 4096}}, {4096, 4096});
  InstructionGraph g;
  g.Lower(prog, p);
  EXPECT_EQ(g.physical_cores(), 2);
  int on_second = 0;
  for (const auto& ins : g.instructions()) on_second += ins.pcore == 1 ? 1 : 0;
  EXPECT_EQ(on_second * 2, int(g.instructions().size()));
  const int64_t lnc2 = g.Schedule(p);
  p.logical_core_size = 1;
  const int64_t lnc1 = EstimateProgram(prog, p).makespan_ns;
  EXPECT_NEAR(double(lnc1) / lnc2, 2.0, 0.2);  // DMA-bound: twice the queues and HBM share
}

TEST(NeuronScheduler, EnginesRunConcurrentlyAndPickTheFreeEngine) {
  Params p = Preset("trn1");
  Program prog("overlap");
  int a = prog.AddBuffer({"a", 128, 2048, 4, Memory::kSbuf});
  int b = prog.AddBuffer({"b", 128, 2048, 4, Memory::kSbuf});
  int c = prog.AddBuffer({"c", 128, 2048, 4, Memory::kSbuf});
  int d = prog.AddBuffer({"d", 128, 2048, 4, Memory::kSbuf});
  prog.AddOp({"fill", OpClass::kElementwise, Engine::kVector, {}, a});
  prog.AddOp({"fill", OpClass::kElementwise, Engine::kScalar, {}, b});
  // May run on VectorE or ScalarE: both are busy for the same time, so it takes the one that
  // finishes it first, and then a dependent op waits for both inputs.
  prog.AddOp({"tensor_scalar",
              OpClass::kElementwise,
              Engine::kVector,
              {a},
              c,
              1,
              EngineBit(Engine::kVector) | EngineBit(Engine::kScalar)});
  prog.AddOp({"tensor_tensor", OpClass::kElementwise, Engine::kVector, {b, c}, d});
  InstructionGraph g;
  g.Lower(prog, p);
  const int64_t makespan = g.Schedule(p);
  const auto& ins = g.instructions();
  ASSERT_EQ(ins.size(), 4u);
  EXPECT_EQ(ins[0].start_ns, 0);
  EXPECT_EQ(ins[1].start_ns, 0);  // ScalarE runs beside VectorE
  EXPECT_EQ(ins[2].start_ns, ins[0].ready_ns);
  EXPECT_EQ(ins[3].start_ns, std::max(ins[1].ready_ns, ins[2].ready_ns));
  EXPECT_EQ(makespan, ins[3].ready_ns);
}

TEST(NeuronScheduler, DmaSetupIsPipelinedAndSmallTransfersAreLatencyBound) {
  Params p = Preset("trn1");
  // A large copy streams near the DMA guide's 272 GB/s per core (less the descriptor cost).
  Program big = EagerProgram("aten::copy_", {{8192, 8192}}, {8192, 8192});
  ProgramCost c = EstimateProgram(big, p);
  const double gbps = double(c.dma_bytes) / double(c.makespan_ns);
  EXPECT_GT(gbps, 230);
  EXPECT_LT(gbps, 272);
  // With one transfer in flight per queue, the 1.3 us setup is exposed on every piece.
  p.dma_inflight = 1;
  EXPECT_LT(double(EstimateProgram(big, p).dma_bytes) / double(EstimateProgram(big, p).makespan_ns),
            gbps * 0.9);
  // Rows of 256 B: descriptor-bound, far below peak.
  ProgramCost narrow =
      EstimateProgram(EagerProgram("aten::copy_", {{65536, 64}}, {65536, 64}), Preset("trn1"));
  EXPECT_LT(double(narrow.dma_bytes) / double(narrow.makespan_ns), 0.5 * gbps);
}

TEST(NeuronPhases, SteadyStateEagerPathAndProgramSwitch) {
  Params p = Preset("trn1");
  Program prog = EagerProgram("aten::add", {{128, 200}, {128, 200}}, {128, 200});
  ProgramCost steady = EstimateProgram(prog, p);
  EXPECT_EQ(steady.phase_ns[int(ExecPhase::kLaunch)], 12000);
  EXPECT_EQ(steady.phase_ns[int(ExecPhase::kTensorBind)], 0);
  EXPECT_EQ(steady.phase_ns[int(ExecPhase::kEagerDispatch)], 0);
  EXPECT_GT(steady.device_ns, 15000);  // a whole small kernel in tens of us
  EXPECT_LT(steady.device_ns, 25000);
  prog.eager = true;
  ProgramCost eager = EstimateProgram(prog, p);
  EXPECT_EQ(eager.phase_ns[int(ExecPhase::kTensorBind)], 3000);  // three I/O tensors
  EXPECT_EQ(eager.phase_ns[int(ExecPhase::kEagerDispatch)], 361000);
  ProgramCost switched = EstimateProgram(prog, p, {.program_switch = true});
  EXPECT_EQ(switched.device_ns - eager.device_ns, 10000);
  ProgramCost first = EstimateProgram(prog, p, {.first_execution = true});
  EXPECT_EQ(first.device_ns - eager.device_ns, 1000000);
  int64_t sum = 0;
  for (int64_t v : switched.phase_ns) sum += v;
  EXPECT_EQ(sum, switched.device_ns);
}

// The reference story at the demo's default shape, from the mechanisms: six different eager
// programs in turn (each a program switch) against one fused program executed repeatedly.
TEST(NeuronPhases, RmsNormStoryStructureAtDefaultShape) {
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
      Program prog = EagerProgram(s.op, s.in, s.out);
      prog.eager = true;
      int64_t t = EstimateProgram(prog, p, {.program_switch = true}).device_ns;
      naive += t;
      if (std::string(s.op) == "aten::mul") mul += t;
    }
    Program fused = FusedRmsNormProgram(128, 4096);
    fused.eager = true;
    int64_t f = EstimateProgram(fused, p).device_ns;
    SCOPED_TRACE(preset);
    EXPECT_GT(double(mul) / naive, 0.40);
    EXPECT_LT(double(mul) / naive, 0.60);
    EXPECT_GT(double(naive) / f, 4.0);
    EXPECT_LT(double(naive) / f, 8.0);
  }
}

}  // namespace
}  // namespace opscope::neuron
