// Streaming importer for Kineto / Chrome trace JSON (plain or gzip) into an opscope::Trace.
//
// The outer structure is walked by JsonStream; each event object is parsed in place with
// simdjson On Demand and turned into a Slice / Instant / CounterSample / flow endpoint /
// metadata update. Memory holds the model, never the text.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/byte_source.h"
#include "analysis/json_stream.h"
#include "analysis/number_text.h"
#include "analysis/slice_stage.h"
#include "opscope/analysis.h"
#include "trace/json_scan.h"

namespace opscope {
namespace {

namespace od = simdjson::ondemand;
using analysis::ByteSource;
using analysis::JsonStream;

constexpr int64_t kSyntheticIdBase = int64_t{1} << 48;  // ids for string pids/tids
// Event times (start and end) must lie within +-(2^62 - 1) ns, about 146 years either side of the
// trace's zero (absolute epoch timestamps reach 2116): then the difference of any two fits in
// int64, which every analysis relies on.
constexpr int64_t kMaxTimeNs = (int64_t{1} << 62) - 1;
constexpr size_t kMaxTopLevelValueBytes = 16u << 20;  // keep top-level extras up to 16 MiB
// Events are parsed in batches of about this much text: large enough that the per-parse setup
// vanishes, small enough that the parser's index of the batch stays in cache.
constexpr size_t kBatchBytes = 32u << 10;

// What a category string says about an event.
ActivityKind KindFromCategory(std::string_view cat) {
  if (cat == "cpu_op" || cat == "Operator") return ActivityKind::kCpuOp;
  if (cat == "user_annotation") return ActivityKind::kUserAnnotation;
  if (cat == "python_function") return ActivityKind::kPythonFunction;
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") return ActivityKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return ActivityKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return ActivityKind::kMemset;
  if (cat == "gpu_user_annotation") return ActivityKind::kDeviceAnnotation;
  if (cat == "device_instruction") return ActivityKind::kInstruction;
  if (cat == "collective_comm") return ActivityKind::kCollective;
  if (cat == "cuda_sync") return ActivityKind::kSync;
  if (cat == "overhead") return ActivityKind::kOverhead;
  if (cat == "Runtime" || (cat.size() > 8 && cat.substr(cat.size() - 8) == "_runtime")) {
    return ActivityKind::kRuntime;
  }
  if (cat == "Driver" || (cat.size() > 7 && cat.substr(cat.size() - 7) == "_driver")) {
    return ActivityKind::kDriver;
  }
  return ActivityKind::kOther;
}

// The args fields the model keeps outside the arg store.
struct ArgFields {
  int64_t external_id = 0;
  int64_t correlation = 0;
  std::string_view input_dims;  // raw JSON of "Input Dims"
};

// The fields of one event, as views into the parser's buffers (valid for this event only).
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

class Importer {
 public:
  Importer(Trace* trace, ImportStats* stats, const ImportOptions& options)
      : trace_(trace), stats_(stats), options_(options) {}

  // `buffer_bytes`: the stream's starting buffer (it grows for larger values).
  // `json_bytes_hint`: expected JSON size, for reserving slice storage up front (no copies as it
  // grows; pages that are never written cost no memory).
  Status Run(ByteSource* source, size_t buffer_bytes, uint64_t json_bytes_hint) {
    // A complete event takes at least ~90 bytes of JSON.
    trace_->ReserveSlices(
        static_cast<size_t>(std::min<uint64_t>(json_bytes_hint / 90, uint64_t{1} << 31)));
    JsonStream stream(source, options_.max_depth, buffer_bytes);
    stream_ = &stream;
    Status st = ReadDocument();
    stats_->json_bytes = stream.bytes_read();
    stats_->input_bytes = source->input_bytes();
    Finish();
    return st;
  }

