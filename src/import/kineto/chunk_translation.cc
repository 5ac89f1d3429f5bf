// Events to chunk-local model records, by phase (see chunk_translation.h and event_translator.h).
#include "import/kineto/chunk_translation.h"

#include <algorithm>
#include <cstring>

#include "import/kineto/event_category.h"
#include "import/kineto/intern_cache.h"
#include "import/kineto/json_stream.h"
#include "import/kineto/number_text.h"
#include "opscope/import.h"

namespace opscope::import {
namespace {

namespace od = simdjson::ondemand;

// Event times (start and end) must lie within +-(2^62 - 1) ns, about 146 years either side of the
// trace's zero (absolute epoch timestamps reach 2116): then the difference of any two fits in
// int64, which every analysis relies on.
constexpr int64_t kMaxTimeNs = (int64_t{1} << 62) - 1;

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

// Whether PythonListText(json) == json, as in PyTorch's own traces ("[[2, 3], []]"): then the
// text is interned as it is, without building a copy per event.
bool IsPythonListText(std::string_view json) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      if (i + 1 == json.size() || json[i + 1] != ' ') return false;
      ++i;  // the one space PythonListText writes after a comma
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      return false;
    }
  }
  return true;
}

}  // namespace

void ChunkTranslation::Clear() {
  strings.clear();
  processes.clear();
  tracks.clear();
  categories.clear();
  args.clear();
  packed_args.Clear();
  slices.clear();
  instants.clear();
  counters.clear();
  flows.clear();
  metadata.clear();
  notes.clear();
  entries = slice_events = instant_events = counter_samples = flow_endpoints = metadata_events = 0;
  // The first block is kept (a chunk of the one-thread path is one batch: a fresh block each time
  // cost an allocation and its page faults per batch).
  if (text_blocks.size() > 1) text_blocks.resize(1);
  block_size = text_blocks.empty() ? 0 : first_block_size;
  block_used = 0;
}

std::string_view ChunkTranslation::Keep(std::string_view s) {
  constexpr size_t kBlock = 64u << 10;
  if (text_blocks.empty() || s.size() > block_size - block_used) {
    block_size = std::max(kBlock, s.size());
    block_used = 0;
    text_blocks.push_back(std::unique_ptr<char[]>(new char[block_size]));
    if (text_blocks.size() == 1) first_block_size = block_size;
  }
  char* const at = text_blocks.back().get() + block_used;
  if (!s.empty()) std::memcpy(at, s.data(), s.size());
  block_used += s.size();
  return std::string_view(at, s.size());
}

ChunkTranslator::ChunkTranslator(const ImportOptions& options)
    : options_(options), string_slots_(size_t{1} << kSlotBits) {}

void ChunkTranslator::Start(ChunkTranslation* out) {
  out_ = out;
  out_->Clear();
  out_->strings.push_back({});
  offset_ = 0;
  if (++generation_ == 0) {  // wrapped: clear for real
    std::fill(string_slots_.begin(), string_slots_.end(), Slot{});
    generation_ = 1;
  }
  string_ids_.clear();
  string_ids_.emplace(std::string_view(), 0);
  kind_of_.assign(1, ActivityKind::kOther);
  is_category_.assign(1, false);
  keeps_args_of_.assign(1, 0);
  text_keys_.clear();
  processes_.clear();
  tracks_.clear();
  counter_tracks_.clear();
  last_track_ = kNone;
}

StringId ChunkTranslator::Intern(std::string_view s) {
  if (s.empty()) return 0;
  Slot& e = string_slots_[InternCache::SlotOf(s, kSlotBits)];
  if (e.generation == generation_ && e.text.size() == s.size() &&
      std::memcmp(e.text.data(), s.data(), s.size()) == 0) {
    return e.id;
  }
  StringId id;
  if (auto it = string_ids_.find(s); it != string_ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<StringId>(out_->strings.size());
    const std::string_view kept = out_->Keep(s);
    out_->strings.push_back(kept);
    string_ids_.emplace(kept, id);
    kind_of_.push_back(ActivityKind::kOther);
    is_category_.push_back(false);
    keeps_args_of_.push_back(0);
  }
  e = {out_->strings[id], id, generation_};
  return id;
}

bool ChunkTranslator::KeepsArgs(ActivityKind kind, StringId name, const EventFields& f) {
  if (!options_.keep_args || f.args.size() <= 2) return false;
  if (!options_.keep_args_of) return true;
  // Low half: kinds asked about for this name in this chunk; high half: their answers.
  uint32_t& known = keeps_args_of_[name];
  const uint32_t bit = uint32_t{1} << static_cast<unsigned>(kind);
  if ((known & bit) == 0) {
    known |= bit | (options_.keep_args_of(kind, f.name) ? bit << 16 : 0);
  }
  return (known & (bit << 16)) != 0;
}

