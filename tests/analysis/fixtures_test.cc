// Every real trace in the shared fixtures imports without error and gives a self-consistent
// report; opscope's own chrome-trace export reads back unchanged; diff of a trace with itself is
// empty.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/export.h"
#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> AllTraces() { return testing::TraceFiles(testing::FixturesDir() / "traces"); }

bool ValidJson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(text).get(doc) == simdjson::SUCCESS;
}

TEST(FixturesTest, EveryFixtureImportsAndReportsConsistently) {
  const auto traces = AllTraces();
  ASSERT_GE(traces.size(), 9u) << "fixtures not found under " << testing::FixturesDir() << " "
                               << testing::FixturesProblem();
  for (const fs::path& path : traces) {
    SCOPED_TRACE(path.string());
    Trace trace;
    ImportStats stats;
    Status st = ImportTrace(path.string(), &trace, &stats);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(stats.skipped, 0u) << (stats.warnings.empty() ? "" : stats.warnings[0]);
    EXPECT_GT(stats.slices, 0u);
    EXPECT_GT(stats.json_bytes, stats.input_bytes);  // all fixtures are gzip

    uint64_t timeline_activities = 0, kernels = 0;
    for (const Slice& s : trace.slices()) {
      timeline_activities += s.kind == ActivityKind::kKernel || s.kind == ActivityKind::kMemcpy ||
                             s.kind == ActivityKind::kMemset;
      kernels += s.kind == ActivityKind::kKernel;
      EXPECT_GE(s.dur_ns, 0);
    }
    const bool cpu_only = path.string().find("cpu_only") != std::string::npos;
    EXPECT_EQ(trace.metadata().device_type.empty(), cpu_only);
    if (!cpu_only) {
      EXPECT_GT(timeline_activities, 0u);
    }

    const DeviceTimeline all = ComputeDeviceTimeline(trace, kNone, /*include_unlinked=*/true);
    const DeviceTimeline tl = ComputeDeviceTimeline(trace);
    EXPECT_EQ(all.activities, timeline_activities);
    EXPECT_EQ(tl.activities + tl.unlinked_activities, timeline_activities);
    for (const DeviceTimeline* t : {&all, &tl}) {
      EXPECT_LE(t->busy_ns, t->total_ns);
      EXPECT_EQ(t->idle_ns, t->total_ns - t->busy_ns);
      EXPECT_LE(t->computation_ns, t->busy_ns);
      EXPECT_LE(t->exposed_comm_ns, t->total_comm_ns);
      EXPECT_LE(t->exposed_memcpy_ns, t->total_memcpy_ns);
      EXPECT_EQ(t->computation_ns + t->exposed_comm_ns + t->exposed_memcpy_ns, t->busy_ns);
    }
    if (path.string().find("nccl") != std::string::npos) {
      EXPECT_GT(tl.total_comm_ns, 0);
    }

    const OpSummary ops = ComputeOpSummary(trace);
    int64_t attributed = 0;
    for (const OpDeviceTime& r : ops.rows) {
      EXPECT_GT(r.count, 0) << r.name;
      EXPECT_LE(r.direct_device_ns, r.subtree_device_ns) << r.name;
      if (r.calls > 0) {
        EXPECT_LE(r.count, r.calls) << r.name;
      }
      attributed += r.direct_activities;
    }
    EXPECT_EQ(static_cast<uint64_t>(attributed) + ops.unattributed_activities, timeline_activities);

    const KernelSummary ks = ComputeKernelSummary(trace);
    int64_t kernel_count = 0;
    for (const KernelStats& k : ks.rows) {
      kernel_count += k.count;
      EXPECT_LE(k.min_ns, k.mean_ns());
      EXPECT_LE(k.mean_ns(), k.max_ns);
    }
    EXPECT_EQ(static_cast<uint64_t>(kernel_count), kernels);

    const LaunchStatistics ls = ComputeLaunchStatistics(trace);
    EXPECT_EQ(static_cast<uint64_t>(ls.launch_delay.count) + ls.unlinked_activities,
              timeline_activities);
    EXPECT_LE(ls.launch_delay.p50_ns, ls.launch_delay.max_ns);

    const std::string text = FormatReport(trace, {.sort_by = "", .rows = 5});
    EXPECT_NE(text.find("timeline"), std::string::npos);
    if (!cpu_only) {
      EXPECT_NE(text.find(trace.metadata().device_type), std::string::npos);
    }
    EXPECT_TRUE(ValidJson(ReportJson(trace, {.sort_by = "", .rows = 5})));

    const TraceDiff self = DiffTraces(trace, trace);
    EXPECT_TRUE(self.rows.empty());
    EXPECT_TRUE(ValidJson(self.ToJson()));
  }
}

