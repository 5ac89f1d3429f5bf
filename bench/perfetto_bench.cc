// Perfetto import and export on one core: MB/s of protobuf read (import into the trace model,
// finalized) and written (WritePerfettoTrace), side by side with the JSON import of the same trace
// in the same run, and the .pftrace's size against the JSON it was converted from.
//
//   perfetto_bench                 a 1 GiB generated Kineto trace (bench/generated_trace.h)
//   perfetto_bench --mb 256        a smaller one
//   perfetto_bench --runs 5        best of 5 runs per measurement (default 3)
//   perfetto_bench --keep          keep the generated files in /tmp
//   perfetto_bench --import FILE   time only the import of FILE (any format), for a profiler
//                                  (and beside it the same with args not kept)
//
// Times are the process's CPU time (one import thread), the best of the runs; inputs are read into
// the page cache before each run. Targets: import >= 500 MB/s of protobuf per core; the .pftrace
// at most a quarter of the JSON's size.
//
// Beside them, what the args cost: the same import with ImportOptions::keep_args off (the
// annotations read for the fields they fill, no args text made or stored). And the model's own
// share: the same slices, args and flows added to an empty Trace and
// finalized, with no file read at all (ModelFloor). No reader of this trace can be faster than
// that, so it bounds the import's MB/s per core.
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/generated_trace.h"
#include "bench/page_cache.h"
#include "bench/usage.h"
#include "opscope/export.h"
#include "opscope/import.h"

namespace {

namespace fs = std::filesystem;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double cpu = 1e300;
  double wall = 1e300;
};

// The best (least CPU) of `runs` runs of `fn`; `warm` is read into the page cache before each.
Timing Best(int runs, const std::string& warm, const std::function<void()>& fn) {
  Timing best;
  for (int i = 0; i < runs; ++i) {
    if (!warm.empty()) opscope::bench::WarmPageCache(warm);
    const double c0 = CpuSeconds(), w0 = WallSeconds();
    fn();
    const double cpu = CpuSeconds() - c0, wall = WallSeconds() - w0;
    if (cpu < best.cpu) best = {cpu, wall};
  }
  return best;
}

opscope::ImportStats last_stats;  // of the last Import

// `keep_args` false: the same import with ImportOptions::keep_args off (annotations still read for
// the fields they fill, no args text made or stored), a baseline that prices the args.
bool Import(const std::string& path, opscope::Trace* trace, bool keep_args = true) {
  opscope::ImportOptions options;
  options.threads = 1;
  options.keep_args = keep_args;
  opscope::ImportStats& stats = last_stats;
  const opscope::Status st = opscope::ImportTrace(path, trace, &stats, options);
  if (!st.ok()) std::fprintf(stderr, "perfetto_bench: %s\n", st.message().c_str());
  return st.ok();
}

void Row(const char* what, uint64_t bytes, const Timing& t, uint64_t events = 0) {
  std::printf("  %-44s %9.1f MB  %7.3f s CPU  %7.3f s wall  %8.1f MB/s per core", what, bytes / 1e6,
              t.cpu, t.wall, bytes / 1e6 / t.cpu);
  if (events != 0) std::printf("  %6.2f M events/s per core", events / 1e6 / t.cpu);
  std::printf("\n");
}

// What building `from`'s model costs by itself: its processes, tracks, slices (with their args),
// instants, counters and flows added to an empty trace, then Finalize(1). Strings are mapped
// once each and args texts taken out of `from` before the clock starts.
Timing ModelFloor(const opscope::Trace& from, int runs) {
  using opscope::kNone;
  using opscope::StringId;
  std::string args_text;
  std::vector<size_t> args_end(from.slices().size());
  for (size_t i = 0; i < from.slices().size(); ++i) {
    const uint32_t a = from.slices()[i].args;
    if (a != kNone) args_text += from.ArgsJson(a);
    args_end[i] = args_text.size();
  }
  opscope::Trace to;
  return Best(runs, "", [&] {
    to = opscope::Trace();
    std::vector<StringId> ids(from.strings().size(), kNone);
    auto id = [&](StringId s) {
      if (ids[s] == kNone) ids[s] = to.Intern(from.Str(s));
      return ids[s];
    };
    for (const opscope::Process& p : from.processes()) {
      to.AddProcess(p.pid, from.Str(p.name), p.is_device);
    }
    for (const opscope::Track& t : from.tracks()) {
      to.AddThreadTrack(t.process, t.tid, from.Str(t.name), t.kind);
    }
    to.ReserveSlices(from.slices().size());
    size_t args_begin = 0;
    for (size_t i = 0; i < from.slices().size(); ++i) {
      opscope::Slice s = from.slices()[i];
      s.name = id(s.name);
      s.category = id(s.category);
      s.input_shapes = id(s.input_shapes);
      s.args = to.AddArgs(std::string_view(args_text).substr(args_begin, args_end[i] - args_begin));
      args_begin = args_end[i];
      to.AddSlice(s);
    }
    for (opscope::Instant i : from.instants()) {
      i.name = id(i.name);
      i.category = id(i.category);
      i.args = kNone;
      to.AddInstant(i);
    }
    for (const opscope::CounterSample& c : from.counters()) to.AddCounter(c);
    for (opscope::Flow f : from.flows()) {
      f.category = id(f.category);
      f.name = id(f.name);
      to.AddFlow(f);
    }
    to.Finalize(1);
  });
}