 private:
  Status Expected(const std::string& what, int found) {
    std::string f = found < 0 ? "end of input" : std::string("'") + static_cast<char>(found) + "'";
    if (found >= 0 && (found < 0x20 || found >= 0x7f)) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "0x%02x", found);
      f = std::string("byte ") + hex;
    }
    return Status::InvalidInput(
        "byte " + std::to_string(stream_->offset()) + ": expected " + what + ", found " + f,
        stream_->offset());
  }

  Status ReadDocument() {
    int c = 0;
    Status st = stream_->Peek(&c);
    if (!st.ok()) return st;
    if (c < 0) {
      return Status::InvalidInput("byte 0: empty input; expected a JSON object with traceEvents",
                                  0);
    }
    if (c == '[') {  // Chrome's bare array form
      st = ReadEvents();
      if (!st.ok()) return st;
    } else if (c == '{') {
      stream_->Skip();
      st = ReadTopLevelObject();
      if (!st.ok()) return st;
    } else {
      return Expected("'{' (a trace object) or '[' (an event array)", c);
    }
    st = stream_->Peek(&c);
    if (!st.ok()) return st;
    if (c >= 0) return Expected("end of input after the trace", c);
    if (!saw_events_) {
      return Status::InvalidInput("byte " + std::to_string(stream_->offset()) +
                                      ": no \"traceEvents\" array in the trace object",
                                  stream_->offset());
    }
    return Status::Ok();
  }

  Status ReadTopLevelObject() {
    int c = 0;
    Status st = stream_->Peek(&c);
    if (!st.ok()) return st;
    if (c == '}') {
      stream_->Skip();
      return Status::Ok();
    }
    std::string key;
    for (;;) {
      st = stream_->ReadRawString(&key);
      if (!st.ok()) return st;
      st = stream_->Peek(&c);
      if (!st.ok()) return st;
      if (c != ':') return Expected("':' after key \"" + key + "\"", c);
      stream_->Skip();
      if (key == "traceEvents") {
        st = stream_->Peek(&c);
        if (!st.ok()) return st;
        if (c != '[') return Expected("'[' to open traceEvents", c);
        st = ReadEvents();
      } else {
        st = ReadTopLevelValue(key);
      }
      if (!st.ok()) return st;
      st = stream_->Peek(&c);
      if (!st.ok()) return st;
      if (c == '}') {
        stream_->Skip();
        return Status::Ok();
      }
      if (c != ',') return Expected("',' or '}' after the value of \"" + key + "\"", c);
      stream_->Skip();
    }
  }

  Status ReadTopLevelValue(const std::string& key) {
    std::string_view span;
    Status st = stream_->ReadValue(&span);
    if (!st.ok()) return st;
    const uint64_t at = stream_->value_offset();
    if (!simdjson::validate_utf8(span.data(), span.size())) {
      Warn("top-level key \"" + key + "\" at byte " + std::to_string(at) +
               " is not valid UTF-8; ignored",
           false);
      return Status::Ok();
    }
    TraceMetadata& md = trace_->metadata();
    if (key == "schemaVersion") {
      int64_t v = 0;
      if (analysis::ParseInt64(span, &v)) md.schema_version = v;
    } else if (key == "baseTimeNanoseconds") {
      int64_t v = 0;
      std::string_view text = span;
      if (!text.empty() && text.front() == '"') text = text.substr(1, text.size() - 2);
      if (analysis::ParseInt64(text, &v)) {
        md.base_time_ns = v;
      } else {
        Warn("baseTimeNanoseconds at byte " + std::to_string(at) +
                 " is not an integer; expected epoch nanoseconds",
             false);
      }
    } else if (key == "traceName") {
      if (span.size() >= 2 && span.front() == '"')
        md.trace_name = std::string(span.substr(1, span.size() - 2));
    } else if (key == "droppedEvents") {
      ReadDropped(span, at);
    } else if (key == "deviceType" || key == "device_type") {
      if (span.size() >= 2 && span.front() == '"')
        device_type_hint_ = std::string(span.substr(1, span.size() - 2));
    } else {
      if (span.size() > kMaxTopLevelValueBytes) {
        Warn("top-level key \"" + key + "\" at byte " + std::to_string(at) + " holds " +
                 std::to_string(span.size()) + " bytes; not kept",
             false);
        return Status::Ok();
      }
      if (key == "deviceProperties")
        has_device_properties_ = span.find('{') != std::string_view::npos;
      md.extra.emplace_back(key, std::string(span));
    }
    return Status::Ok();
  }