// The parallel importer, with chunks small enough that every fixture is spread over the threads,
// gives the same trace as one thread: the same report, the same stats and warnings, and the same
// string ids and tracks (strings are interned in stream order whatever the thread count).
TEST(FixturesTest, EveryThreadCountImportsTheSameTrace) {
  const auto traces = AllTraces();
  ASSERT_GE(traces.size(), 9u) << testing::FixturesProblem();
  ReportOptions report;
  report.rows = -1;
  for (const fs::path& path : traces) {
    SCOPED_TRACE(path.string());
    ImportOptions one;
    one.threads = 1;
    Trace expected;
    ImportStats expected_stats;
    ASSERT_TRUE(ImportTrace(path.string(), &expected, &expected_stats, one).ok());
    const std::string expected_json = ReportJson(expected, report);
    for (int threads : {2, 3, 8}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      ImportOptions many;
      many.threads = threads;
      many.chunk_bytes = 16u << 10;
      Trace trace;
      ImportStats stats;
      ASSERT_TRUE(ImportTrace(path.string(), &trace, &stats, many).ok());
      EXPECT_EQ(stats.events, expected_stats.events);
      EXPECT_EQ(stats.slices, expected_stats.slices);
      EXPECT_EQ(stats.warnings, expected_stats.warnings);
      ASSERT_EQ(trace.slices().size(), expected.slices().size());
      ASSERT_EQ(trace.strings().size(), expected.strings().size());
      for (size_t i = 0; i < trace.slices().size(); ++i) {
        const Slice& a = trace.slices()[i];
        const Slice& b = expected.slices()[i];
        ASSERT_TRUE(a.name == b.name && a.track == b.track && a.ts_ns == b.ts_ns &&
                    a.dur_ns == b.dur_ns && a.args == b.args)
            << "slice " << i;
      }
      // Every args object reads back the same (the parse threads pack and compress args into
      // blocks of their own), in handle order so each block is inflated once.
      std::vector<uint32_t> handles;
      for (const Slice& s : expected.slices()) {
        if (s.args != kNone) handles.push_back(s.args);
      }
      std::sort(handles.begin(), handles.end());
      for (uint32_t h : handles) ASSERT_EQ(trace.ArgsJson(h), expected.ArgsJson(h)) << h;
      EXPECT_TRUE(ReportJson(trace, report) == expected_json);
    }
  }
}

TEST(FixturesTest, DiffFindsAddedRemovedAndChangedOps) {
  const fs::path dir = testing::FixturesDir() / "traces" / "tracelens" / "mi300";
  const auto traces = testing::TraceFiles(dir);
  ASSERT_EQ(traces.size(), 2u);
  Trace a, b;
  ASSERT_TRUE(ImportTrace(traces[0].string(), &a).ok());
  ASSERT_TRUE(ImportTrace(traces[1].string(), &b).ok());
  const TraceDiff d = DiffTraces(a, b);
  ASSERT_FALSE(d.rows.empty());
  bool added = false, removed = false, changed = false;
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const OpDiff& r = d.rows[i];
    added |= r.change == OpDiff::Change::kAdded;
    removed |= r.change == OpDiff::Change::kRemoved;
    changed |= r.change == OpDiff::Change::kChanged;
    if (i > 0) {
      EXPECT_GE(d.rows[i - 1].impact_ns(), r.impact_ns());
    }
    if (r.change == OpDiff::Change::kAdded) {
      EXPECT_EQ(r.calls_a, 0);
    }
    if (r.change == OpDiff::Change::kRemoved) {
      EXPECT_EQ(r.calls_b, 0);
    }
  }
  EXPECT_TRUE(added && removed && changed);
  EXPECT_TRUE(ValidJson(d.ToJson()));
  EXPECT_NE(d.ToText(5).find("more rows"), std::string::npos);
}

