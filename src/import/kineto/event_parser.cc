// Reading traceEvents entries with simdjson On Demand (see event_parser.h).
#include "import/kineto/event_parser.h"

#include <functional>
#include <string>

#include "base/json_scan.h"
#include "import/kineto/number_text.h"

namespace opscope::import {
namespace {

namespace od = simdjson::ondemand;

// Reads pid or tid: an integer, or a string (kept as text, given a synthetic id).
bool ReadId(od::value v, int64_t* id, std::string_view* text) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) {
    return ParseInt64(v.raw_json_token(), id);
  }
  if (type == od::json_type::string) {
    if (v.get_string().get(*text)) return false;
    return true;
  }
  return false;
}

// Reads the args fields the model keeps outside the arg store, in the event parser's pass.
simdjson::error_code ReadArgFields(od::object& obj, ArgFields* out) {
  for (auto field_result : obj) {
    od::field field;
    if (auto err = std::move(field_result).get(field)) return err;
    od::raw_json_string key = field.key();
    od::value v = field.value();
    if (key == "External id" || key == "external id") {
      ParseInt64(v.raw_json_token(), &out->external_id);
    } else if (key == "correlation") {
      ParseInt64(v.raw_json_token(), &out->correlation);
    } else if (key == "Input Dims") {
      od::array arr;
      if (!v.get_array().get(arr)) {
        std::string_view raw;
        if (!arr.raw_json().get(raw)) out->input_dims = raw;
      }
    }
  }
  return simdjson::SUCCESS;
}

// The text of the args object that starts at `start` inside the event `span`, without parsing it
// twice: when args came last (as Kineto writes it) it ends at the '}' before the event's own;
// otherwise the scanner finds its end. Empty when it does not close inside the event.
std::string_view ArgsText(const char* start, bool last, std::string_view span) {
  const char* end = nullptr;
  if (last) {
    const char* q = span.data() + span.size() - 1;  // the event's '}'
    while (q > start && internal::IsJsonSpace(q[-1])) --q;
    if (q > start && q[-1] == '}') end = q;
  }
  if (end == nullptr) {
    const std::string_view rest(start, static_cast<size_t>(span.data() + span.size() - start));
    const size_t length = internal::JsonValueEnd(rest, 0);
    if (length == internal::kJsonNoEnd) return {};
    end = start + length;
  }
  return std::string_view(start, static_cast<size_t>(end - start));
}

}  // namespace

void EventParser::Parse(const JsonStream::Batch& b, EventSink* sink) {
  const size_t n = b.elements.size();
  size_t k = 0;
  if (n > 1 && options_.batch_events) {
    od::document doc;
    od::array events;
    if (!parser_.iterate(b.array.data(), b.array.size(), b.array.size() + JsonStream::kPadding)
             .get(doc) &&
        !doc.get_array().get(events)) {
      for (auto element : events) {
        if (k == n) break;
        od::value v;
        od::object obj;
        if (std::move(element).get(v) || v.get_object().get(obj)) break;
        EventFields f;
        if (ReadFields(obj, b.elements[k], &f).error) break;
        sink->Begin(b.offsets[k]);
        sink->Add(f);
        ++k;
      }
    }
  }
  for (; k < n; ++k) {
    sink->Begin(b.offsets[k]);
    ParseAlone(b.elements[k], sink);
  }
}

void EventParser::ParseAlone(std::string_view span, EventSink* sink) {
  if (span.empty() || span.front() != '{') {
    sink->Skip("expected an event object");
    return;
  }
  // Parsed from a copy padded with NULs: in place, the bytes after the event (the next events in
  // the stream, or a chunk's end on a parse thread) changed what simdjson made of malformed
  // input ("ts": "x": 1} read as ts "x" in one, a structure error in the other), and every parse
  // path must give the same events and warnings.
  alone_.assign(span.data(), span.size());
  alone_.append(JsonStream::kPadding, '\0');
  od::document doc;
  auto err = parser_.iterate(alone_.data(), span.size(), alone_.size()).get(doc);
  if (err) {
    sink->Skip(simdjson::error_message(err));
    return;
  }
  od::object obj;
  if ((err = doc.get_object().get(obj))) {
    sink->Skip(simdjson::error_message(err));
    return;
  }
  EventFields f;
  const FieldsResult r = ReadFields(obj, std::string_view(alone_.data(), span.size()), &f);
  // Raw views into the copy point into the stream's buffer again, valid as long as it is.
  for (std::string_view* raw : {&f.ts_text, &f.dur_text, &f.args, &f.arg.input_dims}) {
    if (raw->data() >= alone_.data() && raw->data() < alone_.data() + alone_.size()) {
      *raw = std::string_view(span.data() + (raw->data() - alone_.data()), raw->size());
    }
  }
  if (r.error) {
    if (r.in_value) {
      sink->Skip("field value has the wrong type or is malformed (" +
                 std::string(simdjson::error_message(r.error)) + ")");
    } else {
      sink->Skip(simdjson::error_message(r.error));
    }
    return;
  }
  sink->Add(f);
}

EventParser::FieldsResult EventParser::ReadFields(od::object& obj, std::string_view span,
                                                  EventFields* out) {
  EventFields& f = *out;
  simdjson::error_code err = simdjson::SUCCESS;
  const char* args_start = nullptr;
  bool args_last = false;  // args was the event's last field (as Kineto writes it)
  for (auto field_result : obj) {
    od::field field;
    if ((err = std::move(field_result).get(field))) return {err, false};
    od::raw_json_string key = field.key();
    od::value v = field.value();
    args_last = false;
    if (key == "ph") {
      err = v.get_string().get(f.ph);
    } else if (key == "name") {
      err = v.get_string().get(f.name);
    } else if (key == "cat") {
      err = v.get_string().get(f.cat);
    } else if (key == "ts") {
      f.ts_text = v.raw_json_token();
    } else if (key == "dur") {
      f.dur_text = v.raw_json_token();
    } else if (key == "pid") {
      f.has_pid = ReadId(v, &f.pid, &f.pid_text);
      if (!f.has_pid) err = simdjson::INCORRECT_TYPE;
    } else if (key == "tid") {
      f.has_tid = ReadId(v, &f.tid, &f.tid_text);
      if (!f.has_tid) err = simdjson::INCORRECT_TYPE;
    } else if (key == "args") {
      args_start = v.raw_json_token().data();
      od::object args;
      err = v.get_object().get(args);
      if (!err) err = ReadArgFields(args, &f.arg);
      args_last = true;
    } else if (key == "id") {
      int64_t id_int = 0;
      std::string_view id_text;
      if (ReadId(v, &id_int, &id_text)) {
        f.has_id = true;
        f.id = id_text.empty() ? static_cast<uint64_t>(id_int)
                               : std::hash<std::string_view>{}(id_text);
      }
    } else if (key == "bp") {
      err = v.get_string().get(f.bp);
    } else if (key == "s") {
      err = v.get_string().get(f.scope);
    }
    if (err) return {err, true};
  }
  if (args_start != nullptr) f.args = ArgsText(args_start, args_last, span);
  return {};
}

}  // namespace opscope::import