// The targets, and the ratios against the baselines of the same run.
void Targets(uint64_t json_bytes, uint64_t pf_bytes, const Timing& json_import,
             const Timing& pf_import, const Timing& floor) {
  const double ratio = static_cast<double>(pf_bytes) / static_cast<double>(json_bytes);
  std::printf("\n  .pftrace / JSON size:             %.3f (target <= 0.250: %s)\n", ratio,
              ratio <= 0.25 ? "met" : "NOT met");
  std::printf("  .pftrace import, MB/s per core:   %.0f (target >= 500: %s)\n",
              pf_bytes / 1e6 / pf_import.cpu,
              pf_bytes / 1e6 / pf_import.cpu >= 500 ? "met" : "NOT met");
  std::printf("  same trace, .pftrace import time / JSON import time: %.2f\n",
              pf_import.cpu / json_import.cpu);
  std::printf("  model alone / .pftrace import time:   %.2f (the part no decoder can remove)\n",
              floor.cpu / pf_import.cpu);
}

// --import FILE: the import of FILE alone.
int ImportOnly(const std::string& path, int runs) {
  opscope::Trace trace;
  const Timing t = Best(runs, path, [&] {
    trace = opscope::Trace();
    if (!Import(path, &trace)) std::exit(1);
  });
  Row(path.c_str(), fs::file_size(path), t, last_stats.events);
  const double parse_s = last_stats.parse_seconds, finish_s = last_stats.finish_seconds;
  const Timing no_args = Best(runs, path, [&] {
    trace = opscope::Trace();
    if (!Import(path, &trace, false)) std::exit(1);
  });
  Row("  baseline: the same, args not kept", fs::file_size(path), no_args, last_stats.events);
  std::printf("  last run with args: %.3f s reading and decoding, %.3f s finishing the model\n",
              parse_s, finish_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mb = 1024;
  int runs = 3;
  bool keep = false;
  std::string import_only;
  constexpr const char* kUsage =
      "usage: perfetto_bench [--mb MB] [--runs N] [--keep] [--import FILE]";
  if (opscope::bench::WantsHelp(argc, argv)) return opscope::bench::Usage(kUsage);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
      mb = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--keep") == 0) {
      keep = true;
    } else if (std::strcmp(argv[i], "--import") == 0 && i + 1 < argc) {
      import_only = argv[++i];
    } else {
      return opscope::bench::Usage(kUsage, argv[i]);
    }
  }
  if (!import_only.empty()) return ImportOnly(import_only, runs);
  const std::string base = fmt::format("/tmp/opscope_perfetto_bench_{}", getpid());
  const std::string json = base + ".json", pftrace = base + ".pftrace";
  const uint64_t json_bytes = opscope::bench::GenerateKinetoTrace(json, mb << 20);
  if (json_bytes == 0) {
    std::fprintf(stderr, "perfetto_bench: cannot write %s\n", json.c_str());
    return 1;
  }
  std::printf("perfetto_bench: generated Kineto trace, %.1f MB of JSON (%s)\n", json_bytes / 1e6,
              json.c_str());

  opscope::Trace trace;
  const Timing json_import = Best(runs, json, [&] {
    trace = opscope::Trace();
    if (!Import(json, &trace)) std::exit(1);
  });
  const uint64_t json_events = last_stats.events;
  const Timing export_time = Best(runs, "", [&] {
    const opscope::Status st = opscope::WritePerfettoTrace(trace, pftrace);
    if (!st.ok()) {
      std::fprintf(stderr, "perfetto_bench: %s\n", st.message().c_str());
      std::exit(1);
    }
  });
  const uint64_t pf_bytes = fs::file_size(pftrace);
  const size_t slices = trace.slices().size();
  trace = opscope::Trace();
  opscope::Trace back;
  const Timing pf_import = Best(runs, pftrace, [&] {
    back = opscope::Trace();
    if (!Import(pftrace, &back)) std::exit(1);
  });
  const uint64_t pf_events = last_stats.events;
  if (back.slices().size() != slices) {
    std::fprintf(stderr, "perfetto_bench: %zu slices read back, %zu written\n",
                 back.slices().size(), slices);
    return 1;
  }
  opscope::Trace without_args;
  const Timing no_args = Best(runs, pftrace, [&] {
    without_args = opscope::Trace();
    if (!Import(pftrace, &without_args, false)) std::exit(1);
  });
  const Timing floor = ModelFloor(back, runs);

  std::printf("\n%zu slices, best of %d runs, one import thread:\n", slices, runs);
  Row("import Kineto JSON", json_bytes, json_import, json_events);
  Row("export .pftrace (WritePerfettoTrace)", pf_bytes, export_time);
  Row("import .pftrace", pf_bytes, pf_import, pf_events);
  Row("baseline: .pftrace import, args not kept", pf_bytes, no_args, pf_events);
  Row("model alone (no file read; .pftrace bytes)", pf_bytes, floor);
  Targets(json_bytes, pf_bytes, json_import, pf_import, floor);
  if (!keep) {
    fs::remove(json);
    fs::remove(pftrace);
  }
  return 0;
}
