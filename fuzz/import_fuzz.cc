// libFuzzer target for the trace importer: any bytes (plain JSON or gzip) must give either a
// finalized trace or an error status, never a crash, a hang or unbounded memory; the analyses
// must then run on whatever was imported, report --perf's included. The batched event parse, the
// one-event-at-a-time parse and the parse on 3 threads (one event per chunk, so every thread gets
// some) must agree exactly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"

namespace {

struct Imported {
  opscope::Trace trace;
  opscope::ImportStats stats;
  opscope::Status status;
};

Imported Import(std::string_view data, const opscope::ImportOptions& options) {
  Imported out;
  out.status = opscope::ImportTraceFromMemory(data, &out.trace, &out.stats, options);
  return out;
}

// Traps unless `a` and `b` are the same import: status, counts, warnings, every slice.
void CheckSame(const Imported& a, const Imported& b) {
  const opscope::Trace& ta = a.trace;
  const opscope::Trace& tb = b.trace;
  if (a.status.ok() != b.status.ok() || a.status.message() != b.status.message() ||
      a.stats.events != b.stats.events || a.stats.skipped != b.stats.skipped ||
      a.stats.warnings != b.stats.warnings || ta.slices().size() != tb.slices().size() ||
      ta.instants().size() != tb.instants().size() ||
      ta.counters().size() != tb.counters().size() || ta.flows().size() != tb.flows().size() ||
      ta.strings().size() != tb.strings().size()) {
    __builtin_trap();
  }
  for (size_t i = 0; i < ta.slices().size(); ++i) {
    const opscope::Slice& x = ta.slices()[i];
    const opscope::Slice& y = tb.slices()[i];
    if (x.ts_ns != y.ts_ns || x.dur_ns != y.dur_ns || x.external_id != y.external_id ||
        x.correlation != y.correlation || x.name != y.name || x.track != y.track ||
        ta.Str(x.name) != tb.Str(y.name) || ta.ArgsJson(x.args) != tb.ArgsJson(y.args)) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  opscope::ImportOptions options;
  options.max_depth = 32;
  options.threads = 1;
  const Imported first = Import(input, options);
  const opscope::Trace& trace = first.trace;
  const opscope::Status& st = first.status;
  if (!st.ok() && st.message().empty()) __builtin_trap();  // every error must say what and where
  opscope::ImportOptions per_event = options;
  per_event.batch_events = false;
  CheckSame(first, Import(input, per_event));
  opscope::ImportOptions threaded = options;
  threaded.threads = 3;
  threaded.chunk_bytes = 1;
  CheckSame(first, Import(input, threaded));
  // Partial traces (after an error) are finalized too; the analyses must hold on both.
  const opscope::DeviceTimeline tl = opscope::ComputeDeviceTimeline(trace, opscope::kNone, true);
  if (tl.busy_ns > tl.total_ns || tl.idle_ns < 0) __builtin_trap();
  (void)opscope::ComputeOpSummary(trace).ToJson();
  (void)opscope::ComputeKernelSummary(trace).ToJson();
  (void)opscope::ComputeLaunchStatistics(trace).ToJson();
  (void)opscope::DiffTraces(trace, trace).ToJson();
  // report --perf: the record_shapes args parser, the roofline, idle time, the dependency graph.
  std::optional<opscope::DeviceSpec> spec;
  (void)opscope::ChooseDeviceSpec(trace, "", &spec);
  (void)opscope::ComputePerfModel(trace, {.device = spec});
  (void)opscope::ComputeIdleBreakdown(trace);
  const opscope::CriticalPath cp = opscope::ComputeCriticalPath(trace);
  if (cp.ok && cp.length_ns < 0) __builtin_trap();
  for (uint32_t i = 0; i < trace.slices().size() && i < 64; ++i) {
    (void)trace.ArgsJson(trace.slices()[i].args);
    (void)trace.FindArg(trace.slices()[i].args, "External id");
  }
  return 0;
}