  // {"reason": count, ...}: events the producer dropped.
  void ReadDropped(std::string_view span, uint64_t at) {
    od::document doc;
    od::object obj;
    if (args_parser_.iterate(span.data(), span.size(), span.size() + JsonStream::kPadding)
            .get(doc) ||
        doc.get_object().get(obj)) {
      Warn("droppedEvents at byte " + std::to_string(at) + " is not an object; ignored", false);
      return;
    }
    for (auto field_result : obj) {
      od::field field;
      if (std::move(field_result).get(field)) break;
      std::string_view reason;
      if (field.unescaped_key().get(reason)) break;
      const std::string name(reason);
      int64_t count = 0;
      if (analysis::ParseInt64(field.value().raw_json_token(), &count) && count >= 0) {
        trace_->metadata().dropped.emplace_back(name, static_cast<uint64_t>(count));
      }
    }
  }

  Status ReadEvents() {
    saw_events_ = true;
    stream_->Skip();  // '['
    JsonStream::Batch batch;
    for (;;) {
      bool end = false;
      Status st =
          stream_->ReadElements(kBatchBytes, "traceEvents entry", stats_->events, &batch, &end);
      if (!st.ok()) return st;
      HandleBatch(batch);
      if (end) return Status::Ok();
    }
  }

  // Records a warning; `skipped` counts the event as skipped.
  void Warn(std::string message, bool skipped) {
    if (skipped) ++stats_->skipped;
    ++warning_count_;
    if (stats_->warnings.size() < options_.max_warning_messages) {
      stats_->warnings.push_back(std::move(message));
    }
  }

  void SkipEvent(const std::string& why) {
    Warn("traceEvents entry " + std::to_string(stats_->events - 1) + " at byte " +
             std::to_string(event_offset_) + ": " + why + "; event skipped",
         true);
  }

  // Counts the next event, which starts at stream offset `offset`.
  void BeginEvent(uint64_t offset) {
    ++stats_->events;
    event_offset_ = offset;
  }

  static std::string_view ErrorText(simdjson::error_code e) { return simdjson::error_message(e); }

  // Reads pid or tid: an integer, or a string (kept as text, given a synthetic id).
  bool ReadId(od::value v, int64_t* id, std::string_view* text) {
    od::json_type type;
    if (v.type().get(type)) return false;
    if (type == od::json_type::number) {
      return analysis::ParseInt64(v.raw_json_token(), id);
    }
    if (type == od::json_type::string) {
      if (v.get_string().get(*text)) return false;
      return true;
    }
    return false;
  }

