// Reading traceEvents entries: the fields of each event, parsed in place with simdjson On Demand.
//
// A batch from JsonStream::ReadElements is parsed as one JSON array in a single pass. At the first
// event the batch parse cannot take (malformed, a field of the wrong type, invalid UTF-8 anywhere
// in the batch), the rest of the batch is parsed one event at a time, which finds the problem
// exactly and skips only that event, with a warning naming its index and byte offset. Both ways
// give the same result (the fuzz target checks it); ImportOptions::batch_events = false takes the
// second way throughout.
//
// Not thread-safe: one parser per thread (it owns simdjson's parser and its buffers).
#ifndef OPSCOPE_IMPORT_KINETO_EVENT_PARSER_H_
#define OPSCOPE_IMPORT_KINETO_EVENT_PARSER_H_

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "import/kineto/json_stream.h"
#include "opscope/import.h"

namespace opscope::import {

// The args fields the model keeps outside the arg store.
struct ArgFields {
  int64_t external_id = 0;
  int64_t correlation = 0;
  std::string_view input_dims;  // raw JSON of "Input Dims"
};

// The fields of one event, as views into the stream's buffer (valid until the next batch). Numbers
// the model converts (ts, dur) stay text; the stream's padding follows them.
struct EventFields {
  ArgFields arg;  // from args, read in the same pass
  std::string_view ph, name, cat, bp, scope;
  std::string_view ts_text, dur_text;
  std::string_view args;  // raw object text
  bool has_pid = false, has_tid = false, has_id = false;
  int64_t pid = 0, tid = 0;
  std::string_view pid_text, tid_text;  // when given as strings
  uint64_t id = 0;
};

// Receives the entries a parser reads, in stream order: for each traceEvents entry, Begin and then
// either Add (the event's fields) or Skip (why it cannot be used).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // The next entry starts at byte `offset` of the JSON stream.
  virtual void Begin(uint64_t offset) = 0;
  virtual void Add(const EventFields& event) = 0;
  // The entry is skipped; `why` does not name it (the sink knows which entry it is).
  virtual void Skip(std::string_view why) = 0;
  // The batch the calls came from is done (its text may change after this returns).
  virtual void Flush() {}
};

// Receives a whole document: its events (as an EventSink) and the values its top level holds
// beside traceEvents, each as the document reader finds it (before, between or after the events).
class DocumentSink : public EventSink {
 public:
  virtual void SetSchemaVersion(int64_t version) = 0;
  // baseTimeNanoseconds: the epoch time of ts 0.
  virtual void SetBaseTime(int64_t epoch_ns) = 0;
  virtual void SetTraceName(std::string name) = 0;
  // A top-level "deviceType" / "device_type" string.
  virtual void SetDeviceType(std::string type) = 0;
  // One entry of droppedEvents: events the producer dropped, by reason.
  virtual void AddDropped(std::string reason, uint64_t count) = 0;
  // Any other top-level key with its value as raw JSON text (deviceProperties, distributedInfo,
  // ...).
  virtual void AddTopLevelValue(std::string key, std::string raw_json) = 0;
};

class EventParser {
 public:
  explicit EventParser(const ImportOptions& options) : options_(options) {}

  // Reads every entry of `batch` and hands each event that parses to `sink`.
  void Parse(const JsonStream::Batch& batch, EventSink* sink);

 private:
  struct FieldsResult {
    simdjson::error_code error = simdjson::SUCCESS;
    bool in_value = false;  // the error is in a field's value (else in the object's structure)
  };
  // One entry alone, with an exact message when it is skipped.
  void ParseAlone(std::string_view span, EventSink* sink);
  // Reads the fields of the event object whose text is `span`.
  FieldsResult ReadFields(simdjson::ondemand::object& obj, std::string_view span, EventFields* out);

  const ImportOptions& options_;
  simdjson::ondemand::parser parser_;
  std::string alone_;  // ParseAlone's copy of the event and its padding
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_EVENT_PARSER_H_
