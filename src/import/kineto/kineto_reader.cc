// The Kineto JSON reader: the pipeline that joins its stages.
//
//   bytes (ImportInput's stream: file, pipe or memory, gzip inflated)
//     -> JsonStream: the document's structure, traceEvents in batches of complete events
//     -> TraceDocumentReader: top-level values and event batches, both to the sink
//     -> EventParser: each event's fields, parsed in place with simdjson On Demand
//     -> EventTranslator (the sink): metadata, slices, instants, counters, flows, names, staged
//        per track
//     -> Trace::Finalize: nesting, flows bound, device links
//
// docs/import.md explains each stage and what it costs.
#include "import/kineto/kineto_reader.h"

#include <algorithm>
#include <memory>
#include <string>

#include "base/cores.h"
#include "import/import_log.h"
#include "import/kineto/event_parser.h"
#include "import/kineto/event_translator.h"
#include "import/kineto/json_stream.h"
#include "import/kineto/parallel_parse.h"
#include "import/kineto/trace_document.h"
#include "opscope/import.h"

namespace opscope::import {
namespace {

// With the default thread count, events are parsed on the reading thread alone until this much
// JSON is read, unless the input is known to be large (below): an input of unknown size (a pipe)
// or a small one imports exactly as with --threads 1, which for a trace of a few MB costs less
// than starting threads and handing chunks between them.
constexpr uint64_t kParallelAfterBytes = uint64_t{32} << 20;
// An input known to hold at least kLargeInputBytes (ImportInput::content_bytes_at_least: the
// stored size, or a gzip trailer's) is large enough for threads to pay: the count is decided once
// kDecideAfterBytes are read (two load samples) instead of kParallelAfterBytes, so threads work on
// the whole trace rather than on what follows its first 32 MiB. 2-core VM, idle: `report` of a
// 53 MB real-content trace 0.133-0.152 -> 0.115-0.127 s (means of 5, three rounds); two threads
// against one on the 15 MB fixture 0.051 against 0.058 s plain, 0.051 against 0.061 s gzip.
constexpr uint64_t kLargeInputBytes = uint64_t{8} << 20;
constexpr uint64_t kDecideAfterBytes = uint64_t{2} << 20;

uint64_t DefaultParallelStart(const ImportInput& in) {
  return in.content_bytes_at_least() >= kLargeInputBytes ? kDecideAfterBytes : kParallelAfterBytes;
}

// The stream's starting buffer (it grows for larger values): small inputs (tests, fuzzing) get a
// small one.
size_t StreamBufferBytes(const ImportInput& in) {
  if (!in.path().empty()) return size_t{128} << 10;
  return std::clamp<size_t>(in.stored_bytes() * 2, 4096, size_t{1} << 20);
}

std::string_view SkipWhitespaceAndBom(std::string_view s) {
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  const size_t first = s.find_first_not_of(" \t\r\n");
  return first == std::string_view::npos ? std::string_view() : s.substr(first);
}

}  // namespace

bool LooksLikeJson(std::string_view head) {
  head = SkipWhitespaceAndBom(head);
  return !head.empty() && (head.front() == '{' || head.front() == '[');
}

bool LooksLikeKinetoJson(std::string_view head) {
  head = SkipWhitespaceAndBom(head);
  if (head.empty()) return false;
  if (head.front() == '[') return true;
  return head.front() == '{' && head.find("\"traceEvents\"") != std::string_view::npos;
}

static_assert(kMaxThreads == internal::kMaxThreads, "one thread cap, public and internal");

// Memory grows with what is read: nothing is reserved from the input's size (a guess that a 35 GB
// file cannot meet); the slices are staged, and their final storage sized once their number is
// known (SliceStage::MoveTo).
Status ReadKinetoJson(ImportInput* in, Trace* out, ImportStats* stats,
                      const ImportOptions& options) {
  std::unique_ptr<ByteSource> source = in->TakeStream();
  ImportLog log(stats, options.max_warning_messages);
  JsonStream stream(source.get(), options.max_depth, StreamBufferBytes(*in));
  EventParser parser(options);
  EventTranslator translator(out, options, &log);
  // The default: up to every core this process may use, how many decided once
  // DefaultParallelStart's bytes are read, from the machine's runnable threads meanwhile
  // (ParallelEventParser::StartsAt).
  const bool by_default = options.threads <= 0;
  int threads = internal::CapThreads(by_default ? internal::AffinityCores() : options.threads);
  std::unique_ptr<ParallelEventParser> parallel;
  if (threads > 1) {
    parallel = std::make_unique<ParallelEventParser>(
        options, &translator, threads, by_default ? DefaultParallelStart(*in) : 0, by_default);
  }
  TraceDocumentReader document(&stream, &parser, parallel.get(), &translator, &log);
  if (options.progress) {
    const uint64_t total = in->stored_bytes();
    document.set_on_batch(
        [&source, &options, total] { options.progress(source->input_bytes(), total); });
  }
  Status st = document.Read();
  if (parallel) threads = parallel->threads_used();
  parallel.reset();
  stats->json_bytes = stream.bytes_read();
  stats->input_bytes = source->input_bytes();
  translator.Finish(threads);
  return st;
}

}  // namespace opscope::import
