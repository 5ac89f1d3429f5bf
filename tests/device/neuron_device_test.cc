// The simulated device's runtime behaviour: asynchronous execution, the host waiting the modeled
// time, activity lanes per profile mode, core filtering, max_events_per_nc, the device clock
// domain, and the no-synchronize pitfall. (The ring buffer itself: src/device/neuron.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "device/neuron/device.h"
#include "opscope/activity.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"

namespace opscope::neuron {
namespace {

// Executions that take `launch_us` each (the launch phase), nothing else fixed.
Params FastParams(double launch_us) {
  Params p = Preset("trn1");
  p.exec_launch_us = launch_us;
  p.exec_complete_us = 0;
  p.program_switch_us = 0;
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

// Model time never turns into a host sleep set by a parameter: at every documented clock offset and
// drift (docs/neuron-model.md: [-1e15, 1e15] ns, [-1000, 1000] ppm) two executions of 20 ms each
// take about 40 ms of host time. Before, an offset below minus the host's uptime made the first
// execution wait |offset| - uptime (-1e15: 11 days).
TEST(NeuronDevice, EveryDocumentedClockFinishesInTheModeledTime) {
  for (const double offset : {-1e15, -1e13, -1.0, 0.0, 1e15}) {
    for (const double drift : {-1000.0, 0.0, 1000.0}) {
      Params p = FastParams(20000);
      p.clock_offset_ns = offset;
      p.clock_drift_ppm = drift;
      NeuronDevice dev(p);
      const int64_t modeled = EstimateProgram(Neg(16, 64), dev.params()).device_ns;
      const int64_t t0 = NowNs();
      dev.Execute(0, Neg(16, 64), 0);
      dev.Execute(0, Neg(16, 64), 0);
      dev.Synchronize();
      const int64_t waited = NowNs() - t0;
      EXPECT_GE(waited, 2 * modeled * 999 / 1000) << offset << " ns, " << drift << " ppm";
      EXPECT_LT(waited, int64_t{30'000'000'000}) << offset << " ns, " << drift << " ppm";
      EXPECT_EQ(dev.executions(), 2);
    }
  }
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
  int64_t launch = -1, exec = -1, exec_end = -1;
  for (const auto& s : t.slices()) {
    if (s.kind == ActivityKind::kRuntime && t.Str(s.name) == "nrta_execute_schedule") {
      launch = s.ts_ns;
    }
    if (s.kind == ActivityKind::kKernel) exec = s.ts_ns, exec_end = s.ts_ns + s.dur_ns;
  }
  EXPECT_GE(exec, launch);  // the execution starts after its runtime call (in host time)
  // The synchronize is recorded as Kineto records cudaDeviceSynchronize: the host's wait and a
  // Context Sync on the device, one correlation, the wait ending once the execution has.
  const Slice* wait = nullptr;
  const Slice* sync = nullptr;
  for (const auto& s : t.slices()) {
    if (s.kind == ActivityKind::kRuntime && t.Str(s.name) == "nrta_is_completed") wait = &s;
    if (s.kind == ActivityKind::kSync && t.Str(s.name) == "Context Sync") sync = &s;
  }
  ASSERT_NE(wait, nullptr);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(wait->correlation, sync->correlation);
  EXPECT_NE(wait->correlation, 0);
  EXPECT_GE(wait->ts_ns + wait->dur_ns, exec_end);
  EXPECT_TRUE(t.processes()[t.tracks()[sync->track].process].is_device);
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

// The runtime's execution queue is bounded: the host blocks when a core holds
// max_inflight_executions (it used to queue without limit: 15.8 GB for 2M warm-up iterations).
TEST(NeuronDevice, ExecuteBlocksWhileTheQueueIsFull) {
  // 200 ms per execution: the bounds below hold with wide margins on a busy host; the last check
  // is structural (counts, not times).
  Params p = FastParams(200000);
  p.max_inflight_executions = 2;
  NeuronDevice dev(p);
  const int64_t t0 = NowNs();
  dev.Execute(0, Neg(1, 1), 0);
  dev.Execute(0, Neg(1, 1), 0);
  EXPECT_LT(NowNs() - t0, 150'000'000);  // two fit: both calls return at once
  dev.Execute(0, Neg(1, 1), 0);          // the third waits for the first to finish
  EXPECT_GE(NowNs() - t0, 190'000'000);
  EXPECT_LE(dev.InFlight(), 2);
  // Other cores have their own queue: core 1's call returns while core 0's stays full (had it
  // waited for a slot on core 0, one of core 0's executions would have finished).
  dev.Execute(1, Neg(1, 1), 0);
  EXPECT_EQ(dev.InFlight(), 3);
  dev.Synchronize();
}

TEST(NeuronDevice, ABurstOfExecutionsStaysWithinTheBound) {
  Params p = FastParams(0);
  p.exec_complete_us = 5;
  NeuronDevice dev(p);
  ProfilerOptions o = DeviceOptions({ProfileMode::kDevice, ProfileMode::kRuntime});
  o.device.max_events_per_nc = 100;
  o.device.flush_device_on_stop = false;
  Profiler prof(o);
  prof.Start();  // no synchronize until the end: the --no-sync pitfall at scale
  int most = 0;
  for (int i = 0; i < 5000; ++i) {
    RunOp(dev, 0, Neg(1, 1));
    most = std::max(most, dev.InFlight());
  }
  EXPECT_LE(most, 8);
  dev.Synchronize();
  prof.Stop();
  // The device's event ring kept the newest events and counted the rest.
  const Trace& t = prof.trace();
  EXPECT_LE(CountKind(t, ActivityKind::kKernel) + CountKind(t, ActivityKind::kInstruction), 100);
  EXPECT_GT(Dropped(t, "max_events_per_nc"), 1000u);
}

// Work queued from the device's own worker threads (a kernel's closure freeing tensors) never
// waits for its own queue, so a full queue cannot deadlock the device.
TEST(NeuronDevice, WorkersNeverBlockOnTheirOwnQueue) {
  Params p = FastParams(0);
  p.max_inflight_executions = 1;
  NeuronDevice dev(p);
  std::atomic<int> freed{0};
  Program prog = Neg(1, 1);
  prog.compute = [&dev, &freed] {
    for (int i = 0; i < 5000; ++i) dev.Defer(0, [&freed] { freed.fetch_add(1); });
  };
  dev.Execute(0, std::move(prog), 0);
  dev.Execute(0, Neg(1, 1), 0);
  dev.Synchronize();
  EXPECT_EQ(freed.load(), 5000);
}

TEST(NeuronDevice, PhasesAreSpansOfTheExecution) {
  Params p = FastParams(50);
  p.exec_complete_us = 2;
  NeuronDevice dev(p);
  Profiler prof(DeviceOptions({ProfileMode::kDevice, ProfileMode::kRuntime}));
  prof.Start();
  Program prog = Neg(128, 512);
  prog.eager = true;  // the eager path: binding and dispatch are phases of their own
  RunOp(dev, 0, std::move(prog));
  dev.Synchronize();
  prof.Stop();
  const Trace& t = prof.trace();
  int64_t exec_begin = 0, exec_dur = 0;
  for (const auto& s : t.slices()) {
    if (s.kind == ActivityKind::kKernel) {
      exec_begin = s.ts_ns;
      exec_dur = s.dur_ns;
    }
  }
  std::set<std::string> names;
  int64_t total = 0;
  for (const auto& s : t.slices()) {
    if (t.Str(t.tracks()[s.track].name) != "execution phases") continue;
    names.emplace(t.Str(s.name));
    total += s.dur_ns;
    EXPECT_GE(s.ts_ns, exec_begin - 1);
    EXPECT_LE(s.ts_ns + s.dur_ns, exec_begin + exec_dur + 1);
  }
  EXPECT_EQ(names, (std::set<std::string>{"launch", "tensor_bind", "eager_dispatch", "engines",
                                          "completion"}));
  EXPECT_NEAR(double(total), double(exec_dur), 0.001 * double(exec_dur) + 2);
}

}  // namespace
}  // namespace opscope::neuron
