// Writing a trace out: any trace opscope holds (recorded by the profiler, or imported from any
// format it reads) as a file other tools open.
//
//   opscope::Trace trace;
//   opscope::Status st = opscope::ImportTrace("profile.xplane.pb", &trace);
//   if (st.ok()) st = opscope::WriteChromeTrace(trace, "profile.json.gz");
//   if (!st.ok()) std::cerr << st.message() << "\n";
//
// Thread safety: the trace is only read; several writes may run at once on one finalized trace.
#ifndef OPSCOPE_EXPORT_H_
#define OPSCOPE_EXPORT_H_

#include <string>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

// The trace as a Kineto (torch.profiler) JSON document: schemaVersion, deviceProperties, the
// metadata's other top-level keys, droppedEvents, displayTimeUnit, baseTimeNanoseconds,
// traceEvents (M, X, i, C, s/f), traceName last. Times are microseconds with three decimals
// relative to baseTimeNanoseconds; negative times are clamped to 0. `trace` must be finalized.
std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name);

// Writes ChromeTraceJson to `path` (gzip when it ends in ".gz") through a temporary file in the
// same directory ("<path>.tmp.<pid>@<host>") and a rename, so readers never see a partial file.
// On failure (kIoError, file() = path) the message names the path, the reason (a full disk,
// `ulimit -f`: the SIGXFSZ it raises is a write error here, not the end of the process) and how
// much was written; the temporary file is removed and nothing is left at `path`. Leftover
// temporary files of dead processes in the directory are removed first.
Status WriteChromeTrace(const Trace& trace, const std::string& path);

}  // namespace opscope

#endif  // OPSCOPE_EXPORT_H_
