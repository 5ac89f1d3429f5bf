// libFuzzer target for the trace importer: any bytes (plain JSON or gzip) must give either a
// finalized trace or an error status, never a crash, a hang or unbounded memory; the analyses
// must then run on whatever was imported. The batched event parse and the one-event-at-a-time
// parse must agree exactly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "opscope/analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  opscope::Trace trace;
  opscope::ImportStats stats;
  opscope::ImportOptions options;
  options.max_depth = 32;
  const opscope::Status st = opscope::ImportTraceFromMemory(
      std::string_view(reinterpret_cast<const char*>(data), size), &trace, &stats, options);
  if (!st.ok() && st.message().empty()) __builtin_trap();  // every error must say what and where
  {
    opscope::Trace alone;
    opscope::ImportStats alone_stats;
    opscope::ImportOptions per_event = options;
    per_event.batch_events = false;
    const opscope::Status st2 =
        opscope::ImportTraceFromMemory(std::string_view(reinterpret_cast<const char*>(data), size),
                                       &alone, &alone_stats, per_event);
    if (st.ok() != st2.ok() || st.message() != st2.message() ||
        stats.events != alone_stats.events || stats.skipped != alone_stats.skipped ||
        stats.warnings != alone_stats.warnings || trace.slices().size() != alone.slices().size() ||
        trace.instants().size() != alone.instants().size() ||
        trace.counters().size() != alone.counters().size() ||
        trace.flows().size() != alone.flows().size()) {
      __builtin_trap();
    }
    for (size_t i = 0; i < trace.slices().size(); ++i) {
      const opscope::Slice& a = trace.slices()[i];
      const opscope::Slice& b = alone.slices()[i];
      if (a.ts_ns != b.ts_ns || a.dur_ns != b.dur_ns || a.external_id != b.external_id ||
          a.correlation != b.correlation || trace.Str(a.name) != alone.Str(b.name) ||
          trace.ArgsJson(a.args) != alone.ArgsJson(b.args)) {
        __builtin_trap();
      }
    }
  }
  // Partial traces (after an error) are finalized too; the analyses must hold on both.
  const opscope::DeviceTimeline tl = opscope::ComputeDeviceTimeline(trace, opscope::kNone, true);
  if (tl.busy_ns > tl.total_ns || tl.idle_ns < 0) __builtin_trap();
  (void)opscope::ComputeOpSummary(trace).ToJson();
  (void)opscope::ComputeKernelSummary(trace).ToJson();
  (void)opscope::ComputeLaunchStatistics(trace).ToJson();
  (void)opscope::DiffTraces(trace, trace).ToJson();
  for (uint32_t i = 0; i < trace.slices().size() && i < 64; ++i) {
    (void)trace.ArgsJson(trace.slices()[i].args);
    (void)trace.FindArg(trace.slices()[i].args, "External id");
  }
  return 0;
}
