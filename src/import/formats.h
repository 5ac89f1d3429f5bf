// The formats opscope reads: one row per reader, how each is recognised, and the reader itself.
//
// Adding a format: its folder under src/import/ with a reader taking an ImportInput, an enumerator
// in TraceFormat (opscope/import.h), and its row in kReaders (formats.cc), placed before the rows
// whose detection is looser than its own. Nothing else changes: ImportTrace, DetectTraceFormat and
// FindTraces (the CLI, jobs, the Explorer, Python) go through this table.
#ifndef OPSCOPE_IMPORT_FORMATS_H_
#define OPSCOPE_IMPORT_FORMATS_H_

#include <span>
#include <string>
#include <string_view>

#include "import/import_input.h"
#include "opscope/import.h"

namespace opscope::import {

struct FormatReader {
  TraceFormat format;
  std::string_view name;         // TraceFormatName: "kineto-json", ...
  std::string_view description;  // for messages: "torch.profiler / Kineto / Chrome trace JSON"
  // Whether a file whose first bytes (inflated when gzip) are `head` is in this format; null for a
  // format that is a folder.
  bool (*detect_head)(std::string_view head);
  // File names that say a file is in this format ("*.json.gz"): a folder scan lists such a file
  // even when its content is not recognised, so that a corrupt one gets its error rather than
  // vanishing. Suffixes, matched case-sensitively; empty for none.
  std::span<const std::string_view> name_suffixes;
  // Whether the folder at `path` is one profile in this format; null for a file format.
  bool (*detect_directory)(const std::string& path);
  // Reads `in` into the empty trace `out` and finalizes it whatever happens; what was read before
  // an error stays in `out`.
  Status (*read)(ImportInput* in, Trace* out, ImportStats* stats, const ImportOptions& options);
};

// Every reader, in detection order.
std::span<const FormatReader> FormatReaders();
// The row of `format`, or null for kUnknown.
const FormatReader* FindReader(TraceFormat format);
// The first reader whose detect_head accepts `head`, or null.
const FormatReader* DetectFile(std::string_view head);
// The first reader whose detect_directory accepts the folder, or null.
const FormatReader* DetectDirectory(const std::string& path);
// True when a file's name ends in a suffix some format claims (FormatReader::name_suffixes).
bool NamedLikeProfile(std::string_view file_name);
// "Kineto JSON (...), Perfetto (...)": what was tried, for an error about an unknown input.
std::string TriedFormats(bool directory);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_FORMATS_H_
