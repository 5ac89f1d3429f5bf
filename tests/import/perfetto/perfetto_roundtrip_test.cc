// The Perfetto writer read back: every fixture trace (and the RMSNorm demo's traces), converted to
// .pftrace, imports to the same model and the same report, byte for byte (text and --json, also
// with input shapes, memory and the performance model); the output decodes with Perfetto's own
// proto (protoc --decode as perfetto.protos.Trace); `opscope convert` writes both formats and
// fails clearly.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

#include "opscope/analysis.h"
#include "opscope/export.h"
#include "opscope/import.h"
#include "tests/analysis/fixture_traces.h"
#include "tests/analysis/test_support.h"
#include "tests/common/temp_dir.h"

namespace opscope::testing {
namespace {

namespace fs = std::filesystem;

// Reports in every form the CLI prints them, for one trace.
std::vector<std::string> Reports(const Trace& trace) {
  std::vector<std::string> out;
  ReportOptions plain;
  plain.file = "trace";
  ReportOptions rich = plain;
  rich.group_by_input_shape = true;
  rich.memory = true;
  rich.rows = -1;
  ReportOptions perf = plain;
  perf.perf = true;
  for (const ReportOptions& options : {plain, rich, perf}) {
    try {
      out.push_back(FormatReport(trace, options));
      out.push_back(ReportJson(trace, options));
    } catch (const std::exception& e) {
      out.push_back(std::string("threw: ") + e.what());
    }
  }
  return out;
}

// The model field by field, so a difference says where it is.
void ExpectSameModel(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.processes().size(), b.processes().size());
  for (size_t i = 0; i < a.processes().size(); ++i) {
    const Process &x = a.processes()[i], &y = b.processes()[i];
    EXPECT_EQ(x.pid, y.pid);
    EXPECT_EQ(x.pid_text, y.pid_text);
    EXPECT_EQ(a.Str(x.name), b.Str(y.name));
    EXPECT_EQ(a.Str(x.labels), b.Str(y.labels));
    EXPECT_EQ(x.sort_index, y.sort_index);
    EXPECT_EQ(x.is_device, y.is_device);
  }
  ASSERT_EQ(a.tracks().size(), b.tracks().size());
  for (size_t i = 0; i < a.tracks().size(); ++i) {
    const Track &x = a.tracks()[i], &y = b.tracks()[i];
    EXPECT_EQ(x.process, y.process);
    EXPECT_EQ(x.tid, y.tid);
    EXPECT_EQ(x.tid_text, y.tid_text);
    EXPECT_EQ(a.Str(x.name), b.Str(y.name));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.lanes, y.lanes);
  }
  ASSERT_EQ(a.slices().size(), b.slices().size());
  for (size_t i = 0; i < a.slices().size(); ++i) {
    const Slice &x = a.slices()[i], &y = b.slices()[i];
    SCOPED_TRACE("slice " + std::to_string(i) + " " + std::string(a.Str(x.name)));
    ASSERT_EQ(x.ts_ns, y.ts_ns);
    ASSERT_EQ(x.dur_ns, y.dur_ns);
    ASSERT_EQ(x.track, y.track);
    ASSERT_EQ(a.Str(x.name), b.Str(y.name));
    ASSERT_EQ(a.Str(x.category), b.Str(y.category));
    ASSERT_EQ(x.kind, y.kind);
    ASSERT_EQ(x.external_id, y.external_id);
    ASSERT_EQ(x.correlation, y.correlation);
    ASSERT_EQ(a.Str(x.input_shapes), b.Str(y.input_shapes));
    ASSERT_EQ(x.depth, y.depth);
    ASSERT_EQ(x.parent, y.parent);
    ASSERT_EQ(x.args == kNone, y.args == kNone);
  }
  ASSERT_EQ(a.instants().size(), b.instants().size());
  for (size_t i = 0; i < a.instants().size(); ++i) {
    const Instant &x = a.instants()[i], &y = b.instants()[i];
    EXPECT_EQ(x.ts_ns, y.ts_ns);
    EXPECT_EQ(x.track, y.track);
    EXPECT_EQ(a.Str(x.name), b.Str(y.name));
    EXPECT_EQ(x.scope, y.scope);
  }
  ASSERT_EQ(a.counters().size(), b.counters().size());
  for (size_t i = 0; i < a.counters().size(); ++i) {
    EXPECT_EQ(a.counters()[i].ts_ns, b.counters()[i].ts_ns);
    EXPECT_EQ(a.counters()[i].track, b.counters()[i].track);
    EXPECT_EQ(a.counters()[i].value, b.counters()[i].value);
  }
  size_t bound = 0;
  for (const Flow& f : a.flows()) bound += f.from != kNone && f.to != kNone && f.from != f.to;
  EXPECT_EQ(b.flows().size(), bound);
  const TraceMetadata &x = a.metadata(), &y = b.metadata();
  EXPECT_EQ(x.base_time_ns, y.base_time_ns);
  EXPECT_EQ(x.device_type, y.device_type);
  EXPECT_EQ(x.schema_version, y.schema_version);
  EXPECT_EQ(x.extra, y.extra);
  EXPECT_EQ(x.dropped, y.dropped);
}

