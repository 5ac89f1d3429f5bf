// Trace import: the public entry points and the pipeline that joins its stages.
//
//   bytes (ByteSource: file or memory, gzip inflated)
//     -> JsonStream: the document's structure, traceEvents in batches of complete events
//     -> TraceDocumentReader: top-level values into the metadata, batches to the parser
//     -> EventParser: each event's fields, parsed in place with simdjson On Demand
//     -> EventTranslator: slices, instants, counters, flows, names, staged per track
//     -> Trace::Finalize: nesting, flows bound, device links
//
// docs/import.md explains each stage and what it costs.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <new>
#include <string>

#include "analysis/byte_source.h"
#include "analysis/event_parser.h"
#include "analysis/event_translator.h"
#include "analysis/import_log.h"
#include "analysis/json_stream.h"
#include "analysis/parallel_parse.h"
#include "analysis/trace_document.h"
#include "opscope/analysis.h"

namespace opscope {
namespace {

using analysis::ByteSource;

// With the default thread count, events are parsed on the reading thread alone until this much
// JSON is read: below it, starting threads and handing chunks between them costs more than the
// threads save (at 8 MiB the 15 MB fixture imported at 0.85x of one thread's speed), so a trace of
// a few tens of MB imports exactly as with --threads 1.
constexpr uint64_t kParallelAfterBytes = uint64_t{32} << 20;

// Runs the pipeline over `source` into the empty trace `out`, which is finalized whatever happens.
// `buffer_bytes`: the stream's starting buffer (it grows for larger values). `input_size`: the
// input's size as stored, for progress only. Memory grows with what is read: nothing is reserved
// from the input's size (a guess that a 35 GB file cannot meet); the slices are staged, and their
// final storage sized once their number is known (SliceStage::MoveTo).
Status ImportStream(ByteSource* source, Trace* out, ImportStats* stats,
                    const ImportOptions& options, size_t buffer_bytes, uint64_t input_size) {
  analysis::ImportLog log(stats, options.max_warning_messages);
  analysis::JsonStream stream(source, options.max_depth, buffer_bytes);
  analysis::EventParser parser(options);
  analysis::EventTranslator translator(out, options, &log);
  // The default: up to every core this process may use, how many decided once kParallelAfterBytes
  // are read, from the machine's runnable threads meanwhile (ParallelEventParser::StartsAt).
  const bool by_default = options.threads <= 0;
  int threads = by_default ? analysis::AffinityCores() : options.threads;
  std::unique_ptr<analysis::ParallelEventParser> parallel;
  if (threads > 1) {
    parallel = std::make_unique<analysis::ParallelEventParser>(
        options, &translator, threads, by_default ? kParallelAfterBytes : 0, by_default);
  }
  analysis::TraceDocumentReader document(&stream, &parser, parallel.get(), &translator, out,
                                         &translator.device_family(), &log);
  if (options.progress) {
    document.set_on_batch([&] { options.progress(source->input_bytes(), input_size); });
  }
  Status st = document.Read();
  if (parallel) threads = parallel->threads_used();
  parallel.reset();
  stats->json_bytes = stream.bytes_read();
  stats->input_bytes = source->input_bytes();
  translator.Finish(threads);
  return st;
}

// Imports from `source`. Running out of memory is an error that says how far the import got
// (the partial trace is dropped), not an exception.
Status Import(ByteSource* source, Trace* out, ImportStats* stats, const ImportOptions& options,
              uint64_t input_size, size_t buffer_bytes = size_t{128} << 10) {
  ImportStats local;
  ImportStats* s = stats ? stats : &local;
  *s = ImportStats{};
  *out = Trace();
  try {
    return ImportStream(source, out, s, options, buffer_bytes, input_size);
  } catch (const std::bad_alloc&) {
    const uint64_t read = source->input_bytes();
    *out = Trace();
    return Status::Unavailable("out of memory after reading " + std::to_string(read) +
                               " bytes of input (" + std::to_string(s->events) +
                               " events): the trace does not fit in this machine's memory");
  }
}

}  // namespace

Status ImportTrace(const std::string& path, Trace* out, ImportStats* stats,
                   const ImportOptions& options) {
  std::unique_ptr<ByteSource> source;
  Status st = analysis::OpenFileSource(path, &source);
  if (!st.ok()) return st;  // names the file
  std::error_code ec;
  const uint64_t stored = std::filesystem::file_size(path, ec);
  return Import(source.get(), out, stats, options, ec ? 0 : stored).InFile(path);
}

Status ImportTraceFromMemory(std::string_view data, Trace* out, ImportStats* stats,
                             const ImportOptions& options) {
  auto source = analysis::OpenMemorySource(data);
  // Small inputs (tests, fuzzing) get a small buffer; gzip may expand, and the buffer grows.
  const size_t buffer = std::clamp<size_t>(data.size() * 2, 4096, size_t{1} << 20);
  return Import(source.get(), out, stats, options, data.size(), buffer);
}

}  // namespace opscope
