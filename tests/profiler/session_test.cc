// End-to-end tests of profiling sessions: record -> Trace -> key_averages / chrome trace,
// every exported file read back with simdjson.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "opscope/profiler.h"
#include "tests/common/temp_dir.h"
#include "trace_reader.h"

namespace opscope {
namespace {

using opscope::testing::JsonEvent;
using opscope::testing::ReadChromeTrace;

// Every test's files in one directory, removed when the test program exits.
std::string TempPath(const std::string& name) {
  static const opscope::testing::ScopedTempDir dir("opscope_profiler_test");
  return dir.File(name);
}

std::vector<const Slice*> SlicesNamed(const Trace& t, std::string_view name) {
  std::vector<const Slice*> out;
  for (const Slice& s : t.slices()) {
    if (t.Str(s.name) == name) out.push_back(&s);
  }
  return out;
}

void BusyWaitNs(int64_t ns) {
  int64_t end = NowNs() + ns;
  while (NowNs() < end) {
  }
}

TEST(SessionTest, RecordsNestedOpsAndAnnotations) {
  Profiler prof;
  prof.Start();
  {
    OPSCOPE_SCOPE("outer_op");
    BusyWaitNs(20'000);
    {
      RecordFunction fn(std::string("block ") + "7");
      OPSCOPE_SCOPE("inner_op");
      BusyWaitNs(20'000);
    }
    RecordInstant(InternName("marker"));
    RecordCounter(InternName("queue_depth"), 3.5);
  }
  prof.Stop();
  const Trace& t = prof.trace();
  auto outer = SlicesNamed(t, "outer_op");
  auto inner = SlicesNamed(t, "inner_op");
  auto block = SlicesNamed(t, "block 7");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  ASSERT_EQ(block.size(), 1u);
  EXPECT_EQ(outer[0]->kind, ActivityKind::kCpuOp);
  EXPECT_EQ(block[0]->kind, ActivityKind::kUserAnnotation);
  EXPECT_GE(outer[0]->dur_ns, 40'000);
  EXPECT_LE(outer[0]->ts_ns, block[0]->ts_ns);
  EXPECT_LE(block[0]->ts_ns + block[0]->dur_ns, outer[0]->ts_ns + outer[0]->dur_ns);
  EXPECT_EQ(t.slices()[inner[0] - t.slices().data()].depth, 2);
  EXPECT_NE(outer[0]->external_id, inner[0]->external_id);
  EXPECT_EQ(t.instants().size(), 1u);
  ASSERT_EQ(t.counters().size(), 1u);
  EXPECT_EQ(t.counters()[0].value, 3.5);

  KeyAverages avg = prof.key_averages();
  bool saw_outer = false;
  for (const KeyAverage& r : avg.rows()) {
    if (r.key == "outer_op") {
      saw_outer = true;
      EXPECT_EQ(r.count, 1);
      EXPECT_EQ(r.cpu_time_total_ns, outer[0]->dur_ns);
      EXPECT_LT(r.self_cpu_time_total_ns, r.cpu_time_total_ns);
    }
  }
  EXPECT_TRUE(saw_outer);

  std::string path = TempPath("nested.json");
  prof.export_chrome_trace(path);
  auto json = ReadChromeTrace(path);
  ASSERT_EQ(json.error, "");
  EXPECT_EQ(json.schema_version, 1);
  EXPECT_GT(json.base_time_ns, 1'600'000'000'000'000'000);
  ASSERT_FALSE(json.top_keys.empty());
  EXPECT_EQ(json.top_keys.front(), "schemaVersion");
  EXPECT_EQ(json.top_keys.back(), "traceName");
  EXPECT_EQ(json.trace_name, path);
  int ops = 0, annotations = 0, instants = 0, counters = 0, thread_names = 0;
  for (const JsonEvent& e : json.events) {
    if (e.ph == "X" && e.cat == "cpu_op") {
      ++ops;
      EXPECT_TRUE(e.args.count("External id")) << e.name;
    }
    if (e.ph == "X" && e.cat == "user_annotation") ++annotations;
    if (e.ph == "i") ++instants;
    if (e.ph == "C") {
      ++counters;
      EXPECT_EQ(e.args.at("queue_depth"), "3.5");
    }
    if (e.ph == "M" && e.name == "thread_name") ++thread_names;
  }
  EXPECT_EQ(ops, 2);
  EXPECT_EQ(annotations, 1);
  EXPECT_EQ(instants, 1);
  EXPECT_EQ(counters, 1);
  EXPECT_GE(thread_names, 1);
}

TEST(SessionTest, ProfilingOffRecordsNothingAndCostsNoCorrelation) {
  EXPECT_FALSE(ProfilingActive());
  OPSCOPE_SCOPE("unprofiled");
  EXPECT_EQ(CurrentOpCorrelation(), 0u);
}

TEST(SessionTest, DeviceActivityIsClockSyncedLinkedAndFlowed) {
  RegisterDevice({.name = "neuron", .process_name = "NeuronCore", .lane_names = {"queue 0"}});
  ProfilerOptions options;
  options.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
  Profiler prof(options);
  prof.Start();
  ASSERT_NE(ActiveDeviceConfig(), nullptr);
  EXPECT_TRUE(DeviceActivityEnabled());
  // The device clock runs 5 s behind the host clock.
  const int64_t kDeviceBehind = 5'000'000'000;
  const int64_t h0 = NowNs();
  ReportClockSync({.device = 0, .host_ns = h0, .device_ticks = h0 - kDeviceBehind});
  int64_t kernel_host_start = 0;
  uint64_t op_corr = 0;
  {
    OPSCOPE_SCOPE("aten::matmul");
    op_corr = CurrentOpCorrelation();
    DeviceActivity rt;
    rt.kind = ActivityKind::kRuntime;
    rt.clock = ActivityClock::kHost;
    rt.name = "nrta_execute_schedule";
    rt.external_id = op_corr;
    rt.correlation = NewCorrelationId();
    rt.host_tid = CurrentThreadId();
    rt.start = NowNs();
    BusyWaitNs(10'000);
    rt.end = NowNs();
    ReportDeviceActivity(rt);
    DeviceActivity k;
    k.kind = ActivityKind::kKernel;
    k.clock = ActivityClock::kDevice;
    k.name = "nc_exec_running";
    k.external_id = op_corr;
    k.correlation = rt.correlation;
    kernel_host_start = rt.end + 2'000;
    k.start = kernel_host_start - kDeviceBehind;
    k.end = k.start + 50'000;
    k.args = "{\"bytes\": 4096}";
    ReportDeviceActivity(k);
  }
  const int64_t h1 = NowNs();
  ReportClockSync({.device = 0, .host_ns = h1, .device_ticks = h1 - kDeviceBehind});
  prof.Stop();
  EXPECT_EQ(ActiveDeviceConfig(), nullptr);

  const Trace& t = prof.trace();
  EXPECT_EQ(t.metadata().device_type, "NEURON");
  auto kernels = SlicesNamed(t, "nc_exec_running");
  auto ops = SlicesNamed(t, "aten::matmul");
  auto runtime = SlicesNamed(t, "nrta_execute_schedule");
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_EQ(runtime.size(), 1u);
  // Mapped back into host time: the kernel starts 2 us after the runtime call ends.
  EXPECT_NEAR(static_cast<double>(kernels[0]->ts_ns - (runtime[0]->ts_ns + runtime[0]->dur_ns)),
              2'000.0, 10.0);
  (void)kernel_host_start;
  EXPECT_EQ(kernels[0]->dur_ns, 50'000);
  EXPECT_LT(ops[0]->ts_ns, kernels[0]->ts_ns);
  EXPECT_LT(runtime[0]->ts_ns + runtime[0]->dur_ns, kernels[0]->ts_ns + 1'000'000);
  uint32_t kernel_index = static_cast<uint32_t>(kernels[0] - t.slices().data());
  uint32_t op_index = static_cast<uint32_t>(ops[0] - t.slices().data());
  EXPECT_EQ(t.Link(kernel_index).op, op_index);
  EXPECT_EQ(t.tracks()[runtime[0]->track].tid, static_cast<int64_t>(CurrentThreadId()));
  const Process& dev = t.processes()[t.tracks()[kernels[0]->track].process];
  EXPECT_TRUE(dev.is_device);
  EXPECT_EQ(t.Str(dev.labels), "NEURON 0");
  EXPECT_EQ(t.Str(dev.name), "NeuronCore 0");
  EXPECT_EQ(dev.sort_index, 16777216);
  EXPECT_EQ(t.Str(t.tracks()[kernels[0]->track].name), "queue 0");
  ASSERT_EQ(t.flows().size(), 1u);

  KeyAverages avg = prof.key_averages();
  std::string table = avg.Table("self_privateuse1_time_total");
  EXPECT_NE(table.find("Self NEURON"), std::string::npos) << table;
  EXPECT_NE(table.find("Self NEURON time total: 50.000us"), std::string::npos) << table;
  for (const KeyAverage& r : avg.rows()) {
    if (r.key == "aten::matmul") {
      EXPECT_EQ(r.self_device_time_total_ns, 50'000);
    }
  }

  std::string path = TempPath("device.json.gz");
  prof.export_chrome_trace(path);
  auto json = ReadChromeTrace(path);
  ASSERT_EQ(json.error, "");
  const JsonEvent *op = nullptr, *rt = nullptr, *kernel = nullptr, *s = nullptr, *f = nullptr;
  bool labels = false, sort_index = false;
  for (const JsonEvent& e : json.events) {
    if (e.ph == "X" && e.cat == "cpu_op" && e.name == "aten::matmul") op = &e;
    if (e.ph == "X" && e.cat == "privateuse1_runtime") rt = &e;
    if (e.ph == "X" && e.cat == "kernel") kernel = &e;
    if (e.ph == "s") s = &e;
    if (e.ph == "f") f = &e;
    if (e.ph == "M" && e.name == "process_labels" && e.args.count("labels") &&
        e.args.at("labels") == "NEURON 0") {
      labels = true;
    }
    if (e.ph == "M" && e.name == "process_sort_index" && e.pid == "0") {
      sort_index = e.args.at("sort_index") == "16777216";
    }
  }
  ASSERT_TRUE(op && rt && kernel && s && f);
  EXPECT_EQ(op->args.at("External id"), std::to_string(op_corr));
  EXPECT_EQ(rt->args.at("External id"), std::to_string(op_corr));
  EXPECT_EQ(kernel->args.at("External id"), std::to_string(op_corr));
  EXPECT_EQ(kernel->args.at("correlation"), rt->args.at("correlation"));
  EXPECT_EQ(kernel->args.at("bytes"), "4096");
  EXPECT_EQ(std::to_string(s->id), rt->args.at("correlation"));
  EXPECT_EQ(s->id, f->id);
  EXPECT_TRUE(f->bp_e);
  EXPECT_FALSE(s->bp_e);
  EXPECT_EQ(s->tid, rt->tid);
  EXPECT_EQ(f->pid, kernel->pid);
  EXPECT_DOUBLE_EQ(f->ts, kernel->ts);
  EXPECT_DOUBLE_EQ(s->ts, rt->ts);
  EXPECT_EQ(kernel->pid, "0");
  EXPECT_NE(std::find(json.top_keys.begin(), json.top_keys.end(), "deviceProperties"),
            json.top_keys.end());
  EXPECT_TRUE(labels);
  EXPECT_TRUE(sort_index);
}

TEST(SessionTest, StopAndRestartKeepsWindowsApart) {
  Profiler prof;
  prof.Start();
  { OPSCOPE_SCOPE("first_window"); }
  prof.Stop();
  EXPECT_EQ(SlicesNamed(prof.trace(), "first_window").size(), 1u);
  EXPECT_THROW(prof.Stop(), ProfilerError);
  prof.Start();
  { OPSCOPE_SCOPE("second_window"); }
  { OPSCOPE_SCOPE("second_window"); }
  prof.Stop();
  EXPECT_EQ(SlicesNamed(prof.trace(), "first_window").size(), 0u);
  EXPECT_EQ(SlicesNamed(prof.trace(), "second_window").size(), 2u);
}

TEST(SessionTest, ScopeFormStartsAndStops) {
  Profiler prof;
  {
    Profiler::Scope scope(prof);
    EXPECT_TRUE(prof.running());
    EXPECT_TRUE(ProfilingActive());
    OPSCOPE_SCOPE("scoped_op");
  }
  EXPECT_FALSE(prof.running());
  EXPECT_FALSE(ProfilingActive());
  EXPECT_EQ(SlicesNamed(prof.trace(), "scoped_op").size(), 1u);
  EXPECT_EQ(prof.last_error(), "");
}

TEST(SessionTest, OnlyOneSessionRecordsAtATime) {
  Profiler a, b;
  a.Start();
  EXPECT_THROW(a.Start(), ProfilerError);
  try {
    b.Start();
    FAIL() << "second session started";
  } catch (const ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find("another profiling session"), std::string::npos);
  }
  { OPSCOPE_SCOPE("kept_op"); }
  a.Stop();
  EXPECT_EQ(SlicesNamed(a.trace(), "kept_op").size(), 1u);
  EXPECT_FALSE(b.running());
}

TEST(SessionTest, ThrowingCallbackSurfacesAndKeepsTheTrace) {
  ProfilerOptions options;
  options.on_trace_ready = [](Profiler&) { throw std::runtime_error("disk on fire"); };
  Profiler prof(options);
  prof.Start();
  { OPSCOPE_SCOPE("precious_op"); }
  try {
    prof.Stop();
    FAIL() << "Stop() swallowed the callback's exception";
  } catch (const ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find("on_trace_ready"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("disk on fire"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(prof.running());
  EXPECT_EQ(SlicesNamed(prof.trace(), "precious_op").size(), 1u);
  std::string path = TempPath("after_throw.json");
  prof.export_chrome_trace(path);
  EXPECT_EQ(ReadChromeTrace(path).error, "");
  // The profiler is usable again.
  prof.Start();
  EXPECT_THROW(prof.Stop(), ProfilerError);
}

TEST(SessionTest, UnwritableOutputNamesThePathAndExportIsRetryable) {
  Profiler prof;
  prof.Start();
  { OPSCOPE_SCOPE("export_me"); }
  prof.Stop();
  const std::string bad = "/nonexistent_opscope_dir/sub/trace.json";
  try {
    prof.export_chrome_trace(bad);
    FAIL() << "wrote to " << bad;
  } catch (const ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  std::string good = TempPath("retry.json");
  prof.export_chrome_trace(good);
  auto json = ReadChromeTrace(good);
  ASSERT_EQ(json.error, "");
  bool found = false;
  for (const auto& e : json.events) found |= e.name == "export_me";
  EXPECT_TRUE(found);
  // No temporary files left beside the target.
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(good).parent_path())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(SessionTest, UnwritableProfileOutputDirFailsStopButKeepsTrace) {
  ProfilerOptions options;
  options.device.profile_output_dir = "/proc/opscope_cannot_write_here";
  Profiler prof(options);
  prof.Start();
  { OPSCOPE_SCOPE("dir_op"); }
  try {
    prof.Stop();
    FAIL();
  } catch (const ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/opscope_cannot_write_here"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(SlicesNamed(prof.trace(), "dir_op").size(), 1u);
}

TEST(SessionTest, ProfileOutputDirGetsNeuronLayout) {
  ProfilerOptions options;
  options.device.profile_output_dir = TempPath("neuron_out");
  Profiler prof(options);
  prof.Start();
  { OPSCOPE_SCOPE("dir_op"); }
  prof.Stop();
  int files = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(options.device.profile_output_dir)) {
    if (entry.path().filename() == "trace.json") {
      ++files;
      // <dir>/<host>_pid_<pid>/<YYYYmmdd_HHMMSS>_<ms>/trace.json
      const std::string run = entry.path().parent_path().filename().string();
      const std::string proc = entry.path().parent_path().parent_path().filename().string();
      EXPECT_TRUE(std::regex_match(run, std::regex(R"(\d{8}_\d{6}_\d{1,3})"))) << run;
      const std::string pid = "_pid_" + std::to_string(getpid());
      EXPECT_TRUE(proc.ends_with(pid) && proc.size() > pid.size()) << proc;  // host first
      EXPECT_EQ(entry.path().parent_path().parent_path().parent_path(),
                options.device.profile_output_dir);
      EXPECT_EQ(ReadChromeTrace(entry.path().string()).error, "");
    }
  }
  EXPECT_EQ(files, 1);
}

TEST(SessionTest, ScheduleRecordsActiveStepsAndCallsBackPerCycle) {
  ProfilerOptions options;
  options.schedule = Schedule{.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 1};
  std::vector<std::vector<std::string>> windows;
  options.on_trace_ready = [&windows](Profiler& p) {
    std::vector<std::string> names;
    for (const Slice& s : p.trace().slices()) names.emplace_back(p.trace().Str(s.name));
    std::sort(names.begin(), names.end());
    windows.push_back(names);
  };
  Profiler prof(options);
  prof.Start();
  for (int step = 0; step < 8; ++step) {
    RecordFunction fn("step_body_" + std::to_string(step));
    prof.step();
  }
  prof.Stop();
  ASSERT_EQ(windows.size(), 1u);
  // Steps 3 and 4 are active (skip 0, wait 1, warmup 2). RecordFunction closes after step(), so
  // each body lands in the window that was active when it ended... its range began in the
  // previous step, which is recorded only for step 3 (begun at step 3 -> ends after step()).
  const auto& names = windows[0];
  EXPECT_TRUE(std::count(names.begin(), names.end(), "ProfilerStep#3"));
  EXPECT_TRUE(std::count(names.begin(), names.end(), "ProfilerStep#4"));
  EXPECT_FALSE(std::count(names.begin(), names.end(), "ProfilerStep#2"));
  EXPECT_FALSE(std::count(names.begin(), names.end(), "ProfilerStep#5"));
  EXPECT_TRUE(std::count(names.begin(), names.end(), "step_body_3"));
  EXPECT_FALSE(std::count(names.begin(), names.end(), "step_body_1"));
  EXPECT_FALSE(std::count(names.begin(), names.end(), "step_body_6"));
  KeyAverages avg = prof.key_averages();
  bool step_row = false;
  for (const auto& r : avg.rows()) step_row |= r.key == "ProfilerStep*" && r.count == 2;
  EXPECT_TRUE(step_row);
}

TEST(SessionTest, SixteenThreadsDropsReachMetadataTableAndJson) {
  ProfilerOptions options;
  options.thread_buffer_records = 500;
  Profiler prof(options);
  prof.Start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 800; ++i) {
        OPSCOPE_SCOPE("worker_op");
      }
    });
  }
  for (auto& t : threads) t.join();
  prof.Stop();
  EXPECT_EQ(SlicesNamed(prof.trace(), "worker_op").size(), 16u * 500u);
  uint64_t dropped = 0;
  for (const auto& [reason, n] : prof.trace().metadata().dropped) {
    if (reason == "thread_buffer_full") dropped = n;
  }
  EXPECT_EQ(dropped, 16u * 300u);
  std::string table = prof.key_averages().Table();
  EXPECT_NE(table.find("Events dropped while recording: 4800\n"), std::string::npos) << table;
  std::string path = TempPath("drops.json");
  prof.export_chrome_trace(path);
  auto json = ReadChromeTrace(path);
  ASSERT_EQ(json.error, "");
  EXPECT_EQ(json.dropped_json, "{\"thread_buffer_full\":4800}");
}

TEST(SessionTest, ShapesAreRecordedAndGrouped) {
  ProfilerOptions options;
  options.record_shapes = true;
  Profiler prof(options);
  uint32_t name = InternName("aten::add");
  std::array<int64_t, 2> a = {4, 8}, b = {8};
  prof.Start();
  EXPECT_TRUE(RecordShapesEnabled());
  {
    std::array<InputShape, 2> s = {InputShape{a.data(), 2}, InputShape{b.data(), 1}};
    RecordScope op(name, s);
  }
  {
    std::array<InputShape, 2> s = {InputShape{a.data(), 2}, InputShape{nullptr, 0, false}};
    RecordScope op(name, s);
  }
  prof.Stop();
  KeyAverages grouped = prof.key_averages(/*group_by_input_shape=*/true);
  std::vector<std::string> shapes;
  for (const auto& r : grouped.rows()) {
    if (r.key == "aten::add") shapes.push_back(r.input_shapes);
  }
  EXPECT_EQ(shapes, (std::vector<std::string>{"[[4, 8], [8]]", "[[4, 8], []]"}));
  std::string path = TempPath("shapes.json");
  prof.export_chrome_trace(path);
  auto json = ReadChromeTrace(path);
  ASSERT_EQ(json.error, "");
  int with_dims = 0;
  for (const auto& e : json.events) {
    if (e.name == "aten::add") with_dims += e.args.count("Input Dims");
    if (e.name == "aten::add" && e.args.count("Input Dims")) {
      EXPECT_TRUE(e.args.at("Input Dims") == "[[4,8],[8]]" ||
                  e.args.at("Input Dims") == "[[4,8],[]]")
          << e.args.at("Input Dims");
    }
  }
  EXPECT_EQ(with_dims, 2);
}

TEST(SessionTest, HostilNamesAreEscaped) {
  Profiler prof;
  prof.Start();
  const std::string nasty = "say \"hi\" \\ to\nall\t\x01 and \xff\xfe";
  { RecordFunction fn(nasty); }
  prof.Stop();
  std::string path = TempPath("escape.json");
  prof.export_chrome_trace(path);
  auto json = ReadChromeTrace(path);
  ASSERT_EQ(json.error, "");
  bool found = false;
  for (const auto& e : json.events) {
    found |= e.name == "say \"hi\" \\ to\nall\t\x01 and \xef\xbf\xbd\xef\xbf\xbd";
  }
  EXPECT_TRUE(found);
}

TEST(SessionTest, CpuUtilAndHostMemoryBecomeCounterTracks) {
  ProfilerOptions options;
  options.device.modes = {ProfileMode::kCpuUtil, ProfileMode::kHostMemory};
  options.device.sample_period_ms = 2;
  Profiler prof(options);
  prof.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  prof.Stop();
  std::map<std::string, int> samples;
  for (const auto& c : prof.trace().counters()) {
    samples[std::string(prof.trace().Str(prof.trace().tracks()[c.track].name))] += 1;
  }
  EXPECT_GE(samples["CPU Utilization (%)"], 2);
  EXPECT_GE(samples["Process RSS (MB)"], 2);
}

TEST(SessionTest, FlushHookAndInFlightQueryRunAtStop) {
  int flushes = 0;
  int flush_id = RegisterDeviceFlushHook([&flushes] {
    ++flushes;
    DeviceActivity k;
    k.name = "late_kernel";
    k.clock = ActivityClock::kHost;
    k.start = NowNs();
    k.end = k.start + 1000;
    ReportDeviceActivity(k);
  });
  int query_id = RegisterDeviceInFlightQuery([] { return uint64_t{2}; });
  ProfilerOptions options;
  options.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
  Profiler prof(options);
  prof.Start();
  prof.Stop();
  UnregisterDeviceHooks(flush_id);
  UnregisterDeviceHooks(query_id);
  EXPECT_EQ(flushes, 1);
  EXPECT_EQ(SlicesNamed(prof.trace(), "late_kernel").size(), 1u);
  bool in_flight = false;
  for (const auto& [reason, n] : prof.trace().metadata().dropped) {
    in_flight |= reason == "in_flight_at_stop" && n == 2;
  }
  EXPECT_TRUE(in_flight);
}

TEST(SessionTest, BadDeviceConfigIsRejectedClearly) {
  ProfilerOptions options;
  options.device.capture_enabled_for_nc = "0,5-2";
  Profiler prof(options);
  try {
    prof.Start();
    FAIL();
  } catch (const ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find("0,5-2"), std::string::npos);
  }
  EXPECT_FALSE(prof.running());
  EXPECT_FALSE(ProfilingActive());
}

}  // namespace
}  // namespace opscope
