// Events to the trace model, by phase (see event_translator.h).
#include "analysis/event_translator.h"

#include <algorithm>
#include <string>

#include "analysis/json_stream.h"
#include "analysis/number_text.h"

namespace opscope::analysis {

namespace {

// "Input Dims" as PyTorch prints input shapes (str() of a Python list: "[[2, 3], []]"), whatever
// the JSON's own spacing (pretty-printed traces break it over lines): whitespace outside strings
// dropped, ", " after each comma.
std::string PythonListText(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size()) {
        out += json[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == ',') {
      out += ", ";
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      out += c;
    }
  }
  return out;
}

}  // namespace

namespace {

namespace od = simdjson::ondemand;

// Event times (start and end) must lie within +-(2^62 - 1) ns, about 146 years either side of the
// trace's zero (absolute epoch timestamps reach 2116): then the difference of any two fits in
// int64, which every analysis relies on.
constexpr int64_t kMaxTimeNs = (int64_t{1} << 62) - 1;

}  // namespace

void EventTranslator::Add(const EventFields& f) {
  if (f.ph.empty()) {
    log_->SkipEvent("missing \"ph\"");
    return;
  }
  switch (f.ph[0]) {
    case 'X':
      return AddComplete(f);
    case 'i':
    case 'I':
      return AddInstant(f);
    case 'C':
      return AddCounter(f);
    case 'M':
      return AddMetadata(f);
    case 's':
    case 'f':
    case 't':
      return AddFlow(f);
    case 'B':
    case 'E':
      return AddBeginEnd(f);
    default:
      log_->SkipEvent("unsupported phase \"" + std::string(f.ph) + "\"");
  }
}

bool EventTranslator::ReadTimes(const EventFields& f, int64_t* ts, int64_t* dur, bool need_dur) {
  if (f.ts_text.empty()) {
    log_->SkipEvent("missing \"ts\"");
    return false;
  }
  if (!ParseMicrosToNanosPadded(f.ts_text, ts) || *ts < -kMaxTimeNs ||
      *ts > kMaxTimeNs) {  // the stream buffer is padded
    log_->SkipEvent("\"ts\" is not a number of microseconds within +-146 years (found " +
                    std::string(f.ts_text.substr(0, 40)) + ")");
    return false;
  }
  if (!need_dur) return true;
  if (f.dur_text.empty()) {
    log_->SkipEvent("missing \"dur\" on a complete event");
    return false;
  }
  if (!ParseMicrosToNanosPadded(f.dur_text, dur)) {
    log_->SkipEvent("\"dur\" is not a number of microseconds in range (found " +
                    std::string(f.dur_text.substr(0, 40)) + ")");
    return false;
  }
  if (*dur < 0) {
    log_->Warn(
        "traceEvents entry " + std::to_string(log_->event_index()) + ": negative dur clamped to 0",
        false);
    *dur = 0;
  }
  if (*dur > kMaxTimeNs - *ts) {
    log_->SkipEvent("ts + dur is past +146 years");
    return false;
  }
  return true;
}

ActivityKind EventTranslator::KindOf(StringId cat, std::string_view text) {
  auto it = kind_by_cat_.find(cat);
  if (it != kind_by_cat_.end()) return it->second;
  ActivityKind k = KindFromCategory(text);
  kind_by_cat_.emplace(cat, k);
  device_family_.NoteCategory(text);
  return k;
}

void EventTranslator::AddComplete(const EventFields& f) {
  Slice s;
  int64_t dur = 0;
  if (!ReadTimes(f, &s.ts_ns, &dur, true)) return;
  s.dur_ns = dur;
  s.category = strings_.Intern(f.cat);
  s.kind = KindOf(s.category, f.cat);
  s.name = strings_.Intern(f.name);
  const bool device = IsDeviceActivity(s.kind);
  s.track = tracks_.TrackOf(f, device ? TrackKind::kDeviceStream : TrackKind::kThread);
  if (device) tracks_.MarkDevice(s.track);
  const ArgFields& a = f.arg;
  s.external_id = a.external_id;
  s.correlation = a.correlation;
  if (!a.input_dims.empty()) s.input_shapes = strings_.Intern(PythonListText(a.input_dims));
  if (options_.keep_args && f.args.size() > 2) s.args = trace_->AddArgs(f.args);
  stage_.Add(s);
  ++stats_.slices;
}

void EventTranslator::AddInstant(const EventFields& f) {
  Instant i;
  int64_t unused = 0;
  if (!ReadTimes(f, &i.ts_ns, &unused, false)) return;
  i.name = strings_.Intern(f.name);
  i.category = strings_.Intern(f.cat);
  i.track = tracks_.TrackOf(f, TrackKind::kThread);
  i.scope = f.scope.empty() ? 't' : f.scope[0];
  if (options_.keep_args && f.args.size() > 2) i.args = trace_->AddArgs(f.args);
  trace_->AddInstant(i);
  ++stats_.instants;
}

