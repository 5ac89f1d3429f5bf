// The Neuron device as the tensor runtime's "neuron" backend: registration, results computed for
// real, device memory capacity errors, and multi-op programs: built by hand or by BuildProgram
// from a ProgramGraph (what compile() hands it), run by ExecuteProgram.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "device/neuron/device.h"
#include "opscope/device.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"
#include "opscope/tensor.h"

namespace opscope {
namespace {

class NeuronBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterNeuronBackend(); }
};

TEST_F(NeuronBackendTest, RegistersOneDevicePerNeuronCore) {
  DeviceBackend* b = FindBackend(DeviceType::kPrivateUse1);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name(), "neuron");
  EXPECT_EQ(b->device_count(), neuron::DefaultDevice().num_cores());
  EXPECT_TRUE(b->SupportsPrograms());
}

TEST_F(NeuronBackendTest, EagerOpsComputeTheCpuResultAsynchronously) {
  Tensor x = randn({64, 256}, 3);
  Tensor w = randn({256}, 4);
  Tensor ref = rms_norm(x, {256}, w, 1e-6);
  Tensor xn = x.to("neuron:1");
  Tensor y = rms_norm(xn, {256}, w.to("neuron:1"), 1e-6);
  EXPECT_EQ(y.device(), Device("neuron:1"));
  std::vector<float> got = y.ToVector();  // waits for the device
  std::vector<float> want = ref.ToVector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << i;
}

// A host-to-device write lands in stream order: kernels queued before it still read the old
// values even though the host call returns at once.
TEST_F(NeuronBackendTest, HostWritesWaitForQueuedReaders) {
  Tensor x = full({64, 64}, 1.0, Device("neuron:0"));
  std::vector<Tensor> busy;
  for (int i = 0; i < 4; ++i) busy.push_back(x * x);  // keep the core busy for a while
  Tensor y = x * 2.0;                                 // queued: must read x == 1
  x.copy_(full({64, 64}, 5.0));                       // host -> device write of x
  EXPECT_FLOAT_EQ(y.ToVector()[0], 2.0f);
  EXPECT_FLOAT_EQ(x.ToVector()[0], 5.0f);
}

