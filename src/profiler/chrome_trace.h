// Kineto-compatible chrome trace export of the trace model.
#ifndef OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
#define OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_

#include <string>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope::internal {

// The whole document as Kineto writes it: schemaVersion, deviceProperties, extra metadata keys,
// droppedEvents, displayTimeUnit, baseTimeNanoseconds, traceEvents (M, X, i, C, s/f), traceName
// last. Times are microseconds with three decimals relative to baseTimeNanoseconds; negative
// times are clamped to 0. `trace` must be finalized.
std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name);

// Writes ChromeTraceJson to `path` (gzip when it ends in ".gz") through a temporary file in the
// same directory and a rename, so readers never see a partial file. On failure (kIoError, file() =
// path) nothing is left at `path` or beside it, and the message names the path and the reason.
Status WriteChromeTrace(const Trace& trace, const std::string& path);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
