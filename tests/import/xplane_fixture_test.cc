// The XPlane reader on the shared fixtures, against independent readers: protoc's decode of the
// same file (tests/import/xplane/xspace_text.py, run here) for what each plane and line holds, and
// TraceLens's JAX gpu_timeline (tests/import/xplane/tracelens_gpu_timeline.json, made by
// tracelens_jax_timeline.py with TraceLens's own functions) for the device timeline per GPU.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/key_averages.h"
#include "tests/analysis/test_support.h"
#include "tests/common/temp_dir.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

const char kGpuTrace[] = "traces/xplane/tensorflow-profiler/34.83.195.179_6003.xplane.pb";
const char kTpuTrace[] = "traces/xplane/xprof/tpu_inference_2.xplane.pb";

fs::path SourceDir() {
  const char* dir = std::getenv("OPSCOPE_SOURCE_DIR");
  return dir != nullptr ? fs::path(dir) : fs::current_path();
}

// stdout of a shell command; "" when it fails.
std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  return pclose(p) == 0 ? out : std::string();
}

class XPlaneFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
    path_ = (testing::FixturesDir() / kGpuTrace).string();
    const Status st = ImportTrace(path_, &trace_, &stats_);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  std::string path_;
  Trace trace_;
  ImportStats stats_;
};

// Every plane's and line's timed events, their time and the stats that decide their kind, as
// protoc decodes the file, equal the slices opscope made of them.
TEST_F(XPlaneFixtureTest, PlanesAndLinesHoldWhatProtocDecodes) {
  const fs::path proto_dir = testing::FixturesDir().parent_path() / "reference" / "xplane";
  const std::string json =
      Shell("/usr/bin/python3 " + (SourceDir() / "tests/import/xplane/xspace_text.py").string() +
            " '" + path_ + "' '" + proto_dir.string() + "'");
  ASSERT_FALSE(json.empty()) << "protoc could not decode " << path_;
  simdjson::dom::parser parser;
  simdjson::dom::array planes = parser.parse(json).get_array();
  EXPECT_EQ(stats_.format, TraceFormat::kXPlane);
  uint64_t events = 0, runtime_calls = 0, device_activity = 0, memcpys = 0;
  for (simdjson::dom::object plane : planes) {
    const std::string_view plane_name = plane["plane"].get_string();
    for (simdjson::dom::object line : plane["lines"].get_array()) {
      const int64_t n = line["events"].get_int64();
      if (n == 0) continue;
      events += static_cast<uint64_t>(n);
      const std::string_view line_name = line["line"].get_string();
      const simdjson::dom::object with = line["with_stat"].get_object();
      // The slices on this line's track.
      int64_t count = 0, total_ns = 0, runtime = 0, activity = 0, memcpy = 0;
      for (const Slice& s : trace_.slices()) {
        const Track& t = trace_.tracks()[s.track];
        if (trace_.Str(trace_.processes()[t.process].name) != plane_name) continue;
        if (t.tid != line["id"].get_int64().value()) continue;
        ++count;
        total_ns += s.dur_ns;
        runtime += s.kind == ActivityKind::kRuntime ? 1 : 0;
        activity += IsDeviceActivity(s.kind) ? 1 : 0;
        memcpy += s.kind == ActivityKind::kMemcpy ? 1 : 0;
      }
      SCOPED_TRACE(std::string(plane_name) + " / " + std::string(line_name));
      EXPECT_EQ(count, n);
      EXPECT_EQ(total_ns, line["total_ns"].get_int64().value());
      const bool device = plane_name.starts_with("/device:");
      if (device && line_name.starts_with("Stream")) {
        EXPECT_EQ(activity, n);
        EXPECT_EQ(memcpy, with["memcpy_details"].get_int64().value());
        device_activity += static_cast<uint64_t>(n);
        memcpys += static_cast<uint64_t>(memcpy);
      } else if (!device) {
        EXPECT_EQ(runtime, with["correlation_id"].get_int64().value());
        runtime_calls += static_cast<uint64_t>(runtime);
      }
    }
  }
  EXPECT_EQ(stats_.events, events);
  EXPECT_EQ(trace_.slices().size(), events);
  EXPECT_GT(device_activity, 1000u);
  EXPECT_GT(memcpys, 100u);
  // Every device activity finds the host call that launched it (CUPTI's correlation ids).
  const LaunchStatistics launches = ComputeLaunchStatistics(trace_);
  EXPECT_EQ(launches.unlinked_activities, 0u);
  EXPECT_EQ(launches.launch_delay.count, static_cast<int64_t>(device_activity));
  EXPECT_GE(runtime_calls, device_activity);
}

