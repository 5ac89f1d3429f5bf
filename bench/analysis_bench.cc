// What `opscope report` and `opscope explore` compute after import, at 1 thread against N (default
// 2) side by side in one process: key_averages, the device timeline, the op summary, the kernel
// summary, the launch statistics, the whole text and JSON report, and the Explorer's TraceIndex.
// Each figure is the best of R runs (default 3), wall and CPU time; every multi-thread result is
// compared byte for byte with the one-thread result (JSON of each analysis, the report texts, the
// index's lanes and a full-range viewport), and the run fails on any difference.
//
//   analysis_bench TRACE [--threads N] [--runs R]
//   import_bench --mb 256 --keep && analysis_bench /tmp/opscope_import_bench_PID.json
//
// Target: the report's analyses (the text report) >= 1.5x faster in wall time with 2 threads
// than with 1 on the 256 MiB generated trace, on an otherwise idle 2-core machine.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "bench/fixtures.h"
#include "bench/usage.h"
#include "explorer/trace_index.h"
#include "opscope/analysis.h"
#include "opscope/import.h"

namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Timing {
  double wall = 1e30, cpu = 1e30;  // best of the runs, seconds
  std::string output;              // what the run computed, to compare across thread counts
};

Timing Time(int runs, const std::function<std::string()>& fn) {
  Timing t;
  for (int r = 0; r < runs; ++r) {
    const double c0 = CpuSeconds();
    const auto w0 = Clock::now();
    std::string out = fn();
    const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
    const double cpu = CpuSeconds() - c0;
    t.wall = std::min(t.wall, wall);
    t.cpu = std::min(t.cpu, cpu);
    if (r == 0) t.output = std::move(out);
  }
  return t;
}

std::string IndexAnswers(const opscope::explorer::TraceIndex& index) {
  opscope::JsonWriter w;
  index.WriteLanes(&w);
  opscope::explorer::ViewportQuery q;
  q.t0 = index.start_ns();
  q.t1 = index.end_ns();
  q.width_px = 1500;
  index.WriteViewport(q, &w);
  return w.Take();
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: analysis_bench [TRACE] [--threads N>=2] [--runs R]\n"
      "       (no TRACE: the largest shared fixture trace)";
  if (opscope::bench::WantsHelp(argc, argv)) return opscope::bench::Usage(kUsage);
  const char* path = nullptr;
  int threads = 2, runs = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (argv[i][0] == '-' || path != nullptr) {
      return opscope::bench::Usage(kUsage, argv[i]);
    } else {
      path = argv[i];
    }
  }
  const std::string fixture = opscope::bench::LargestFixtureTrace(OPSCOPE_FIXTURES_DIR).string();
  if (path == nullptr && !fixture.empty()) {
    path = fixture.c_str();
    std::printf("analysis_bench: the largest fixture trace, %s\n", path);
  }
  if (path == nullptr) {
    std::printf("analysis_bench: skipped: no TRACE given and no fixture traces under %s/traces\n",
                OPSCOPE_FIXTURES_DIR);
    return 0;
  }
  if (threads < 2) {
    std::fprintf(stderr, "%s\n", kUsage);
    return 2;
  }
  opscope::Trace trace;
  opscope::ImportStats stats;
  const auto i0 = Clock::now();
  const double ic0 = CpuSeconds();
  if (opscope::Status st = opscope::ImportTrace(path, &trace, &stats); !st.ok()) {
    std::fprintf(stderr, "analysis_bench: %s\n", st.message().c_str());
    return 1;
  }
  const double import_wall = std::chrono::duration<double>(Clock::now() - i0).count();
  const double import_cpu = CpuSeconds() - ic0;
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  std::printf("analysis_bench: %s, %.1f MB JSON, %zu slices, %zu tracks; load average %.2f\n", path,
              static_cast<double>(stats.json_bytes) / 1e6, trace.slices().size(),
              trace.tracks().size(), load[0]);
  std::printf("import (default threads): %.3f s wall, %.3f s CPU\n\n", import_wall, import_cpu);

  auto report_options = [](int t) {
    opscope::ReportOptions o;
    o.threads = t;
    return o;
  };
  struct Analysis {
    const char* name;
    std::function<std::string(int)> run;
  };
  const std::vector<Analysis> analyses = {
      {"key_averages",
       [&](int t) {
         return opscope::KeyAverages::FromTrace(trace, {.threads = t}).ToJson("", -1);
       }},
      {"device timeline",
       [&](int t) {
         return opscope::ComputeDeviceTimeline(trace, opscope::kNone, false, t).ToJson();
       }},
      {"op summary", [&](int t) { return opscope::ComputeOpSummary(trace, true, t).ToJson(); }},
      {"kernel summary", [&](int t) { return opscope::ComputeKernelSummary(trace, t).ToJson(); }},
      {"launch statistics",
       [&](int t) { return opscope::ComputeLaunchStatistics(trace, t).ToJson(); }},
      {"report (text)", [&](int t) { return opscope::FormatReport(trace, report_options(t)); }},
      {"report --json", [&](int t) { return opscope::ReportJson(trace, report_options(t)); }},
      {"Explorer TraceIndex",
       [&](int t) { return IndexAnswers(opscope::explorer::TraceIndex(trace, t)); }},
  };
  std::printf("%-20s  %21s  %21s  %8s  %s\n", "analysis", "1 thread wall (CPU)",
              fmt::format("{} threads wall (CPU)", threads).c_str(), "speedup", "same bytes");
  bool all_same = true;
  double report_ratio = 0;
  for (const Analysis& a : analyses) {
    const Timing one = Time(runs, [&] { return a.run(1); });
    const Timing many = Time(runs, [&] { return a.run(threads); });
    const bool same = one.output == many.output;
    all_same = all_same && same;
    const double ratio = one.wall / many.wall;
    if (std::strcmp(a.name, "report (text)") == 0) report_ratio = ratio;
    std::printf("%-20s  %8.3f s (%7.3f s)  %8.3f s (%7.3f s)  %7.2fx  %s\n", a.name, one.wall,
                one.cpu, many.wall, many.cpu, ratio, same ? "yes" : "NO");
  }
  getloadavg(load, 3);
  std::printf("\nload average at the end: %.2f (best of %d runs each)\n", load[0], runs);
  std::printf("target: report (text) >= 1.50x faster with 2 threads than 1 (wall): %.2fx %s\n",
              report_ratio, threads == 2 && report_ratio >= 1.5 ? "met" : "NOT met");
  std::printf("results identical at 1 and %d threads: %s\n", threads, all_same ? "yes" : "NO");
  return all_same ? 0 : 1;
}