// Kernels by name, as HTA's trace diff counts them. Expected counts from the raw JSON (Python:
// names of cat kernel/gpu_memcpy/gpu_memset events in each trace; names only in B are added,
// only in A removed; the 3 in both all change count; attn_fwd 12 -> 35 calls, sum of dur
// 374.687 -> 5695.372 us).
TEST(FixturesTest, DiffCountsKernelsAddedRemovedAndChanged) {
  const fs::path dir = testing::FixturesDir() / "traces" / "tracelens" / "mi300";
  const auto traces = testing::TraceFiles(dir);
  ASSERT_EQ(traces.size(), 2u);
  Trace a, b;
  ASSERT_TRUE(ImportTrace(traces[0].string(), &a).ok());
  ASSERT_TRUE(ImportTrace(traces[1].string(), &b).ok());
  const TraceDiff d = DiffTraces(a, b);
  int added = 0, removed = 0, changed = 0;
  for (const KernelDiff& k : d.kernels) {
    added += k.change == OpDiff::Change::kAdded;
    removed += k.change == OpDiff::Change::kRemoved;
    changed += k.change == OpDiff::Change::kChanged;
    if (k.name == "attn_fwd") {
      EXPECT_EQ(k.count_a, 12);
      EXPECT_EQ(k.count_b, 35);
      EXPECT_EQ(k.total_ns_a, 374687);
      EXPECT_EQ(k.total_ns_b, 5695372);
    }
  }
  EXPECT_EQ(added, 26);
  EXPECT_EQ(removed, 13);
  EXPECT_EQ(changed, 3);
  EXPECT_NE(d.ToText(5).find("Kernels (device activity by name): 26 added, 13 removed, 3 changed"),
            std::string::npos);
  EXPECT_TRUE(ValidJson(d.ToJson()));
  // A trace against itself: no kernel differs.
  EXPECT_TRUE(DiffTraces(a, a).kernels.empty());
}

// opscope's own exporter output must read back into the same model.
TEST(FixturesTest, OpscopeChromeExportRoundTrips) {
  Trace original;
  const uint32_t host = original.AddProcess(4242, "python");
  const uint32_t dev = original.AddProcess(0, "NeuronCore 0", /*is_device=*/true);
  const uint32_t thread = original.AddThreadTrack(host, 4243, "thread 4243 (python)");
  const uint32_t queue = original.AddThreadTrack(dev, 1, "queue 1", TrackKind::kDeviceStream);
  original.metadata().device_type = "NEURON";
  original.metadata().base_time_ns = 1700000000123456789;
  original.metadata().dropped.emplace_back("ring_buffer_overwrite", 3);
  auto add = [&](uint32_t track, const char* name, const char* cat, ActivityKind kind, int64_t ts,
                 int64_t dur, int64_t ext, int64_t corr) {
    Slice s;
    s.track = track;
    s.name = original.Intern(name);
    s.category = original.Intern(cat);
    s.kind = kind;
    s.ts_ns = ts;
    s.dur_ns = dur;
    s.external_id = ext;
    s.correlation = corr;
    // As opscope's trace builder does: the link ids also travel in args.
    std::string args = "{\"External id\": " + std::to_string(ext);
    if (corr != 0) args += ", \"correlation\": " + std::to_string(corr);
    s.args = original.AddArgs(args + "}");
    return original.AddSlice(s);
  };
  add(thread, "aten::mul", "cpu_op", ActivityKind::kCpuOp, 1000, 5000, 1, 0);
  const uint32_t rt = add(thread, "nrta_execute_schedule", "privateuse1_runtime",
                          ActivityKind::kRuntime, 2000, 1000, 1, 7);
  const uint32_t k =
      add(queue, "nc_exec_running", "kernel", ActivityKind::kKernel, 3500, 2500, 1, 7);
  Flow f;
  f.id = 7;
  f.category = original.Intern("ac2g");
  f.name = f.category;
  f.from = rt;
  f.to = k;
  original.AddFlow(f);
  original.Finalize();

  const std::string json = ChromeTraceJson(original, "roundtrip.json");
  Trace back;
  ImportStats stats;
  Status st = ImportTraceFromMemory(json, &back, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.skipped, 0u);
  EXPECT_EQ(back.metadata().device_type, "NEURON");
  EXPECT_EQ(back.metadata().base_time_ns, original.metadata().base_time_ns);
  ASSERT_EQ(back.metadata().dropped.size(), 1u);
  EXPECT_EQ(back.metadata().dropped[0].second, 3u);
  ASSERT_EQ(back.slices().size(), original.slices().size());
  for (size_t i = 0; i < original.slices().size(); ++i) {
    const Slice& x = original.slices()[i];
    const Slice& y = back.slices()[i];
    EXPECT_EQ(original.Str(x.name), back.Str(y.name));
    EXPECT_EQ(x.ts_ns, y.ts_ns);
    EXPECT_EQ(x.dur_ns, y.dur_ns);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.correlation, y.correlation);
  }
  ASSERT_EQ(back.flows().size(), 1u);
  const uint32_t kb = back.flows()[0].to;
  EXPECT_EQ(back.Str(back.slices()[kb].name), "nc_exec_running");
  EXPECT_EQ(back.Str(back.slices()[back.Link(kb).op].name), "aten::mul");
  EXPECT_EQ(ComputeOpSummary(back).rows.at(0).direct_device_ns, 2500);
  EXPECT_NE(FormatReport(back).find("NEURON"), std::string::npos);
}

}  // namespace
}  // namespace opscope