// TraceLens's JAX report, per GPU: busy, idle, computation, communication and memcpy.
TEST_F(XPlaneFixtureTest, DeviceTimelinesEqualTraceLensJaxGpuTimeline) {
  simdjson::dom::parser parser;
  simdjson::dom::object reference =
      parser.load((SourceDir() / "tests/import/xplane/tracelens_gpu_timeline.json").string());
  simdjson::dom::object gpus = reference["tensorflow-profiler/34.83.195.179_6003.xplane.pb"];
  const std::vector<DeviceTimelineOfDevice> devices = ComputeDeviceTimelines(trace_);
  ASSERT_EQ(devices.size(), gpus.size());
  for (const DeviceTimelineOfDevice& d : devices) {
    SCOPED_TRACE(d.device);
    simdjson::dom::object ps = gpus[d.device];
    const DeviceTimeline& tl = d.timeline;
    // The reference is in ps; this fixture's times are whole ns, so the figures are exact.
    EXPECT_EQ(tl.total_ns * 1000, ps["total_time"].get_int64().value());
    EXPECT_EQ(tl.busy_ns * 1000, ps["busy_time"].get_int64().value());
    EXPECT_EQ(tl.idle_ns * 1000, ps["idle_time"].get_int64().value());
    EXPECT_EQ(tl.computation_ns * 1000, ps["computation_time"].get_int64().value());
    EXPECT_EQ(tl.total_comm_ns * 1000, ps["total_comm_time"].get_int64().value());
    EXPECT_EQ(tl.exposed_comm_ns * 1000, ps["exposed_comm_time"].get_int64().value());
    EXPECT_EQ(tl.total_memcpy_ns * 1000, ps["total_memcpy_time"].get_int64().value());
    EXPECT_EQ(tl.exposed_memcpy_ns * 1000, ps["exposed_memcpy_time"].get_int64().value());
  }
  // The report's JSON carries them, one object per device.
  const std::string report = ReportJson(trace_);
  simdjson::dom::parser p2;
  simdjson::dom::array in_report = p2.parse(report)["device_timelines"].get_array();
  ASSERT_EQ(in_report.size(), devices.size());
  for (simdjson::dom::object o : in_report) {
    EXPECT_TRUE(gpus[o["device"].get_string().value()].error() == simdjson::SUCCESS);
    EXPECT_GT(o["busy_ns"].get_int64().value(), 0);
  }
}

// The same profile as XProf's trace viewer JSON (written from protoc's decode by xspace_text.py as
// trace_events_to_json writes it: ps / 1e6 with %.17g) imports through the Kineto JSON reader to
// the same per-GPU timelines.
TEST_F(XPlaneFixtureTest, XprofJsonOfTheSameProfileGivesTheSameTimelines) {
  testing::ScopedTempDir dir("opscope_xprof_json");
  const std::string json = dir.File("34.83.195.179_6003.trace.json");
  const fs::path proto_dir = testing::FixturesDir().parent_path() / "reference" / "xplane";
  ASSERT_EQ(std::system(("/usr/bin/python3 " +
                         (SourceDir() / "tests/import/xplane/xspace_text.py").string() + " '" +
                         path_ + "' '" + proto_dir.string() + "' --xprof-json > '" + json + "'")
                            .c_str()),
            0);
  Trace from_json;
  ImportStats stats;
  ASSERT_TRUE(ImportTrace(json, &from_json, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kKinetoJson);
  EXPECT_EQ(from_json.metadata().timeline_rule, DeviceTimelineRule::kXla);
  const std::vector<DeviceTimelineOfDevice> a = ComputeDeviceTimelines(trace_);
  const std::vector<DeviceTimelineOfDevice> b = ComputeDeviceTimelines(from_json);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].device, b[i].device);
    EXPECT_EQ(a[i].timeline.ToJson().substr(a[i].timeline.ToJson().find("\"total_ns\"")),
              b[i].timeline.ToJson().substr(b[i].timeline.ToJson().find("\"total_ns\"")));
  }
  // Every device activity links to its launch there too.
  EXPECT_EQ(ComputeLaunchStatistics(from_json).unlinked_activities, 0u);
}

// The op level: TensorFlow's ops line on each GPU is what key_averages groups device time by, and
// the kernels they ran are credited to them (the op summary's launcher too).
TEST_F(XPlaneFixtureTest, FrameworkOpsAreTheOpLevel) {
  const KeyAverages avg = KeyAverages::FromTrace(trace_);
  int64_t op_device_ns = 0;
  bool cast = false;
  for (const KeyAverage& row : avg.rows()) {
    if (row.is_device) continue;
    op_device_ns += row.self_device_time_total_ns;
    cast = cast || (row.key == "Cast" && row.self_device_time_total_ns > 0);
  }
  EXPECT_TRUE(cast);
  int64_t kernel_ns = 0;
  for (const Slice& s : trace_.slices())
    kernel_ns += s.kind == ActivityKind::kKernel ? s.dur_ns : 0;
  // Every kernel runs inside one of its GPU's ops; memcpys mostly run outside them.
  EXPECT_GE(op_device_ns, kernel_ns);
  const OpSummary ops = ComputeOpSummary(trace_);
  ASSERT_FALSE(ops.rows.empty());
  EXPECT_EQ(ops.rows.front().name, "Cast");
}

// The TPU fixture is not a valid XSpace: every byte at or above 0x80 was replaced by the three
// bytes of U+FFFD (258174 times), as a text decode does. It is read as far as it goes and the
// error says where it stopped; the trace is still finalized.
TEST(XPlaneTpuFixtureTest, ACorruptFileSaysWhereItStopped) {
  ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
  const std::string path = (testing::FixturesDir() / kTpuTrace).string();
  EXPECT_EQ(DetectTraceFormat(path), TraceFormat::kXPlane);
  Trace trace;
  ImportStats stats;
  const Status st = ImportTrace(path, &trace, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.file(), path);
  EXPECT_NE(st.message().find("byte "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("plane 0"), std::string::npos) << st.message();
  EXPECT_GT(st.offset(), 0u);
  EXPECT_TRUE(trace.finalized());
  ASSERT_FALSE(trace.metadata().warnings.empty());
  EXPECT_NE(trace.metadata().warnings.back().find("incomplete"), std::string::npos);
}

}  // namespace
}  // namespace opscope
