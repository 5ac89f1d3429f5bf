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
#include <string>
#include <thread>

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

// ImportOptions::threads resolved: 0 is the cores this process may run on.
int ImportThreads(const ImportOptions& options) {
  if (options.threads > 0) return options.threads;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

// Runs the pipeline over `source` into the empty trace `out`, which is finalized whatever happens.
// `buffer_bytes`: the stream's starting buffer (it grows for larger values). `json_bytes_hint`:
// expected JSON size, for reserving slice storage up front (no copies as it grows; pages that are
// never written cost no memory). `input_size`: the input's size as stored, for progress.
Status ImportStream(ByteSource* source, Trace* out, ImportStats* stats,
                    const ImportOptions& options, size_t buffer_bytes, uint64_t json_bytes_hint,
                    uint64_t input_size) {
  // A complete event takes at least ~90 bytes of JSON.
  out->ReserveSlices(
      static_cast<size_t>(std::min<uint64_t>(json_bytes_hint / 90, uint64_t{1} << 31)));
  analysis::ImportLog log(stats, options.max_warning_messages);
  analysis::JsonStream stream(source, options.max_depth, buffer_bytes);
  analysis::EventParser parser(options);
  analysis::EventTranslator translator(out, options, &log);
  const int threads = ImportThreads(options);
  std::unique_ptr<analysis::ParallelEventParser> parallel;
  if (threads > 1) {
    parallel = std::make_unique<analysis::ParallelEventParser>(options, &translator, threads);
  }
  analysis::TraceDocumentReader document(&stream, &parser, parallel.get(), &translator, out,
                                         &translator.device_family(), &log);
  if (options.progress) {
    document.set_on_batch([&] { options.progress(source->input_bytes(), input_size); });
  }
  Status st = document.Read();
  parallel.reset();
  stats->json_bytes = stream.bytes_read();
  stats->input_bytes = source->input_bytes();
  translator.Finish();
  return st;
}

// JSON bytes to expect from `stored` bytes of input (gzip'd Kineto JSON inflates ~8-12x).
uint64_t JsonBytesHint(uint64_t stored, bool gzip) { return gzip ? stored * 12 : stored; }

Status Import(ByteSource* source, Trace* out, ImportStats* stats, const ImportOptions& options,
              uint64_t json_bytes_hint, uint64_t input_size,
              size_t buffer_bytes = size_t{128} << 10) {
  ImportStats local;
  ImportStats* s = stats ? stats : &local;
  *s = ImportStats{};
  *out = Trace();
  return ImportStream(source, out, s, options, buffer_bytes, json_bytes_hint, input_size);
}

}  // namespace

Status ImportTrace(const std::string& path, Trace* out, ImportStats* stats,
                   const ImportOptions& options) {
  std::unique_ptr<ByteSource> source;
  Status st = analysis::OpenFileSource(path, &source);
  if (!st.ok()) return st;
  std::error_code ec;
  const uint64_t stored = std::filesystem::file_size(path, ec);
  st =
      Import(source.get(), out, stats, options,
             ec ? 0 : JsonBytesHint(stored, analysis::IsGzipSource(source.get())), ec ? 0 : stored);
  return std::move(st).InFile(path);
}

Status ImportTraceFromMemory(std::string_view data, Trace* out, ImportStats* stats,
                             const ImportOptions& options) {
  auto source = analysis::OpenMemorySource(data);
  // Small inputs (tests, fuzzing) get a small buffer; gzip may expand, and the buffer grows.
  const size_t buffer = std::clamp<size_t>(data.size() * 2, 4096, size_t{1} << 20);
  const bool gzip = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
                    static_cast<unsigned char>(data[1]) == 0x8b;
  return Import(source.get(), out, stats, options, JsonBytesHint(data.size(), gzip), data.size(),
                buffer);
}

}  // namespace opscope
