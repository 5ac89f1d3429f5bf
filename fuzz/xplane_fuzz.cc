// libFuzzer target for the XPlane reader (and XProf's JSON, which the seeds include): any bytes
// must give a finalized trace or an error that says what and where, never a crash, a hang or
// unbounded memory; a failed import keeps a finalized partial trace with a warning; the analyses
// (per-device timelines included) must hold on whatever was read. Seeds: small XSpaces cut from
// the shared fixtures (tools/run_fuzzers.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "opscope/analysis.h"
#include "opscope/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  opscope::ImportOptions options;
  options.threads = 1;
  opscope::Trace trace;
  opscope::ImportStats stats;
  const opscope::Status st = opscope::ImportTraceFromMemory(input, &trace, &stats, options);
  if (!trace.finalized()) __builtin_trap();
  if (!st.ok() && st.message().empty()) __builtin_trap();
  if (stats.format == opscope::TraceFormat::kXPlane) {
    if (!st.ok() && trace.metadata().warnings.empty()) __builtin_trap();  // partial: said so
    if (stats.slices != trace.slices().size()) __builtin_trap();
    for (const opscope::Slice& s : trace.slices()) {
      if (s.dur_ns < 0 || s.track >= trace.tracks().size()) __builtin_trap();
    }
  }
  for (const opscope::DeviceTimelineOfDevice& d : opscope::ComputeDeviceTimelines(trace)) {
    if (d.timeline.busy_ns > d.timeline.total_ns || d.timeline.idle_ns < 0) __builtin_trap();
  }
  (void)opscope::ReportJson(trace);
  return 0;
}