StringId ChunkTranslator::Category(std::string_view s, ActivityKind* kind) {
  const StringId id = Intern(s);
  if (!is_category_[id]) {
    is_category_[id] = true;
    kind_of_[id] = KindFromCategory(s);
    out_->categories.push_back(id);
  }
  *kind = kind_of_[id];
  return id;
}

ChunkTranslator::IdKey ChunkTranslator::KeyOf(int64_t number, std::string_view text) {
  if (text.empty()) return {number, false};
  int64_t v = 0;
  if (ParseInt64(text, &v)) return {v, false};
  // Not interned: the model keeps pid and tid text in the process and track, not the string table.
  auto it = text_keys_.find(text);
  if (it == text_keys_.end()) {
    it = text_keys_.emplace(out_->Keep(text), static_cast<int64_t>(text_keys_.size())).first;
  }
  return {it->second, true};
}

uint32_t ChunkTranslator::ProcessOf(const EventFields& f) {
  const IdKey pid = KeyOf(f.pid, f.pid_text);
  auto [it, inserted] = processes_.try_emplace(PairKey{pid, {}}, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(out_->processes.size());
    out_->processes.push_back({f.pid, f.pid_text.empty() ? std::string_view() : Kept(f.pid_text)});
  }
  return it->second;
}

uint32_t ChunkTranslator::TrackOf(const EventFields& f, TrackKind kind) {
  if (last_track_ != kNone && f.pid_text.empty() && f.tid_text.empty() && !last_track_key_.a.text &&
      !last_track_key_.b.text && last_track_key_.a.value == f.pid &&
      last_track_key_.b.value == f.tid) {
    return last_track_;
  }
  const PairKey key{KeyOf(f.pid, f.pid_text), KeyOf(f.tid, f.tid_text)};
  auto it = tracks_.find(key);
  uint32_t track;
  if (it != tracks_.end()) {
    track = it->second;
  } else {
    const uint32_t process = ProcessOf(f);
    track = static_cast<uint32_t>(out_->tracks.size());
    ChunkTranslation::TrackKey t;
    t.process = process;
    t.tid = f.tid;
    if (!f.tid_text.empty()) t.tid_text = Kept(f.tid_text);
    t.kind = kind;
    out_->tracks.push_back(t);
    tracks_.emplace(key, track);
  }
  last_track_key_ = key;
  last_track_ = track;
  return track;
}

uint32_t ChunkTranslator::CounterTrack(uint32_t process, StringId series) {
  auto [it, inserted] = counter_tracks_.try_emplace((uint64_t{process} << 32) | series, 0);
  if (inserted) {
    it->second = static_cast<uint32_t>(out_->tracks.size());
    ChunkTranslation::TrackKey t;
    t.process = process;
    t.kind = TrackKind::kCounter;
    t.series = series;
    out_->tracks.push_back(t);
  }
  return it->second;
}

uint32_t ChunkTranslator::Args(std::string_view text) {
  const auto handle = static_cast<uint32_t>(out_->args.size());
  out_->args.push_back(text);  // in the batch text, which lives until the merge
  return handle;
}

void ChunkTranslator::Note(std::string_view why, bool skipped) {
  out_->notes.push_back({out_->entries - 1, offset_, skipped, std::string(why)});
}

void ChunkTranslator::Add(const EventFields& f) {
  if (f.ph.empty()) return Note("missing \"ph\"", true);
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
      Note("unsupported phase \"" + std::string(f.ph) + "\"", true);
  }
}

bool ChunkTranslator::ReadTimes(const EventFields& f, int64_t* ts, int64_t* dur, bool need_dur) {
  if (f.ts_text.empty()) {
    Note("missing \"ts\"", true);
    return false;
  }
  if (!ParseMicrosToNanosPadded(f.ts_text, ts) || *ts < -kMaxTimeNs ||
      *ts > kMaxTimeNs) {  // the batch text is padded
    Note("\"ts\" is not a number of microseconds within +-146 years (found " +
             std::string(f.ts_text.substr(0, 40)) + ")",
         true);
    return false;
  }
  if (!need_dur) return true;
  if (f.dur_text.empty()) {
    Note("missing \"dur\" on a complete event", true);
    return false;
  }
  if (!ParseMicrosToNanosPadded(f.dur_text, dur)) {
    Note("\"dur\" is not a number of microseconds in range (found " +
             std::string(f.dur_text.substr(0, 40)) + ")",
         true);
    return false;
  }
  if (*dur < 0) {
    Note("negative dur clamped to 0", false);
    *dur = 0;
  }
  if (*dur > kMaxTimeNs - *ts) {
    Note("ts + dur is past +146 years", true);
    return false;
  }
  return true;
}