TEST_F(NeuronBackendTest, OutOfMemoryNamesTheDeviceAndTheRequest) {
  try {
    empty({int64_t(1) << 40}, Device("neuron:0"));
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("neuron:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("4096.00 GiB"), std::string::npos) << msg;
  }
}

TEST_F(NeuronBackendTest, ExecuteProgramRunsAFusedProgramAsOneExecution) {
  Tensor x = randn({128, 512}, 5).to("neuron:0");
  Tensor y = empty({128, 512}, Device("neuron:0"));
  neuron::NeuronDeviceProgram prog;
  prog.program = neuron::Program("compiled_scale_shift");
  int in = prog.program.AddBuffer({"x", 128, 512});
  int tmp = prog.program.AddBuffer({"t", 128, 512, 4, neuron::Memory::kSbuf});
  int out = prog.program.AddBuffer({"y", 128, 512});
  prog.program.AddOp(
      {"tensor_scalar", neuron::OpClass::kElementwise, neuron::Engine::kVector, {in}, tmp});
  prog.program.AddOp(
      {"activation", neuron::OpClass::kElementwise, neuron::Engine::kScalar, {tmp}, out});
  prog.kernel = [](std::span<const TensorRef> ins, std::span<const TensorRef> outs) {
    const float* a = ins[0].f32();
    float* b = outs[0].f32();
    for (int64_t i = 0; i < outs[0].numel(); ++i) b[i] = 2 * a[i] + 1;
  };
  ProfilerOptions o;
  o.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
  Profiler prof(o);
  prof.Start();
  {
    RecordFunction region("Torch-Compiled Region: 0/0");
    const TensorRef ins[] = {MakeTensorRef(x)};
    const TensorRef outs[] = {MakeTensorRef(y)};
    GetBackend(DeviceType::kPrivateUse1).ExecuteProgram(prog, ins, outs, CurrentOpCorrelation());
  }
  neuron::synchronize();
  prof.Stop();
  std::vector<float> xs = x.ToVector(), ys = y.ToVector();
  for (size_t i = 0; i < ys.size(); ++i) ASSERT_FLOAT_EQ(ys[i], 2 * xs[i] + 1) << i;
  const Trace& t = prof.trace();
  int executions = 0;
  for (const auto& s : t.slices()) {
    if (s.kind != ActivityKind::kKernel) continue;
    ++executions;
    EXPECT_EQ(t.FindArg(s.args, "program").value_or(""), "\"compiled_scale_shift\"");
  }
  EXPECT_EQ(executions, 1);
  bool attributed = false;
  const KeyAverages avg = prof.key_averages();
  for (const auto& row : avg.rows()) {
    if (row.key == "Torch-Compiled Region: 0/0") attributed = row.device_time_total_ns > 380000;
  }
  EXPECT_TRUE(attributed);
}

// The path compile() takes: BuildProgram lowers a ProgramGraph once, each ExecuteProgram is one
// device execution whose results the program's kernel computes on the device's memory.
TEST_F(NeuronBackendTest, BuildProgramLowersAGraphThatExecuteProgramRuns) {
  using Kind = ProgramGraph::Value::Kind;
  ProgramGraph g;  // y = exp(x) - amax(exp(x), -1) over [64, 256]
  g.values = {{Kind::kInput, OpId::kAdd, {}, {64, 256}, false},
              {Kind::kOp, OpId::kExp, {0}, {64, 256}, false},
              {Kind::kOp, OpId::kAmax, {1}, {64, 1}, false},
              {Kind::kOp, OpId::kSub, {1, 2}, {64, 256}, true}};
  g.kernels = {{{64, 256}, {1}, {1, 2, 3}, {2}, {3}}};
  int calls = 0;
  DeviceBackend& backend = GetBackend(DeviceType::kPrivateUse1);
  std::unique_ptr<DeviceProgram> program = backend.BuildProgram(
      g, "compiled_exp_shift",
      [&calls](std::span<const TensorRef> ins, std::span<const TensorRef> outs) {
        ++calls;
        const float* x = ins[0].f32();
        float* y = outs[0].f32();
        for (int64_t r = 0; r < 64; ++r) {
          float m = -INFINITY;
          for (int64_t c = 0; c < 256; ++c) m = std::max(m, std::exp(x[r * 256 + c]));
          for (int64_t c = 0; c < 256; ++c) y[r * 256 + c] = std::exp(x[r * 256 + c]) - m;
        }
      });
  const auto* neuron_program = dynamic_cast<const neuron::NeuronDeviceProgram*>(program.get());
  ASSERT_NE(neuron_program, nullptr);
  EXPECT_EQ(neuron_program->program.name, "compiled_exp_shift");
  EXPECT_EQ(neuron_program->program.HbmBytes(), 2 * 64 * 256 * 4);  // x in, y out

  Tensor x = randn({64, 256}, 6);
  Tensor xd = x.to("neuron:0");
  Tensor y = empty({64, 256}, Device("neuron:0"));
  const int64_t before = neuron::DefaultDevice().executions();
  for (int i = 0; i < 2; ++i) {
    const TensorRef ins[] = {MakeTensorRef(xd)};
    const TensorRef outs[] = {MakeTensorRef(y)};
    backend.ExecuteProgram(*program, ins, outs, 0);
  }
  neuron::synchronize();
  EXPECT_EQ(neuron::DefaultDevice().executions() - before, 2);
  EXPECT_EQ(calls, 2);
  Tensor e = exp(x);
  std::vector<float> want = (e - amax(e, {-1}, true)).ToVector(), got = y.ToVector();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST_F(NeuronBackendTest, BackendsWithoutProgramsRefuseThem) {
  RegisterCpuBackend();
  DeviceBackend& cpu = GetBackend(DeviceType::kCPU);
  EXPECT_FALSE(cpu.SupportsPrograms());
  EXPECT_TRUE(cpu.RunsHostCode());
  EXPECT_FALSE(GetBackend(DeviceType::kPrivateUse1).RunsHostCode());
  EXPECT_THROW(cpu.BuildProgram(ProgramGraph{}, "x", {}), TensorError);
  EXPECT_EQ(FindBackendByName("neuron"), &GetBackend(DeviceType::kPrivateUse1));
  EXPECT_EQ(FindBackendByName("tpu"), nullptr);
  EXPECT_NE(RegisteredBackendNames().find("cpu, neuron"), std::string::npos)
      << RegisteredBackendNames();
}

TEST_F(NeuronBackendTest, ExecuteProgramRejectsForeignPrograms) {
  struct Other : DeviceProgram {};
  Tensor y = empty({4}, Device("neuron:0"));
  const TensorRef outs[] = {MakeTensorRef(y)};
  EXPECT_THROW(GetBackend(DeviceType::kPrivateUse1).ExecuteProgram(Other{}, {}, outs, 0),
               TensorError);
}

}  // namespace
}  // namespace opscope