// protoc (Debian protobuf-compiler) reads `path` as a perfetto.protos.Trace; "" when protoc is
// absent (the check is then skipped), else its exit status and errors.
std::string DecodeWithProtoc(const std::string& path) {
#ifdef OPSCOPE_PROTOC
  const fs::path proto = FixturesDir() / "perfetto" / "perfetto_trace.proto";
  const CommandResult r =
      RunCommand(std::string("'") + OPSCOPE_PROTOC + "' --decode=perfetto.protos.Trace -I '" +
                 proto.parent_path().string() + "' perfetto_trace.proto < '" + path +
                 "' > /dev/null 2>&1; echo $?");
  return r.output;
#else
  (void)path;
  return "";
#endif
}

TEST(PerfettoRoundTrip, EveryFixtureTraceImportsBackToTheSameReport) {
  ScopedTempDir dir("opscope_perfetto_roundtrip");
  bool decoded_one = false;
  ForEachFixtureTrace([&](const fs::path& path, const Trace& original) {
    const std::string out = dir.File(path.filename().string() + ".pftrace");
    const Status written = WritePerfettoTrace(original, out);
    ASSERT_TRUE(written.ok()) << written.message();
    Trace back;
    ImportStats stats;
    const Status read = ImportTrace(out, &back, &stats);
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_EQ(stats.format, TraceFormat::kPerfetto);
    EXPECT_EQ(stats.skipped, 0u) << (stats.warnings.empty() ? "" : stats.warnings.front());
    ExpectSameModel(original, back);
    const std::vector<std::string> a = Reports(original), b = Reports(back);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "report form " << i;
    // Smaller than the JSON it came from (interned strings, varint deltas).
    EXPECT_LT(fs::file_size(out), ReadMaybeGzip(path).size());
    if (!decoded_one) {
      const std::string decoded = DecodeWithProtoc(out);
      if (!decoded.empty()) {
        EXPECT_EQ(decoded, "0\n") << "protoc --decode failed on " << out;
      }
      decoded_one = true;
    }
  });
}

TEST(PerfettoRoundTrip, GzipAndGeneratedCornerCases) {
  // Overlapping slices that do not nest, zero-length slices at a parent's end, negative times,
  // string pids and tids, flows sharing ids across categories, instants of each scope, counters.
  Trace t;
  const uint32_t host = t.AddProcess(7, "host");
  const uint32_t dev = t.AddProcess(-1, "GPU 0", true);
  t.MutableProcess(dev).pid_text = "GPU 0";
  const uint32_t thread = t.AddThreadTrack(host, 8, "main");
  const uint32_t stream = t.AddThreadTrack(dev, 7, "stream 7", TrackKind::kDeviceStream);
  t.MutableTrack(stream).tid_text = "stream 7";
  const uint32_t counter = t.AddThreadTrack(host, 99, "mem", TrackKind::kCounter);
  t.metadata().base_time_ns = 1700000000000000000;
  t.metadata().extra.emplace_back("deviceProperties", "[{\"id\": 0}]");
  auto add = [&](uint32_t track, const char* name, const char* cat, ActivityKind kind, int64_t ts,
                 int64_t dur, const char* args) {
    Slice s;
    s.track = track;
    s.name = t.Intern(name);
    s.category = t.Intern(cat);
    s.kind = kind;
    s.ts_ns = ts;
    s.dur_ns = dur;
    if (args != nullptr) s.args = t.AddArgs(args);
    return t.AddSlice(s);
  };
  const uint32_t a = add(thread, "a", "cpu_op", ActivityKind::kCpuOp, -500, 1000,
                         "{\"External id\": 4, \"Input Dims\": [[1, 2], []], \"x\": 1.50}");
  add(thread, "b", "cpu_op", ActivityKind::kCpuOp, 200, 1000, "{\"s\": \"\\u00e9\", \"n\": null}");
  add(thread, "c", "cpu_op", ActivityKind::kUserAnnotation, 500, 0, nullptr);
  const uint32_t k = add(stream, "k", "kernel", ActivityKind::kKernel, 600, 300,
                         "{\"correlation\": 9, \"grid\": [4, 1, 1], \"empty\": {}}");
  Flow f1{9, t.Intern("ac2g"), t.Intern("ac2g"), a, k};
  Flow f2{9, t.Intern("fwdbwd"), t.Intern("fwdbwd"), a, k};
  t.AddFlow(f1);
  t.AddFlow(f2);
  t.AddInstant({100, t.Intern("[memory]"), 0, thread, t.AddArgs("{\"Bytes\": 512}"), 'p'});
  t.AddInstant({150, t.Intern("g"), t.Intern("cat"), thread, kNone, 'g'});
  t.AddCounter({0, 1.25, counter});
  t.AddCounter({10, 3, counter});
  t.Finalize();
  ScopedTempDir dir("opscope_perfetto_corner");
  for (const char* name : {"t.pftrace", "t.pftrace.gz"}) {
    const std::string out = dir.File(name);
    ASSERT_TRUE(WritePerfettoTrace(t, out).ok());
    Trace back;
    const Status read = ImportTrace(out, &back);
    ASSERT_TRUE(read.ok()) << read.message();
    ExpectSameModel(t, back);
    EXPECT_EQ(Reports(t), Reports(back));
    for (uint32_t i = 0; i < t.slices().size(); ++i) {
      EXPECT_EQ(t.FindArg(t.slices()[i].args, "x"), back.FindArg(back.slices()[i].args, "x"));
      EXPECT_EQ(t.FindArg(t.slices()[i].args, "s"), back.FindArg(back.slices()[i].args, "s"));
      EXPECT_EQ(t.FindArg(t.slices()[i].args, "empty"),
                back.FindArg(back.slices()[i].args, "empty"));
    }
    ASSERT_EQ(back.flows().size(), 2u);
    std::set<std::string> categories;
    for (const Flow& f : back.flows()) {
      EXPECT_EQ(f.id, 9u);
      categories.insert(std::string(back.Str(f.category)));
    }
    EXPECT_EQ(categories, (std::set<std::string>{"ac2g", "fwdbwd"}));
  }
}