void ChunkTranslator::AddComplete(const EventFields& f) {
  Slice s;
  int64_t dur = 0;
  if (!ReadTimes(f, &s.ts_ns, &dur, true)) return;
  s.dur_ns = dur;
  s.category = Category(f.cat, &s.kind);
  s.name = Intern(f.name);
  const bool device = IsDeviceActivity(s.kind);
  s.track = TrackOf(f, device ? TrackKind::kDeviceStream : TrackKind::kThread);
  if (device) out_->tracks[s.track].device = true;
  const ArgFields& a = f.arg;
  s.external_id = a.external_id;
  s.correlation = a.correlation;
  if (!a.input_dims.empty()) {
    s.input_shapes = IsPythonListText(a.input_dims) ? Intern(a.input_dims)
                                                    : Intern(PythonListText(a.input_dims));
  }
  if (KeepsArgs(s.kind, s.name, f)) s.args = Args(f.args);
  s.lane = ChunkTranslation::kComplete;
  out_->slices.push_back(s);
  ++out_->slice_events;
}

void ChunkTranslator::AddInstant(const EventFields& f) {
  Instant i;
  int64_t unused = 0;
  if (!ReadTimes(f, &i.ts_ns, &unused, false)) return;
  i.name = Intern(f.name);
  i.category = Intern(f.cat);
  i.track = TrackOf(f, TrackKind::kThread);
  i.scope = f.scope.empty() ? 't' : f.scope[0];
  if (KeepsArgs(ActivityKind::kOther, i.name, f)) i.args = Args(f.args);
  out_->instants.push_back(i);
  ++out_->instant_events;
}

void ChunkTranslator::AddCounter(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  if (f.args.size() <= 2) return Note("counter event without args", true);
  od::document doc;
  od::object obj;
  if (args_parser_.iterate(f.args.data(), f.args.size(), f.args.size() + JsonStream::kPadding)
          .get(doc) ||
      doc.get_object().get(obj)) {
    return Note("counter args are not an object", true);
  }
  const uint32_t process = ProcessOf(f);
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
    const StringId series_id = Intern(series);
    out_->counters.push_back({ts, value, CounterTrack(process, series_id)});
    ++out_->counter_samples;
    ++kept;
  }
  if (kept == 0) Note("counter event with no numeric series", true);
}

void ChunkTranslator::AddMetadata(const EventFields& f) {
  using Update = ChunkTranslation::MetadataUpdate;
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
  const uint32_t process = ProcessOf(f);
  if (f.name == "process_name") {
    out_->metadata.push_back({Update::kProcessName, process, Intern(value_text), 0});
  } else if (f.name == "process_labels") {
    out_->metadata.push_back({Update::kProcessLabels, process, Intern(value_text), 0});
  } else if (f.name == "process_sort_index") {
    if (has_sort) out_->metadata.push_back({Update::kProcessSort, process, 0, sort_index});
  } else if (f.name == "thread_name" || f.name == "thread_sort_index") {
    const uint32_t track = TrackOf(f, TrackKind::kThread);
    if (f.name == "thread_name") {
      out_->metadata.push_back({Update::kThreadName, track, Intern(value_text), 0});
    } else if (has_sort) {
      out_->metadata.push_back({Update::kThreadSort, track, 0, sort_index});
    }
  } else {
    // Other metadata (e.g. "trace_name"-style producers' extras) carries nothing the model keeps.
  }
  ++out_->metadata_events;
}

void ChunkTranslator::AddFlow(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  if (!f.has_id) return Note("flow event without \"id\"", true);
  if (f.ph[0] == 't') {  // flow steps carry no binding opscope uses
    ++out_->flow_endpoints;
    return;
  }
  const uint32_t track = TrackOf(f, TrackKind::kThread);
  const StringId cat = Intern(f.cat);
  const StringId name = Intern(f.name);
  out_->flows.push_back({f.id, ts, cat, name, track, f.ph[0] == 's', f.bp == "e"});
  ++out_->flow_endpoints;
}

// "B" and "E" are matched per track in stack order in the merge, which sees every earlier chunk:
// here each becomes a marker in slice order.
void ChunkTranslator::AddBeginEnd(const EventFields& f) {
  int64_t ts = 0, unused = 0;
  if (!ReadTimes(f, &ts, &unused, false)) return;
  Slice s;
  s.ts_ns = ts;
  s.track = TrackOf(f, TrackKind::kThread);
  s.parent = static_cast<uint32_t>(out_->entries - 1);
  if (f.ph[0] == 'B') {
    s.category = Category(f.cat, &s.kind);
    s.name = Intern(f.name);
    const ArgFields& a = f.arg;
    s.external_id = a.external_id;
    s.correlation = a.correlation;
    if (KeepsArgs(s.kind, s.name, f)) s.args = Args(f.args);
    s.lane = ChunkTranslation::kBegin;
  } else {
    s.lane = ChunkTranslation::kEnd;
    s.external_id = static_cast<int64_t>(offset_);  // for the merge's warning
  }
  out_->slices.push_back(s);
}

}  // namespace opscope::import
