// Reading a trace document's outer structure (see trace_document.h).
#include "import/kineto/trace_document.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "import/kineto/number_text.h"
#include "opscope/import.h"

namespace opscope::import {
namespace {

namespace od = simdjson::ondemand;

constexpr size_t kMaxTopLevelValueBytes = 16u << 20;  // keep top-level extras up to 16 MiB
// Events are parsed in batches of about this much text: large enough that the per-parse setup
// vanishes, small enough that the parser's index of the batch stays in cache.
constexpr size_t kBatchBytes = 32u << 10;

}  // namespace

Status TraceDocumentReader::Expected(const std::string& what, int found) {
  std::string f = found < 0 ? "end of input" : std::string("'") + static_cast<char>(found) + "'";
  if (found >= 0 && (found < 0x20 || found >= 0x7f)) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%02x", found);
    f = std::string("byte ") + hex;
  }
  return Status::InvalidInput(
      "byte " + std::to_string(stream_.offset()) + ": expected " + what + ", found " + f,
      stream_.offset());
}

Status TraceDocumentReader::Read() {
  int c = 0;
  Status st = stream_.Peek(&c);
  if (!st.ok()) return st;
  if (c < 0) {
    return Status::InvalidInput("byte 0: empty input; expected a JSON object with traceEvents", 0);
  }
  if (c == '[') {  // Chrome's bare array form
    st = ReadEvents();
    if (!st.ok()) return st;
  } else if (c == '{') {
    stream_.Skip();
    st = ReadTopLevelObject();
    if (!st.ok()) return st;
  } else {
    return Expected("'{' (a trace object) or '[' (an event array)", c);
  }
  st = stream_.Peek(&c);
  if (!st.ok()) return st;
  if (c >= 0) return Expected("end of input after the trace", c);
  if (!saw_events_) {
    return Status::InvalidInput("byte " + std::to_string(stream_.offset()) +
                                    ": no \"traceEvents\" array in the trace object",
                                stream_.offset());
  }
  return Status::Ok();
}

Status TraceDocumentReader::ReadTopLevelObject() {
  int c = 0;
  Status st = stream_.Peek(&c);
  if (!st.ok()) return st;
  if (c == '}') {
    stream_.Skip();
    return Status::Ok();
  }
  std::string key;
  for (;;) {
    st = stream_.ReadRawString(&key);
    if (!st.ok()) return st;
    st = stream_.Peek(&c);
    if (!st.ok()) return st;
    if (c != ':') return Expected("':' after key \"" + key + "\"", c);
    stream_.Skip();
    if (key == "traceEvents") {
      st = stream_.Peek(&c);
      if (!st.ok()) return st;
      if (c != '[') return Expected("'[' to open traceEvents", c);
      st = ReadEvents();
    } else {
      st = ReadTopLevelValue(key);
    }
    if (!st.ok()) return st;
    st = stream_.Peek(&c);
    if (!st.ok()) return st;
    if (c == '}') {
      stream_.Skip();
      return Status::Ok();
    }
    if (c != ',') return Expected("',' or '}' after the value of \"" + key + "\"", c);
    stream_.Skip();
  }
}

Status TraceDocumentReader::ReadTopLevelValue(const std::string& key) {
  std::string_view span;
  Status st = stream_.ReadValue(&span);
  if (!st.ok()) return st;
  const uint64_t at = stream_.value_offset();
  if (!simdjson::validate_utf8(span.data(), span.size())) {
    log_->Warn("top-level key \"" + key + "\" at byte " + std::to_string(at) +
                   " is not valid UTF-8; ignored",
               false);
    return Status::Ok();
  }
  if (key == "schemaVersion") {
    int64_t v = 0;
    if (ParseInt64(span, &v)) sink_->SetSchemaVersion(v);
  } else if (key == "baseTimeNanoseconds") {
    int64_t v = 0;
    std::string_view text = span;
    if (!text.empty() && text.front() == '"') text = text.substr(1, text.size() - 2);
    if (ParseInt64(text, &v)) {
      sink_->SetBaseTime(v);
    } else {
      log_->Warn("baseTimeNanoseconds at byte " + std::to_string(at) +
                     " is not an integer; expected epoch nanoseconds",
                 false);
    }
  } else if (key == "traceName") {
    if (span.size() >= 2 && span.front() == '"') {
      sink_->SetTraceName(std::string(span.substr(1, span.size() - 2)));
    }
  } else if (key == "droppedEvents") {
    ReadDropped(span, at);
  } else if (key == "deviceType" || key == "device_type") {
    if (span.size() >= 2 && span.front() == '"') {
      sink_->SetDeviceType(std::string(span.substr(1, span.size() - 2)));
    }
  } else {
    if (span.size() > kMaxTopLevelValueBytes) {
      log_->Warn("top-level key \"" + key + "\" at byte " + std::to_string(at) + " holds " +
                     std::to_string(span.size()) + " bytes; not kept",
                 false);
      return Status::Ok();
    }
    sink_->AddTopLevelValue(key, std::string(span));
  }
  return Status::Ok();
}

void TraceDocumentReader::ReadDropped(std::string_view span, uint64_t at) {
  od::document doc;
  od::object obj;
  if (value_parser_.iterate(span.data(), span.size(), span.size() + JsonStream::kPadding)
          .get(doc) ||
      doc.get_object().get(obj)) {
    log_->Warn("droppedEvents at byte " + std::to_string(at) + " is not an object; ignored", false);
    return;
  }
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) break;
    std::string_view reason;
    if (field.unescaped_key().get(reason)) break;
    const std::string name(reason);
    int64_t count = 0;
    if (ParseInt64(field.value().raw_json_token(), &count) && count >= 0) {
      sink_->AddDropped(name, static_cast<uint64_t>(count));
    }
  }
}

Status TraceDocumentReader::ReadEvents() {
  saw_events_ = true;
  stream_.Skip();  // '['
  Status st = ReadEventBatches();
  // Everything read before an error is kept; top-level values after the array intern strings
  // after every event, as when parsing on one thread.
  if (parallel_ != nullptr) parallel_->Drain();
  return st;
}

Status TraceDocumentReader::ReadEventBatches() {
  // A chunk holds whole batches: small chunks (tests) need batches as small.
  const size_t batch_bytes =
      parallel_ != nullptr ? std::min(kBatchBytes, parallel_->chunk_bytes()) : kBatchBytes;
  JsonStream::Batch batch;
  ImportStats& stats = log_->stats();
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  for (;;) {
    bool end = false;
    const auto t0 = Clock::now();
    Status st = stream_.ReadElements(batch_bytes, "traceEvents entry", entries_read_, &batch, &end);
    const auto t1 = Clock::now();
    stats.read_seconds += seconds(t0, t1);
    if (!st.ok()) return st;
    entries_read_ += batch.elements.size();
    if (on_batch_) on_batch_();
    if (parallel_ != nullptr && !submitting_) {
      submitting_ = parallel_->StartsAt(stream_.offset());
    }
    if (submitting_) {
      parallel_->Submit(batch);
    } else {
      parser_.Parse(batch, sink_);
      stats.parse_seconds += seconds(t1, Clock::now());
      sink_->Flush();  // the merge: timed in EventTranslator::Merge
    }
    if (end) return Status::Ok();
  }
}

}  // namespace opscope::import
