// Export: writing a trace to a file other tools open.
//
//   opscope::Trace trace;
//   opscope::ImportTrace("rank-0.pt.trace.json.gz", &trace);
//   opscope::Status st = opscope::WritePerfettoTrace(trace, "rank-0.pftrace");
//   if (!st.ok()) std::cerr << st.message() << "\n";  // nothing was left at the path
//
// Every writer goes through a temporary file in the same directory and a rename, so a reader never
// sees a partial file; a path ending in ".gz" is gzip-compressed. docs/formats.md describes each
// format's encoding.
//
// Thread safety: writers only read the trace; several may run at once on the same finalized trace.
#ifndef OPSCOPE_EXPORT_H_
#define OPSCOPE_EXPORT_H_

#include <string>
#include <string_view>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

// Writes `trace` (finalized) as a Perfetto protobuf trace: what Perfetto UI and trace_processor
// open, small (interned names, categories and arg names; timestamps as deltas on incremental
// clocks) and complete: opscope imports it back to the same model, its reports byte for byte
// (what Perfetto has no field for travels in an "opscope" metadata entry and a few reserved debug
// annotations). Errors: kIoError naming the path and the reason.
Status WritePerfettoTrace(const Trace& trace, const std::string& path);

// Writes `trace` (finalized) as Kineto / Chrome trace JSON, as torch.profiler writes it: what
// every Chrome-trace tool opens (times in microseconds with three decimals). Its traceName is the
// trace's own (TraceMetadata::trace_name), or the path when it has none. Errors as above.
Status WriteChromeTrace(const Trace& trace, const std::string& path);

// The Kineto JSON document WriteChromeTrace writes, in memory, with `trace_name` as its traceName:
// schemaVersion, deviceProperties, the metadata's other top-level keys, droppedEvents,
// displayTimeUnit, baseTimeNanoseconds, traceEvents (M, X, i, C, s/f), traceName last. Times are
// microseconds with three decimals relative to baseTimeNanoseconds; negative times are clamped to
// 0. `trace` must be finalized.
std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name);

// `text` as a quoted JSON string, escaped as every opscope writer escapes names: quotes,
// backslashes and control characters escaped, invalid UTF-8 bytes replaced by U+FFFD, so the
// result is valid JSON and valid UTF-8 whatever the bytes. For programs that write their own JSON
// beside opscope's output.
std::string JsonQuote(std::string_view text);

}  // namespace opscope

#endif  // OPSCOPE_EXPORT_H_
