// Kineto-compatible chrome trace export of the trace model.
#ifndef OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
#define OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_

#include <cstddef>
#include <string>

#include "opscope/status.h"
#include "opscope/trace.h"
#include "profiler/trace_file.h"  // RemoveStaleTempTraces

namespace opscope::internal {

// The whole document as Kineto writes it: schemaVersion, deviceProperties, extra metadata keys,
// droppedEvents, displayTimeUnit, baseTimeNanoseconds, traceEvents (M, X, i, C, s/f), traceName
// last. Times are microseconds with three decimals relative to baseTimeNanoseconds; negative
// times are clamped to 0. `trace` must be finalized.
std::string ChromeTraceJson(const Trace& trace, const std::string& trace_name);

// Writes ChromeTraceJson to `path` (gzip when it ends in ".gz") through WriteTraceFile: a
// temporary file and a rename, so readers never see a partial file; errors as it gives them.
Status WriteChromeTrace(const Trace& trace, const std::string& path);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
