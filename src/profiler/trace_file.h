// Writing an exported trace to disk so that readers never see a partial file: through a temporary
// file in the same directory and a rename, gzip-compressed on request, with a failed write (a full
// disk, `ulimit -f`) reported as an error that says how far it got. Every exporter (Chrome JSON,
// Perfetto) writes through here.
#ifndef OPSCOPE_SRC_PROFILER_TRACE_FILE_H_
#define OPSCOPE_SRC_PROFILER_TRACE_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope::internal {

// Writes `bytes` to `path` (gzip-compressed when `gzip`) through a temporary file in the same
// directory ("<path>.tmp.<pid>@<host>") and a rename. On failure (kIoError, file() = path) the
// message names `what` ("chrome trace"), the path, the reason (a full disk, `ulimit -f`: the
// SIGXFSZ it raises is a write error here, not the end of the process) and how much was written;
// the temporary file is removed and nothing is left at `path`. Leftover temporary files of dead
// processes in the directory are removed first.
Status WriteTraceFile(const std::string& path, std::string_view bytes, bool gzip,
                      std::string_view what);

// Removes "*.{json,pftrace,perfetto-trace}[.gz].tmp.<pid>[@<host>]" files of this host whose
// process is gone (left by a process killed while exporting) under `dir`, descending `depth`
// directories. Returns how many.
size_t RemoveStaleTempTraces(const std::string& dir, int depth);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_TRACE_FILE_H_
