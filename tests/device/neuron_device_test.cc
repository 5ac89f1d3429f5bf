// The simulated device's runtime behaviour: asynchronous execution, the host waiting the modeled
// time, activity lanes per profile mode, core filtering, max_events_per_nc, the device clock
// domain, and the no-synchronize pitfall. (The ring buffer itself: src/device/neuron.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "opscope/activity.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"

namespace opscope::neuron {
namespace {

Params FastParams(double fixed_us) {
  Params p = Preset("trn1");
  p.exec_fixed_us = fixed_us;
  p.first_exec_load_us = 0;
  return p;
}

Program Neg(int64_t rows, int64_t cols, std::atomic<int>* ran = nullptr) {
  Program p("neg");
  int x = p.AddBuffer({"x", rows, cols});
  int y = p.AddBuffer({"y", rows, cols});
  p.AddOp({"tensor_scalar", OpClass::kElementwise, Engine::kVector, {x}, y});
  if (ran != nullptr) p.compute = [ran] { ran->fetch_add(1); };
  return p;
}

// Runs `program` on `core` inside a host op named "aten::neg".
void RunOp(NeuronDevice& dev, int core, Program program) {
  static const uint32_t kName = InternName("aten::neg");
  RecordScope scope(kName);
  dev.Execute(core, std::move(program), CurrentOpCorrelation());
}

ProfilerOptions DeviceOptions(std::vector<ProfileMode> modes) {
  ProfilerOptions o;
  o.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
  o.device.modes = std::move(modes);
  return o;
}

int CountKind(const Trace& t, ActivityKind kind, std::string_view name = {}) {
  int n = 0;
  for (const auto& s : t.slices()) {
    if (s.kind == kind && (name.empty() || t.Str(s.name) == name)) ++n;
  }
  return n;
}

uint64_t Dropped(const Trace& t, std::string_view reason) {
  for (const auto& [r, n] : t.metadata().dropped) {
    if (r == reason) return n;
  }
  return 0;
}

TEST(NeuronDevice, ExecuteReturnsAtOnceAndSynchronizeWaitsTheModeledTime) {
  NeuronDevice dev(FastParams(100000));  // 100 ms per execution: robust to a busy host
  std::atomic<int> ran{0};
  const int64_t modeled = EstimateProgram(Neg(128, 512), dev.params()).device_ns;
  const int64_t t0 = NowNs();
  dev.Execute(0, Neg(128, 512, &ran), 0);
  dev.Execute(0, Neg(128, 512, &ran), 0);
  EXPECT_EQ(dev.InFlight(), 2);  // 200 ms of modeled work cannot be done yet
  dev.Synchronize();
  const int64_t waited = NowNs() - t0;
  EXPECT_GE(waited, 2 * modeled);  // executions on one core run one after another
  EXPECT_EQ(dev.InFlight(), 0);
  EXPECT_EQ(ran.load(), 2);  // real results computed
  EXPECT_EQ(dev.executions(), 2);
  EXPECT_GT(dev.instructions(), 2);
}

TEST(NeuronDevice, FailuresOnTheDeviceSurfaceAtTheNextSynchronize) {
  NeuronDevice dev(FastParams(50));
  Program bad = Neg(4, 4);
  bad.name = "throwing_kernel";
  bad.compute = [] { throw std::runtime_error("kernel exploded"); };
  dev.Execute(1, std::move(bad), 0);
  try {
    dev.Synchronize();
    FAIL() << "expected the kernel's error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "neuron:1: execution of 'throwing_kernel' failed on the device: kernel exploded");
  }
  // An invalid program (reads SBUF nobody wrote) fails the same way instead of crashing.
  Program invalid("invalid");
  int scratch = invalid.AddBuffer({"s", 4, 4, 4, Memory::kSbuf});
  int out = invalid.AddBuffer({"y", 4, 4});
  invalid.AddOp({"neg", OpClass::kElementwise, Engine::kVector, {scratch}, out});
  dev.Execute(0, std::move(invalid), 0);
  EXPECT_THROW(dev.Synchronize(), std::runtime_error);
  std::atomic<int> ran{0};
  dev.Execute(0, Neg(4, 4, &ran), 0);
  dev.Synchronize();  // the device stays usable and the error was reported once
  EXPECT_EQ(ran.load(), 1);
}

TEST(NeuronDevice, CoresRunConcurrently) {
  NeuronDevice dev(FastParams(30000));
  const int64_t modeled = EstimateProgram(Neg(128, 512), dev.params()).device_ns;
  const int64_t t0 = NowNs();
  dev.Execute(0, Neg(128, 512), 0);
  dev.Execute(1, Neg(128, 512), 0);
  dev.Synchronize();
  EXPECT_GE(NowNs() - t0, modeled);
  EXPECT_THROW(dev.Execute(2, Neg(1, 1), 0), std::out_of_range);
}

TEST(NeuronDevice, RuntimeModeGivesRuntimeAndHardwareLanesOnly) {
  NeuronDevice dev(FastParams(50));
  Profiler prof(DeviceOptions({ProfileMode::kRuntime}));
  prof.Start();
  RunOp(dev, 0, Neg(256, 4096));
  dev.Synchronize();
  prof.Stop();
  const Trace& t = prof.trace();
  EXPECT_EQ(CountKind(t, ActivityKind::kRuntime, "nrta_execute_schedule"), 1);
  EXPECT_EQ(CountKind(t, ActivityKind::kKernel, "nc_exec_running"), 1);
  EXPECT_EQ(CountKind(t, ActivityKind::kInstruction), 0);
  EXPECT_EQ(t.flows().size(), 1u);  // ac2g: runtime call -> execution
  EXPECT_GE(CountKind(t, ActivityKind::kOther, "timestamp_sync_point"), 1);
  int64_t launch = -1, exec = -1;
  for (const auto& s : t.slices()) {
    if (s.kind == ActivityKind::kRuntime) launch = s.ts_ns;
    if (s.kind == ActivityKind::kKernel) exec = s.ts_ns;
  }
  EXPECT_GE(exec, launch);  // the execution starts after its runtime call (in host time)
  EXPECT_EQ(t.metadata().device_type, "NEURON");
}

TEST(NeuronDevice, DeviceModeAddsEngineLanesLinkedToTheHostOp) {
  NeuronDevice dev(FastParams(50));
  Profiler prof(DeviceOptions({ProfileMode::kDevice, ProfileMode::kRuntime}));
  prof.Start();
  RunOp(dev, 0, Neg(256, 4096));
  dev.Synchronize();
  prof.Stop();
  const Trace& t = prof.trace();
  int64_t op_id = 0;
  for (const auto& s : t.slices()) {
    if (t.Str(s.name) == "aten::neg") op_id = s.external_id;
  }
  ASSERT_NE(op_id, 0);
  std::vector<std::string> lanes;
  int instructions = 0;
  for (const auto& s : t.slices()) {
    if (s.kind != ActivityKind::kInstruction) continue;
    ++instructions;
    EXPECT_EQ(s.external_id, op_id);
    EXPECT_EQ(t.tracks()[s.track].kind, TrackKind::kDeviceEngine);
    lanes.emplace_back(t.Str(t.tracks()[s.track].name));
  }
  EXPECT_GT(instructions, 4);
  EXPECT_NE(std::find(lanes.begin(), lanes.end(), "VectorE"), lanes.end());
  EXPECT_NE(std::find(lanes.begin(), lanes.end(), "DMA queue 0"), lanes.end());
  EXPECT_EQ(CountKind(t, ActivityKind::kKernel, "nc_exec_running"), 1);
  // Device time goes to the op that launched it.
  auto avg = prof.key_averages();
  bool found = false;
  for (const auto& row : avg.rows()) {
    if (row.key == "aten::neg") {
      found = true;
      EXPECT_GT(row.self_device_time_total_ns, 50000);
    }
  }
  EXPECT_TRUE(found);
}

TEST(NeuronDevice, CaptureEnabledForNcFiltersCores) {
  NeuronDevice dev(FastParams(50));
  ProfilerOptions o = DeviceOptions({ProfileMode::kRuntime});
  o.device.capture_enabled_for_nc = "1";
  Profiler prof(o);
  prof.Start();
  RunOp(dev, 0, Neg(128, 128));
  RunOp(dev, 1, Neg(128, 128));
  dev.Synchronize();
  prof.Stop();
  int core0 = 0, core1 = 0;
  for (const auto& s : prof.trace().slices()) {
    if (s.kind != ActivityKind::kKernel) continue;
    auto dev_arg = prof.trace().FindArg(s.args, "device");
    ASSERT_TRUE(dev_arg.has_value());
    (*dev_arg == "0" ? core0 : core1)++;
  }
  EXPECT_EQ(core0, 0);
  EXPECT_EQ(core1, 1);
}

TEST(NeuronDevice, MaxEventsPerNcKeepsTheNewestAndReportsDrops) {
  NeuronDevice dev(FastParams(50));
  ProfilerOptions o = DeviceOptions({ProfileMode::kDevice, ProfileMode::kRuntime});
  o.device.max_events_per_nc = 10;
  Profiler prof(o);
  prof.Start();
  RunOp(dev, 0, Neg(512, 4096));  // hundreds of instructions
  dev.Synchronize();
  prof.Stop();
  const Trace& t = prof.trace();
  int device_events = 0;
  int64_t last_end = 0;
  for (const auto& s : t.slices()) {
    if (s.kind == ActivityKind::kInstruction || s.kind == ActivityKind::kKernel) {
      ++device_events;
      last_end = std::max(last_end, s.ts_ns + s.dur_ns);
    }
  }
  EXPECT_EQ(device_events, 10);
  EXPECT_GT(Dropped(t, "max_events_per_nc"), 100u);
  EXPECT_EQ(CountKind(t, ActivityKind::kKernel), 0);  // the oldest event was overwritten
}

TEST(NeuronDevice, DeviceTimestampsLandInTheirHostWindowAfterClockSync) {
  Params p = FastParams(2000);
  p.clock_drift_ppm = 300;  // a drift large enough to matter over the run
  NeuronDevice dev(p);
  for (bool correlate : {true, false}) {
    ProfilerOptions o = DeviceOptions({ProfileMode::kRuntime});
    o.device.correlate_device_time = correlate;
    Profiler prof(o);
    prof.Start();
    for (int i = 0; i < 3; ++i) {
      RecordFunction step("step");
      RunOp(dev, 0, Neg(128, 2048));
      dev.Synchronize();
    }
    prof.Stop();
    const Trace& t = prof.trace();
    std::vector<std::pair<int64_t, int64_t>> steps;
    for (const auto& s : t.slices()) {
      if (t.Str(s.name) == "step") steps.emplace_back(s.ts_ns, s.ts_ns + s.dur_ns);
    }
    ASSERT_EQ(steps.size(), 3u);
    int inside = 0;
    for (const auto& s : t.slices()) {
      if (s.kind != ActivityKind::kKernel) continue;
      for (const auto& [b, e] : steps) {
        if (s.ts_ns >= b && s.ts_ns + s.dur_ns <= e) ++inside;
      }
    }
    // Mapped: each execution inside its step. Raw device ticks: 500 s away from the host.
    EXPECT_EQ(inside, correlate ? 3 : 0);
  }
}

TEST(NeuronDevice, StoppingBeforeTheDeviceFinishesLosesItsActivity) {
  NeuronDevice dev(FastParams(100000));
  for (bool flush : {false, true}) {
    ProfilerOptions o = DeviceOptions({ProfileMode::kRuntime});
    o.device.flush_device_on_stop = flush;
    Profiler prof(o);
    prof.Start();
    RunOp(dev, 0, Neg(128, 128));
    prof.Stop();  // no synchronize: the 100 ms execution is still running
    const Trace& t = prof.trace();
    SCOPED_TRACE(flush ? "flush on stop" : "no flush");
    EXPECT_EQ(CountKind(t, ActivityKind::kKernel), flush ? 1 : 0);
    EXPECT_EQ(Dropped(t, "in_flight_at_stop"), flush ? 0u : 1u);
    dev.Synchronize();
  }
}

}  // namespace
}  // namespace opscope::neuron
