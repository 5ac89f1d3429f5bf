// Kineto-compatible chrome trace export of the trace model (opscope/export.h), and the cleanup of
// what an interrupted export leaves.
#ifndef OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
#define OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_

#include <cstddef>
#include <string>

#include "opscope/export.h"

namespace opscope::internal {

// Removes "*.json[.gz].tmp.<pid>[@<host>]" files of this host whose process is gone (left by a
// process killed while exporting) under `dir`, descending `depth` directories. Returns how many.
size_t RemoveStaleTempTraces(const std::string& dir, int depth);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_CHROME_TRACE_H_
