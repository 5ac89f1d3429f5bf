// The Nsight Systems reader: the pipeline that joins its stages.
//
//   the database (a plain file opened by SQLite read-only and immutable; gzip, pipes and memory
//   read whole and opened with sqlite3_deserialize)
//     -> SqliteDatabase: its tables (not views), each read row by row, columns by name
//     -> NsysTranslator: names (StringIds, PROCESSES, ThreadNames), GPUs, NVTX, runtime calls,
//        then kernels, memcpys, memsets and syncs on their streams
//     -> Trace::Finalize: nesting, device activity linked to its runtime call by correlationId
#include "import/nsys/nsys_reader.h"

#include <algorithm>

#include "import/import_log.h"
#include "import/nsys/nsys_translator.h"
#include "import/nsys/sqlite_tables.h"

namespace opscope::import {

bool LooksLikeNsysSqlite(std::string_view head) {
  // SQLite's header string (the file format's first 16 bytes), then the schema's table
  // definitions, which nsys writes on the first pages before any data.
  constexpr std::string_view kMagic("SQLite format 3\0", 16);
  if (!head.starts_with(kMagic)) return false;
  if (head.find("CREATE TABLE StringIds") == std::string_view::npos) return false;
  for (std::string_view table :
       {"CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS", "TARGET_INFO_", "EXPORT_META_DATA"}) {
    if (head.find(table) != std::string_view::npos) return true;
  }
  return false;
}

Status ReadNsysSqlite(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options) {
  ImportLog log(stats, options.max_warning_messages);
  stats->input_bytes = in->stored_bytes();
  auto finish = [&](Status st) {
    if (!st.ok()) log.Warn("the export was not read whole: " + st.message(), false);
    out->metadata().skipped_events = stats->skipped;
    out->metadata().warnings = stats->warnings;
    out->Finalize(std::max(1, options.threads));
    return st;
  };
  if (options.progress) options.progress(0, in->stored_bytes());
  nsys::SqliteDatabase db;
  Status st;
  if (in->regular_file() && !in->gzip()) {
    st = db.OpenFile(in->path());
  } else {
    std::string_view bytes;
    st = in->ReadAll(&bytes);
    if (st.ok()) st = db.OpenMemory(bytes);
  }
  if (!st.ok()) return finish(std::move(st));
  nsys::NsysTranslator translator(db, out, options, &log);
  st = translator.ReadAll();
  if (options.progress) options.progress(in->stored_bytes(), in->stored_bytes());
  return finish(std::move(st));
}

}  // namespace opscope::import