  // A batch of events: parsed as one array in a single pass. At the first event the batch parse
  // cannot take (malformed, wrong types, invalid UTF-8 anywhere in the batch), the rest of the
  // batch is handled one event at a time, which finds and reports the problem exactly.
  void HandleBatch(const JsonStream::Batch& b) {
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
          BeginEvent(b.offsets[k]);
          Dispatch(f);
          ++k;
        }
      }
    }
    for (; k < n; ++k) {
      BeginEvent(b.offsets[k]);
      HandleEvent(b.elements[k]);
    }
  }

  // One event alone.
  void HandleEvent(std::string_view span) {
    if (span.empty() || span.front() != '{') {
      SkipEvent("expected an event object");
      return;
    }
    od::document doc;
    auto err =
        parser_.iterate(span.data(), span.size(), span.size() + JsonStream::kPadding).get(doc);
    if (err) {
      SkipEvent(std::string(ErrorText(err)));
      return;
    }
    od::object obj;
    if ((err = doc.get_object().get(obj))) {
      SkipEvent(std::string(ErrorText(err)));
      return;
    }
    EventFields f;
    const FieldsResult r = ReadFields(obj, span, &f);
    if (r.error) {
      if (r.in_value) {
        SkipEvent("field value has the wrong type or is malformed (" +
                  std::string(ErrorText(r.error)) + ")");
      } else {
        SkipEvent(std::string(ErrorText(r.error)));
      }
      return;
    }
    Dispatch(f);
  }

  struct FieldsResult {
    simdjson::error_code error = simdjson::SUCCESS;
    bool in_value = false;  // the error is in a field's value (else in the object's structure)
  };

  // Reads the fields of the event object whose text is `span`.
  FieldsResult ReadFields(od::object& obj, std::string_view span, EventFields* out) {
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
    if (args_start != nullptr) {
      // The args text for the arg store, without parsing it twice: when args came last its end is
      // the '}' before the event's own; otherwise scan for it.
      const char* end = nullptr;
      if (args_last) {
        const char* q = span.data() + span.size() - 1;  // the event's '}'
        while (q > args_start &&
               (q[-1] == ' ' || q[-1] == '\n' || q[-1] == '\r' || q[-1] == '\t')) {
          --q;
        }
        if (q > args_start && q[-1] == '}') end = q;
      }
      if (end == nullptr) {
        const std::string_view rest(args_start,
                                    static_cast<size_t>(span.data() + span.size() - args_start));
        const size_t length = internal::JsonValueEnd(rest, 0);
        if (length != internal::kJsonNoEnd) end = args_start + length;
      }
      if (end != nullptr)
        f.args = std::string_view(args_start, static_cast<size_t>(end - args_start));
    }
    return {};
  }

  // Turns an event's fields into the model's records.
  void Dispatch(const EventFields& f) {
    if (f.ph.empty()) {
      SkipEvent("missing \"ph\"");
      return;
    }
    switch (f.ph[0]) {
      case 'X':
        return HandleComplete(f);
      case 'i':
      case 'I':
        return HandleInstant(f);
      case 'C':
        return HandleCounter(f);
      case 'M':
        return HandleMetadata(f);
      case 's':
      case 'f':
      case 't':
        return HandleFlow(f);
      case 'B':
      case 'E':
        return HandleBeginEnd(f);
      default:
        SkipEvent("unsupported phase \"" + std::string(f.ph) + "\"");
    }
  }

  // Resolves (pid, tid) to a track, creating process and track on first sight.
  uint32_t TrackFor(const EventFields& f, TrackKind kind) {
    int64_t pid = f.pid, tid = f.tid;
    if (!f.pid_text.empty()) pid = SyntheticId(f.pid_text);
    if (!f.tid_text.empty()) tid = SyntheticId(f.tid_text);
    // Events alternate among a few threads and streams: a small direct-mapped cache of
    // (pid, tid) -> track answers most of them without the trace's hash maps.
    const uint64_t h = (static_cast<uint64_t>(pid) * 0x9E3779B97F4A7C15ull) ^
                       (static_cast<uint64_t>(tid) * 0xbf58476d1ce4e5b9ull);
    TrackCacheEntry& e = track_cache_[h >> (64 - kTrackCacheBits)];
    if (e.track != kNone && e.pid == pid && e.tid == tid) return e.track;
    const uint32_t process = trace_->FindOrAddProcess(pid, f.pid_text);
    const uint32_t track = trace_->FindOrAddTrack(process, tid, f.tid_text, kind);
    e = {pid, tid, track};
    return track;
  }

  int64_t SyntheticId(std::string_view text) {
    int64_t v = 0;
    if (analysis::ParseInt64(text, &v)) return v;
    auto it = synthetic_ids_.find(std::string(text));
    if (it != synthetic_ids_.end()) return it->second;
    int64_t id = kSyntheticIdBase + static_cast<int64_t>(synthetic_ids_.size());
    synthetic_ids_.emplace(std::string(text), id);
    return id;
  }

  bool ReadTimes(const EventFields& f, int64_t* ts, int64_t* dur, bool need_dur) {
    if (f.ts_text.empty()) {
      SkipEvent("missing \"ts\"");
      return false;
    }
    if (!analysis::ParseMicrosToNanosPadded(f.ts_text, ts) || *ts < -kMaxTimeNs ||
        *ts > kMaxTimeNs) {  // the stream buffer is padded
      SkipEvent("\"ts\" is not a number of microseconds within +-146 years (found " +
                std::string(f.ts_text.substr(0, 40)) + ")");
      return false;
    }
    if (!need_dur) return true;
    if (f.dur_text.empty()) {
      SkipEvent("missing \"dur\" on a complete event");
      return false;
    }
    if (!analysis::ParseMicrosToNanosPadded(f.dur_text, dur)) {
      SkipEvent("\"dur\" is not a number of microseconds in range (found " +
                std::string(f.dur_text.substr(0, 40)) + ")");
      return false;
    }
    if (*dur < 0) {
      Warn(
          "traceEvents entry " + std::to_string(stats_->events - 1) + ": negative dur clamped to 0",
          false);
      *dur = 0;
    }
    if (*dur > kMaxTimeNs - *ts) {
      SkipEvent("ts + dur is past +146 years");
      return false;
    }
    return true;
  }

  // Reads the args fields the model keeps outside the arg store, in the event parser's pass.
  static simdjson::error_code ReadArgFields(od::object& obj, ArgFields* out) {
    for (auto field_result : obj) {
      od::field field;
      if (auto err = std::move(field_result).get(field)) return err;
      od::raw_json_string key = field.key();
      od::value v = field.value();
      if (key == "External id" || key == "external id") {
        analysis::ParseInt64(v.raw_json_token(), &out->external_id);
      } else if (key == "correlation") {
        analysis::ParseInt64(v.raw_json_token(), &out->correlation);
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

  // Names and categories repeat millions of times and kernel names run to hundreds of bytes: a
  // direct-mapped cache keyed by the length and the first, middle and last 8 bytes avoids hashing
  // them all. Template-heavy kernel names share long prefixes and suffixes and differ in a few
  // bytes, so every key byte must reach the slot index: the slot is the top bits of a
  // multiplicative hash. Hits are verified byte for byte; a collision costs one table lookup.
  StringId InternCached(std::string_view s) {
    if (s.empty()) return 0;
    uint64_t key = s.size() * 0x9E3779B97F4A7C15ull;
    if (s.size() >= 8) {
      uint64_t head = 0, middle = 0, tail = 0;
      std::memcpy(&head, s.data(), 8);
      std::memcpy(&middle, s.data() + (s.size() - 8) / 2, 8);
      std::memcpy(&tail, s.data() + s.size() - 8, 8);
      key ^= head;
      key = (key ^ (key >> 29)) * 0xbf58476d1ce4e5b9ull ^ middle;
      key = (key ^ (key >> 31)) * 0x94d049bb133111ebull ^ tail;
    } else {
      for (char c : s) key = (key ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    }
    key = (key ^ (key >> 32)) * 0x9E3779B97F4A7C15ull;
    CacheEntry& e = intern_cache_[key >> (64 - kInternCacheBits)];
    if (e.id != kNone && e.text.size() == s.size() &&
        std::memcmp(e.text.data(), s.data(), s.size()) == 0) {
      return e.id;
    }
    const StringId id = trace_->Intern(s);
    e.id = id;
    e.text = trace_->Str(id);  // stable: the string table never moves its text
    return id;
  }

  ActivityKind KindOf(StringId cat, std::string_view text) {
    auto it = kind_by_cat_.find(cat);
    if (it != kind_by_cat_.end()) return it->second;
    ActivityKind k = KindFromCategory(text);
    kind_by_cat_.emplace(cat, k);
    NoteCategory(text);
    return k;
  }

  void NoteCategory(std::string_view cat) {
    if (cat.substr(0, 5) == "cuda_" || cat == "kernel" || cat == "gpu_memcpy") saw_cuda_ = true;
    if (cat.substr(0, 5) == "mtia_") saw_mtia_ = true;
    if (cat.substr(0, 4) == "xpu_") saw_xpu_ = true;
    if (cat.substr(0, 12) == "privateuse1_") saw_privateuse1_ = true;
    if (cat == "Kernel" || cat == "Runtime") saw_cuda_ = true;
  }

  void HandleComplete(const EventFields& f) {
    Slice s;
    int64_t dur = 0;
    if (!ReadTimes(f, &s.ts_ns, &dur, true)) return;
    s.dur_ns = dur;
    s.category = InternCached(f.cat);
    s.kind = KindOf(s.category, f.cat);
    s.name = InternCached(f.name);
    const bool device = IsDeviceActivity(s.kind);
    s.track = TrackFor(f, device ? TrackKind::kDeviceStream : TrackKind::kThread);
    if (device) MarkDevice(s.track);
    const ArgFields& a = f.arg;
    s.external_id = a.external_id;
    s.correlation = a.correlation;
    if (!a.input_dims.empty()) s.input_shapes = InternCached(a.input_dims);
    if (options_.keep_args && f.args.size() > 2) s.args = trace_->AddArgs(f.args);
    stage_.Add(s);
    ++stats_->slices;
  }

  void MarkDevice(uint32_t track) {
    if (track < device_marked_.size() && device_marked_[track]) return;
    if (device_marked_.size() <= track) device_marked_.resize(track + 1, false);
    device_marked_[track] = true;
    Track& t = trace_->MutableTrack(track);
    if (t.kind == TrackKind::kThread) t.kind = TrackKind::kDeviceStream;
    trace_->MutableProcess(t.process).is_device = true;
  }

  void HandleInstant(const EventFields& f) {
    Instant i;
    int64_t unused = 0;
    if (!ReadTimes(f, &i.ts_ns, &unused, false)) return;
    i.name = InternCached(f.name);
    i.category = InternCached(f.cat);
    i.track = TrackFor(f, TrackKind::kThread);
    i.scope = f.scope.empty() ? 't' : f.scope[0];
    if (options_.keep_args && f.args.size() > 2) i.args = trace_->AddArgs(f.args);
    trace_->AddInstant(i);
    ++stats_->instants;
  }

  void HandleCounter(const EventFields& f) {
    int64_t ts = 0, unused = 0;
    if (!ReadTimes(f, &ts, &unused, false)) return;
    if (f.args.size() <= 2) {
      SkipEvent("counter event without args");
      return;
    }
    od::document doc;
    od::object obj;
    if (args_parser_.iterate(f.args.data(), f.args.size(), f.args.size() + JsonStream::kPadding)
            .get(doc) ||
        doc.get_object().get(obj)) {
      SkipEvent("counter args are not an object");
      return;
    }
    const int64_t pid = f.pid_text.empty() ? f.pid : SyntheticId(f.pid_text);
    const uint32_t process = trace_->FindOrAddProcess(pid, f.pid_text);
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
      auto [it, inserted] = counter_tracks_.try_emplace((uint64_t{process} << 32) | series_id, 0);
      if (inserted) {
        const int64_t tid = kSyntheticIdBase * 2 + static_cast<int64_t>(counter_tracks_.size());
        it->second = trace_->AddThreadTrack(process, tid, series, TrackKind::kCounter);
      }
      trace_->AddCounter({ts, value, it->second});
      ++stats_->counters;
      ++kept;
    }
    if (kept == 0) SkipEvent("counter event with no numeric series");
  }

  void HandleMetadata(const EventFields& f) {
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
            has_sort = analysis::ParseInt64(v.raw_json_token(), &sort_index);
          }
        }
      }
    }
    const int64_t pid = f.pid_text.empty() ? f.pid : SyntheticId(f.pid_text);
    const uint32_t process = trace_->FindOrAddProcess(pid, f.pid_text);
    Process& p = trace_->MutableProcess(process);
    if (f.name == "process_name") {
      p.name = trace_->Intern(value_text);
    } else if (f.name == "process_labels") {
      p.labels = trace_->Intern(value_text);
    } else if (f.name == "process_sort_index") {
      if (has_sort) p.sort_index = sort_index;
    } else if (f.name == "thread_name" || f.name == "thread_sort_index") {
      const uint32_t track = TrackFor(f, TrackKind::kThread);
      Track& t = trace_->MutableTrack(track);
      if (f.name == "thread_name") {
        t.name = trace_->Intern(value_text);
      } else if (has_sort) {
        t.sort_index = sort_index;
      }
    } else {
      // Other metadata (e.g. "trace_name"-style producers' extras) carries nothing the model keeps.
    }
    ++stats_->metadata;
  }

  void HandleFlow(const EventFields& f) {
    int64_t ts = 0, unused = 0;
    if (!ReadTimes(f, &ts, &unused, false)) return;
    if (!f.has_id) {
      SkipEvent("flow event without \"id\"");
      return;
    }
    if (f.ph[0] == 't') {  // flow steps carry no binding opscope uses
      ++stats_->flow_endpoints;
      return;
    }
    const uint32_t track = TrackFor(f, TrackKind::kThread);
    trace_->AddFlowEndpoint(f.id, InternCached(f.cat), InternCached(f.name), track, ts,
                            f.ph[0] == 's', f.bp == "e");
    ++stats_->flow_endpoints;
  }

  // Duration begin/end pairs become complete slices, matched per track in stack order.
  void HandleBeginEnd(const EventFields& f) {
    int64_t ts = 0, unused = 0;
    if (!ReadTimes(f, &ts, &unused, false)) return;
    const uint32_t track = TrackFor(f, TrackKind::kThread);
    auto& stack = open_begins_[track];
    if (f.ph[0] == 'B') {
      Slice s;
      s.ts_ns = ts;
      s.track = track;
      s.category = InternCached(f.cat);
      s.kind = KindOf(s.category, f.cat);
      s.name = InternCached(f.name);
      const ArgFields& a = f.arg;
      s.external_id = a.external_id;
      s.correlation = a.correlation;
      if (options_.keep_args && f.args.size() > 2) s.args = trace_->AddArgs(f.args);
      stack.push_back(s);
      return;
    }
    if (stack.empty()) {
      SkipEvent("\"E\" event without a matching \"B\" on its thread");
      return;
    }
    Slice s = stack.back();
    stack.pop_back();
    s.dur_ns = std::max<int64_t>(0, ts - s.ts_ns);
    stage_.Add(s);
    ++stats_->slices;
  }

  void Finish() {
    for (auto& [track, stack] : open_begins_) {
      for (const Slice& s : stack) {
        Warn("\"B\" event at ts " + std::to_string(s.ts_ns) + " ns never ended; kept with dur 0",
             false);
        stage_.Add(s);
        ++stats_->slices;
      }
    }
    TraceMetadata& md = trace_->metadata();
    if (!device_type_hint_.empty()) {
      md.device_type = device_type_hint_;
    } else if (saw_mtia_) {
      md.device_type = "MTIA";
    } else if (saw_xpu_) {
      md.device_type = "XPU";
    } else if (saw_privateuse1_) {
      md.device_type = "PRIVATEUSE1";
      for (const Process& p : trace_->processes()) {
        std::string n(trace_->Str(p.name));
        std::string l(trace_->Str(p.labels));
        std::string both = n + " " + l;
        std::transform(both.begin(), both.end(), both.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (both.find("neuron") != std::string::npos) md.device_type = "NEURON";
      }
    } else if (saw_cuda_ || has_device_properties_) {
      md.device_type = "CUDA";
    }
    md.skipped_events = stats_->skipped;
    md.warnings = stats_->warnings;
    stage_.MoveTo(trace_);
    trace_->Finalize();
  }

  Trace* trace_;
  ImportStats* stats_;
  const ImportOptions& options_;
  JsonStream* stream_ = nullptr;
  analysis::SliceStage stage_;  // slices per track until Finish hands them to the trace
  uint64_t event_offset_ = 0;   // stream offset of the event being handled
  od::parser parser_;
  od::parser args_parser_;
  bool saw_events_ = false;
  bool has_device_properties_ = false;
  bool saw_cuda_ = false, saw_mtia_ = false, saw_xpu_ = false, saw_privateuse1_ = false;
  std::string device_type_hint_;
  uint64_t warning_count_ = 0;
  struct TrackCacheEntry {
    int64_t pid = 0, tid = 0;
    uint32_t track = kNone;
  };
  static constexpr int kTrackCacheBits = 6;
  std::array<TrackCacheEntry, size_t{1} << kTrackCacheBits> track_cache_{};
  std::unordered_map<std::string, int64_t> synthetic_ids_;
  std::unordered_map<StringId, ActivityKind> kind_by_cat_;
  std::unordered_map<uint64_t, uint32_t> counter_tracks_;
  std::unordered_map<uint32_t, std::vector<Slice>> open_begins_;
  std::vector<bool> device_marked_;
  struct CacheEntry {
    std::string_view text;
    StringId id = kNone;
  };
  static constexpr int kInternCacheBits = 12;
  static constexpr size_t kInternCacheSlots = size_t{1} << kInternCacheBits;
  std::vector<CacheEntry> intern_cache_ = std::vector<CacheEntry>(kInternCacheSlots);
};

