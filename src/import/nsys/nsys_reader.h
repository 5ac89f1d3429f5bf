// The Nsight Systems reader: the SQLite database `nsys export --type sqlite` writes (nsys_reader.cc
// draws the pipeline; docs/formats.md says which tables and columns are read).
#ifndef OPSCOPE_IMPORT_NSYS_NSYS_READER_H_
#define OPSCOPE_IMPORT_NSYS_NSYS_READER_H_

#include <string_view>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import {

// True when `head` (the first bytes) is an SQLite database whose schema, near its start, names
// Nsight Systems' tables: StringIds and one of the CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS,
// TARGET_INFO_* or EXPORT_META_DATA tables. An SQLite file of anything else is not claimed.
bool LooksLikeNsysSqlite(std::string_view head);

// Reads `in` into the empty trace `out`, which is finalized whatever happens: a plain file is
// opened by SQLite read-only, anything else (gzip, a pipe, memory) is read whole and opened from
// memory.
Status ReadNsysSqlite(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_NSYS_NSYS_READER_H_
