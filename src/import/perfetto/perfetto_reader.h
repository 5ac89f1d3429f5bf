// The Perfetto reader: a protobuf Trace (a stream of TracePackets, as Perfetto, Chrome, Android
// and the Perfetto SDK write them, plain or gzip; `.pftrace`, `.perfetto-trace`) into the model.
// What it takes and what it leaves: docs/formats.md ("Perfetto").
#ifndef OPSCOPE_IMPORT_PERFETTO_PERFETTO_READER_H_
#define OPSCOPE_IMPORT_PERFETTO_PERFETTO_READER_H_

#include <string_view>

#include "import/import_input.h"
#include "opscope/import.h"
#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope::import {

// Whether `head` (a file's first bytes, inflated) opens a Perfetto Trace: field 1 (length-
// delimited) holding a TracePacket whose fields all decode and include one a TracePacket has, and,
// when the packet ends inside `head`, another packet after it (or the end).
bool LooksLikePerfetto(std::string_view head);

// Reads `in` (the whole content, mapped or inflated) into `out` and finalizes it. Errors and
// warnings name the packet (its index in the file, from 0) and its byte offset: a packet that does
// not decode is skipped with a warning; a file that ends inside a packet keeps what came before
// with a warning; bytes that are not a Trace's fields stop the import with kInvalidInput (the
// packets before stay in `out`).
Status ReadPerfetto(ImportInput* in, Trace* out, ImportStats* stats, const ImportOptions& options);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_PERFETTO_PERFETTO_READER_H_