void EventTranslator::AddCounter(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  if (f.args.size() <= 2) {
    log_->SkipEvent("counter event without args");
    return;
  }
  od::document doc;
  od::object obj;
  if (args_parser_.iterate(f.args.data(), f.args.size(), f.args.size() + JsonStream::kPadding)
          .get(doc) ||
      doc.get_object().get(obj)) {
    log_->SkipEvent("counter args are not an object");
    return;
  }
  const uint32_t process = tracks_.ProcessOf(f);
  size_t kept = 0;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) break;
    std::string_view key;
    if (field.unescaped_key().get(key)) break;
    std::string series = std::string(f.name);
    if (key != f.name) series += "." + std::string(key);
    double value = 0;
    if (field.value().get_double().get(value)) continue;  // non-numeric series are ignored
    const StringId series_id = trace_->Intern(series);
    trace_->AddCounter({ts, value, tracks_.CounterTrack(process, series_id, series)});
    ++stats_.counters;
    ++kept;
  }
  if (kept == 0) log_->SkipEvent("counter event with no numeric series");
}

void EventTranslator::AddMetadata(const EventFields& f) {
  std::string_view value_text;
  int64_t sort_index = 0;
  bool has_sort = false;
  if (f.args.size() > 2) {
    od::document doc;
    od::object obj;
    if (!args_parser_.iterate(f.args.data(), f.args.size(), f.args.size() + JsonStream::kPadding)
             .get(doc) &&
        !doc.get_object().get(obj)) {
      for (auto field_result : obj) {
        od::field field;
        if (std::move(field_result).get(field)) break;
        od::raw_json_string key = field.key();
        od::value v = field.value();
        if (key == "name" || key == "labels") {
          if (v.get_string().get(value_text)) value_text = {};
        } else if (key == "sort_index") {
          has_sort = ParseInt64(v.raw_json_token(), &sort_index);
        }
      }
    }
  }
  const uint32_t process = tracks_.ProcessOf(f);
  Process& p = trace_->MutableProcess(process);
  if (f.name == "process_name") {
    p.name = trace_->Intern(value_text);
  } else if (f.name == "process_labels") {
    p.labels = trace_->Intern(value_text);
  } else if (f.name == "process_sort_index") {
    if (has_sort) p.sort_index = sort_index;
  } else if (f.name == "thread_name" || f.name == "thread_sort_index") {
    const uint32_t track = tracks_.TrackOf(f, TrackKind::kThread);
    Track& t = trace_->MutableTrack(track);
    if (f.name == "thread_name") {
      t.name = trace_->Intern(value_text);
    } else if (has_sort) {
      t.sort_index = sort_index;
    }
  } else {
    // Other metadata (e.g. "trace_name"-style producers' extras) carries nothing the model keeps.
  }
  ++stats_.metadata;
}

void EventTranslator::AddFlow(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  if (!f.has_id) {
    log_->SkipEvent("flow event without \"id\"");
    return;
  }
  if (f.ph[0] == 't') {  // flow steps carry no binding opscope uses
    ++stats_.flow_endpoints;
    return;
  }
  const uint32_t track = tracks_.TrackOf(f, TrackKind::kThread);
  trace_->AddFlowEndpoint(f.id, strings_.Intern(f.cat), strings_.Intern(f.name), track, ts,
                          f.ph[0] == 's', f.bp == "e");
  ++stats_.flow_endpoints;
}

// Duration begin/end pairs become complete slices, matched per track in stack order.
void EventTranslator::AddBeginEnd(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  const uint32_t track = tracks_.TrackOf(f, TrackKind::kThread);
  auto& stack = open_begins_[track];
  if (f.ph[0] == 'B') {
    Slice s;
    s.ts_ns = ts;
    s.track = track;
    s.category = strings_.Intern(f.cat);
    s.kind = KindOf(s.category, f.cat);
    s.name = strings_.Intern(f.name);
    const ArgFields& a = f.arg;
    s.external_id = a.external_id;
    s.correlation = a.correlation;
    if (options_.keep_args && f.args.size() > 2) s.args = trace_->AddArgs(f.args);
    stack.push_back(s);
    return;
  }
  if (stack.empty()) {
    log_->SkipEvent("\"E\" event without a matching \"B\" on its thread");
    return;
  }
  Slice s = stack.back();
  stack.pop_back();
  s.dur_ns = std::max<int64_t>(0, ts - s.ts_ns);
  stage_.Add(s);
  ++stats_.slices;
}

void EventTranslator::Finish() {
  for (auto& [track, stack] : open_begins_) {
    for (const Slice& s : stack) {
      log_->Warn(
          "\"B\" event at ts " + std::to_string(s.ts_ns) + " ns never ended; kept with dur 0",
          false);
      stage_.Add(s);
      ++stats_.slices;
    }
  }
  TraceMetadata& md = trace_->metadata();
  if (std::string type = device_family_.DeviceType(*trace_); !type.empty()) {
    md.device_type = std::move(type);
  }
  md.skipped_events = stats_.skipped;
  md.warnings = stats_.warnings;
  stage_.MoveTo(trace_);
  trace_->Finalize();
}

}  // namespace opscope::analysis