// JSON bytes to expect from `stored` bytes of input (gzip'd Kineto JSON inflates ~8-12x).
uint64_t JsonBytesHint(uint64_t stored, bool gzip) { return gzip ? stored * 12 : stored; }

Status Import(ByteSource* source, Trace* out, ImportStats* stats, const ImportOptions& options,
              uint64_t json_bytes_hint, size_t buffer_bytes = size_t{128} << 10) {
  ImportStats local;
  ImportStats* s = stats ? stats : &local;
  *s = ImportStats{};
  *out = Trace();
  Importer importer(out, s, options);
  return importer.Run(source, buffer_bytes, json_bytes_hint);
}

}  // namespace

Status ImportTrace(const std::string& path, Trace* out, ImportStats* stats,
                   const ImportOptions& options) {
  std::unique_ptr<ByteSource> source;
  Status st = analysis::OpenFileSource(path, &source);
  if (!st.ok()) return st;
  std::error_code ec;
  const uint64_t stored = std::filesystem::file_size(path, ec);
  st = Import(source.get(), out, stats, options,
              ec ? 0 : JsonBytesHint(stored, analysis::IsGzipSource(source.get())));
  return std::move(st).InFile(path);
}

Status ImportTraceFromMemory(std::string_view data, Trace* out, ImportStats* stats,
                             const ImportOptions& options) {
  auto source = analysis::OpenMemorySource(data);
  // Small inputs (tests, fuzzing) get a small buffer; gzip may expand, and the buffer grows.
  const size_t buffer = std::clamp<size_t>(data.size() * 2, 4096, size_t{1} << 20);
  const bool gzip = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
                    static_cast<unsigned char>(data[1]) == 0x8b;
  return Import(source.get(), out, stats, options, JsonBytesHint(data.size(), gzip), buffer);
}

}  // namespace opscope