TEST(PerfettoRoundTrip, ConvertCommandWritesBothFormatsAndFailsClearly) {
  ASSERT_FALSE(FixturesDir().empty()) << FixturesProblem();
  ScopedTempDir dir("opscope_convert");
  const fs::path in =
      FixturesDir() / "traces" / "hta" / "triton_example" / "triton_example.json.gz";
  const std::string pf = dir.File("t.pftrace"), json = dir.File("t.json.gz");
  CommandResult r = RunOpscope("convert --quiet '" + in.string() + "' '" + pf + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunOpscope("convert --quiet '" + pf + "' '" + json + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The three open to the same report (but for the file they name).
  auto report = [](const std::string& path) {
    std::string out = RunOpscope("report --quiet --json '" + path + "'").output;
    const size_t at = out.find(path);
    if (at != std::string::npos) out.replace(at, path.size(), "FILE");
    return out;
  };
  const std::string original = report(in.string());
  EXPECT_NE(original.find("\"key_averages\""), std::string::npos);
  EXPECT_EQ(original, report(pf));
  EXPECT_EQ(original, report(json));
  // An output name that says no format, an input that is no trace, a folder that cannot be written.
  r = RunOpscope("convert '" + in.string() + "' '" + dir.File("t.txt") + "'", Stderr::kMerged);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("*.pftrace"), std::string::npos) << r.output;
  r = RunOpscope("convert '" + dir.File("missing.json") + "' '" + pf + "'", Stderr::kMerged);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("missing.json"), std::string::npos) << r.output;
  r = RunOpscope(
      "convert --quiet '" + in.string() + "' '" + dir.File("no/such/dir/t.pftrace") + "'",
      Stderr::kMerged);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("cannot write Perfetto trace"), std::string::npos) << r.output;
}

TEST(PerfettoRoundTrip, RmsNormDemoTracesConvertToTheSameReport) {
  ScopedTempDir dir("opscope_perfetto_demo");
  CommandResult r = RunOpscope("demo rmsnorm --shape 16,256 --iters 3 --warmup 1 --out '" +
                               dir.path().string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t converted = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !(name.ends_with(".json") || name.ends_with(".json.gz"))) continue;
    SCOPED_TRACE(e.path().string());
    Trace original;
    ASSERT_TRUE(ImportTrace(e.path().string(), &original).ok());
    const std::string out = e.path().string() + ".pftrace";
    ASSERT_TRUE(WritePerfettoTrace(original, out).ok());
    Trace back;
    ASSERT_TRUE(ImportTrace(out, &back).ok());
    ExpectSameModel(original, back);
    EXPECT_EQ(Reports(original), Reports(back));
    ++converted;
  }
  EXPECT_GE(converted, 2u) << "the demo should write a trace per variant";
}

}  // namespace
}  // namespace opscope::testing
