// Kineto-compatible chrome trace export of the trace model.
#ifndef OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
#define OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_

#include <cstddef>
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
// same directory ("<path>.tmp.<pid>@<host>") and a rename, so readers never see a partial file.
// On failure (kIoError, file() = path) the message names the path, the reason (a full disk,
// `ulimit -f`: the SIGXFSZ it raises is a write error here, not the end of the process) and how
// much was written; the temporary file is removed and nothing is left at `path`. Leftover
// temporary files of dead processes in the directory are removed first.
Status WriteChromeTrace(const Trace& trace, const std::string& path);

// Removes "*.json[.gz].tmp.<pid>[@<host>]" files of this host whose process is gone (left by a
// process killed while exporting) under `dir`, descending `depth` directories. Returns how many.
size_t RemoveStaleTempTraces(const std::string& dir, int depth);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
