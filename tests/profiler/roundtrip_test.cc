// A live profile exported as Kineto JSON and read back by opscope's importer gives the same
// key_averages table: the exporter writes everything the table needs (kinds, nesting, External
// ids, correlations, device type) and loses no time precision.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/profiler.h"
#include "tests/common/temp_dir.h"

namespace opscope {
namespace {

TEST(RoundTripTest, ImportedExportHasTheSameTable) {
  RegisterDevice({.name = "neuron", .process_name = "NeuronCore", .lane_names = {}});
  ProfilerOptions options;
  options.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
  options.record_shapes = true;
  Profiler prof(options);
  prof.Start();
  const int64_t h0 = NowNs();
  ReportClockSync({.device = 1, .host_ns = h0, .device_ticks = h0 + 777});
  for (int i = 0; i < 3; ++i) {
    RecordFunction step("train \"step\" " + std::to_string(i));
    OPSCOPE_SCOPE("aten::linear");
    {
      OPSCOPE_SCOPE("aten::addmm");
      DeviceActivity rt;
      rt.kind = ActivityKind::kRuntime;
      rt.clock = ActivityClock::kHost;
      rt.name = "nrta_execute_schedule";
      rt.external_id = CurrentOpCorrelation();
      rt.correlation = NewCorrelationId();
      rt.host_tid = CurrentThreadId();
      rt.start = NowNs();
      while (NowNs() < rt.start + 3'000) {
      }
      rt.end = NowNs();
      ReportDeviceActivity(rt);
      DeviceActivity k = rt;
      k.kind = ActivityKind::kKernel;
      k.clock = ActivityClock::kDevice;
      k.name = "nc_exec_running";
      k.device = 1;
      k.stream = 2;
      k.start = rt.end + 777 + 500;
      k.end = k.start + 10'000 + i;
      ReportDeviceActivity(k);
    }
  }
  prof.Stop();
  const opscope::testing::ScopedTempDir dir("opscope_roundtrip");
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    std::string path = dir.File(name);
    prof.export_chrome_trace(path);
    Trace imported;
    Status st = ImportTrace(path, &imported);
    ASSERT_TRUE(st.ok()) << st.message();
    for (bool by_shape : {false, true}) {
      std::string live = prof.key_averages(by_shape).Table("self_cpu_time_total");
      std::string read = KeyAverages::FromTrace(imported, {.group_by_input_shape = by_shape})
                             .Table("self_cpu_time_total");
      EXPECT_EQ(read, live) << name << (by_shape ? " grouped by shape" : "");
      EXPECT_NE(live.find("Self NEURON"), std::string::npos) << live;
      if (std::getenv("OPSCOPE_SHOW_TABLES") != nullptr) std::printf("%s\n", live.c_str());
    }
    EXPECT_EQ(imported.flows().size(), prof.trace().flows().size());
  }
}

}  // namespace
}  // namespace opscope
