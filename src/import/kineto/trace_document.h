// The outer structure of a Kineto / Chrome trace document: a trace object whose "traceEvents"
// array holds the events, beside top-level values (schemaVersion, baseTimeNanoseconds,
// deviceProperties, droppedEvents, distributedInfo, ...), or Chrome's bare event array.
//
// The reader walks it with a JsonStream, hands traceEvents to the event parser in batches, and
// the top-level values to the same sink: the known ones parsed, others as raw JSON (up to 16 MiB
// each). A structural error stops the read with kInvalidInput naming the byte offset and
// what was expected there.
//
// Everything given to the constructor must outlive the reader. Not thread-safe.
#ifndef OPSCOPE_IMPORT_KINETO_TRACE_DOCUMENT_H_
#define OPSCOPE_IMPORT_KINETO_TRACE_DOCUMENT_H_

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "import/import_log.h"
#include "import/kineto/event_parser.h"
#include "import/kineto/json_stream.h"
#include "import/kineto/parallel_parse.h"
#include "opscope/status.h"

namespace opscope::import {

class TraceDocumentReader {
 public:
  // Events go through `parser` to `sink`, or, when `parallel` is not null, through it (which
  // hands them to the same sink in the same order) from the first batch that ends at or past
  // parallel->start_after_bytes() of JSON; top-level values straight to `sink`.
  TraceDocumentReader(JsonStream* stream, EventParser* parser, ParallelEventParser* parallel,
                      DocumentSink* sink, ImportLog* log)
      : stream_(*stream), parser_(*parser), parallel_(parallel), sink_(sink), log_(log) {}

  // Reads the whole document. Events read before an error stay with the sink.
  Status Read();
  // Called on the reading thread after each batch of events is read (progress).
  void set_on_batch(std::function<void()> on_batch) { on_batch_ = std::move(on_batch); }

 private:
  Status ReadTopLevelObject();
  Status ReadTopLevelValue(const std::string& key);
  // {"reason": count, ...}: events the producer dropped.
  void ReadDropped(std::string_view span, uint64_t at);
  Status ReadEvents();
  Status ReadEventBatches();
  // "byte N: expected WHAT, found C" at the stream's position.
  Status Expected(const std::string& what, int found);

  JsonStream& stream_;
  EventParser& parser_;
  ParallelEventParser* parallel_;
  DocumentSink* sink_;
  ImportLog* log_;
  simdjson::ondemand::parser value_parser_;  // droppedEvents
  bool saw_events_ = false;
  bool submitting_ = false;  // events go to parallel_ from now on
  uint64_t entries_read_ = 0;
  std::function<void()> on_batch_;  // traceEvents entries handed to the parser so far
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_TRACE_DOCUMENT_H_
