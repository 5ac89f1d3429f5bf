// The Kineto / Chrome trace JSON reader: torch.profiler's trace, Chrome's trace event format
// (object or bare array), plain or gzip, read as a stream (kineto_reader.cc draws the pipeline).
#ifndef OPSCOPE_IMPORT_KINETO_KINETO_READER_H_
#define OPSCOPE_IMPORT_KINETO_KINETO_READER_H_

#include <string_view>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import {

// True when `head` (the first bytes, inflated) opens a Chrome trace event array, or a JSON object
// that names "traceEvents" in its first bytes.
bool LooksLikeKinetoJson(std::string_view head);
// True when `head` opens a JSON value ('{' or '['), after whitespace and a byte order mark: what
// the reader is tried on when no format claims the input, so that its error says what is wrong.
bool LooksLikeJson(std::string_view head);

// Reads `in`'s stream into the empty trace `out`, which is finalized whatever happens.
Status ReadKinetoJson(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_KINETO_READER_H_
