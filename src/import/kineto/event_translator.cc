// Chunk-local records merged into the trace model in stream order (see event_translator.h).
#include "import/kineto/event_translator.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "import/xplane/xprof_trace.h"

namespace opscope::import {

void EventTranslator::Flush() {
  if (pending_.entries == 0) return;
  Merge(pending_);
  own_.Start(&pending_);
}

void EventTranslator::Merge(ChunkTranslation& chunk) {
  const auto start = std::chrono::steady_clock::now();
  MergeRecords(chunk);
  stats_.merge_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void EventTranslator::MergeRecords(ChunkTranslation& chunk) {
  MapIds(chunk);
  size_t next_note = 0;
  MergeSlices(chunk, &next_note);
  for (Instant i : chunk.instants) {
    i.name = string_map_[i.name];
    i.category = string_map_[i.category];
    i.track = track_map_[i.track];
    if (i.args != kNone) i.args = args_map_[i.args];
    trace_->AddInstant(i);
  }
  for (CounterSample c : chunk.counters) {
    c.track = track_map_[c.track];
    trace_->AddCounter(c);
  }
  for (const ChunkTranslation::FlowEndpoint& e : chunk.flows) {
    trace_->AddFlowEndpoint(e.id, string_map_[e.category], string_map_[e.name], track_map_[e.track],
                            e.ts_ns, e.is_start, e.binds_enclosing);
  }
  using Update = ChunkTranslation::MetadataUpdate;
  for (const Update& u : chunk.metadata) {
    switch (u.field) {
      case Update::kProcessName:
        trace_->MutableProcess(process_map_[u.target]).name = string_map_[u.value];
        break;
      case Update::kProcessLabels:
        trace_->MutableProcess(process_map_[u.target]).labels = string_map_[u.value];
        break;
      case Update::kProcessSort:
        trace_->MutableProcess(process_map_[u.target]).sort_index = u.sort_index;
        break;
      case Update::kThreadName:
        trace_->MutableTrack(track_map_[u.target]).name = string_map_[u.value];
        break;
      case Update::kThreadSort:
        trace_->MutableTrack(track_map_[u.target]).sort_index = u.sort_index;
        break;
    }
  }
  ReplayNotes(chunk, chunk.entries, &next_note);
  stats_.events += chunk.entries;
  stats_.instants += chunk.instant_events;
  stats_.counters += chunk.counter_samples;
  stats_.flow_endpoints += chunk.flow_endpoints;
  stats_.metadata += chunk.metadata_events;
}

void EventTranslator::MapIds(ChunkTranslation& chunk) {
  string_map_.resize(chunk.strings.size());
  for (size_t i = 0; i < chunk.strings.size(); ++i) {
    string_map_[i] = strings_.Intern(chunk.strings[i]);
  }
  for (StringId local : chunk.categories) {
    const std::string_view text = chunk.strings[local];
    if (kind_by_cat_.emplace(string_map_[local], KindFromCategory(text)).second) {
      device_family_.NoteCategory(text);
    }
  }
  process_map_.resize(chunk.processes.size());
  EventFields f;
  for (size_t i = 0; i < chunk.processes.size(); ++i) {
    f.pid = chunk.processes[i].pid;
    f.pid_text = chunk.processes[i].pid_text;
    process_map_[i] = tracks_.ProcessOf(f);
  }
  track_map_.resize(chunk.tracks.size());
  for (size_t i = 0; i < chunk.tracks.size(); ++i) {
    const ChunkTranslation::TrackKey& t = chunk.tracks[i];
    if (t.series != kNone) {
      track_map_[i] = tracks_.CounterTrack(process_map_[t.process], string_map_[t.series],
                                           chunk.strings[t.series]);
    } else {
      f.pid = chunk.processes[t.process].pid;
      f.pid_text = chunk.processes[t.process].pid_text;
      f.tid = t.tid;
      f.tid_text = t.tid_text;
      track_map_[i] = tracks_.TrackOf(f, t.kind);
    }
    if (t.device) tracks_.MarkDevice(track_map_[i]);
  }
  args_map_.resize(chunk.args.size());
  if (!chunk.packed_args.offsets.empty()) {
    // Packed on the parse thread: handles are consecutive from the first.
    const uint32_t first = trace_->AddPackedArgs(&chunk.packed_args);
    for (size_t i = 0; i < chunk.args.size(); ++i) {
      args_map_[i] = first + static_cast<uint32_t>(i);
    }
    return;
  }
  for (size_t i = 0; i < chunk.args.size(); ++i) args_map_[i] = trace_->AddArgs(chunk.args[i]);
}

void EventTranslator::ReplayNotes(const ChunkTranslation& chunk, uint64_t entry, size_t* next) {
  const uint64_t base = stats_.events;
  for (; *next < chunk.notes.size() && chunk.notes[*next].entry < entry; ++*next) {
    const ChunkTranslation::Note& n = chunk.notes[*next];
    log_->NoteEvent(base + n.entry, n.offset, n.why, n.skipped);
  }
}

void EventTranslator::MergeSlices(const ChunkTranslation& chunk, size_t* next_note) {
  for (Slice s : chunk.slices) {
    s.name = string_map_[s.name];
    s.category = string_map_[s.category];
    s.input_shapes = string_map_[s.input_shapes];
    s.track = track_map_[s.track];
    if (s.args != kNone) s.args = args_map_[s.args];
    if (s.lane == ChunkTranslation::kComplete) {
      stage_.Add(s);
      ++stats_.slices;
      continue;
    }
    ReplayNotes(chunk, s.parent, next_note);
    MatchBeginEnd(s);
  }
}

void EventTranslator::MatchBeginEnd(Slice s) {
  auto& stack = open_begins_[s.track];
  const uint64_t entry = s.parent, offset = static_cast<uint64_t>(s.external_id);
  const bool begin = s.lane == ChunkTranslation::kBegin;
  s.lane = 0;
  s.parent = kNone;
  if (begin) {
    stack.push_back(s);
    return;
  }
  if (stack.empty()) {
    log_->NoteEvent(stats_.events + entry, offset,
                    "\"E\" event without a matching \"B\" on its thread", true);
    return;
  }
  const int64_t end_ns = s.ts_ns;
  Slice b = stack.back();
  stack.pop_back();
  b.dur_ns = std::max<int64_t>(0, end_ns - b.ts_ns);
  stage_.Add(b);
  ++stats_.slices;
}

void EventTranslator::SetSchemaVersion(int64_t version) {
  trace_->metadata().schema_version = version;
}

void EventTranslator::SetBaseTime(int64_t epoch_ns) { trace_->metadata().base_time_ns = epoch_ns; }

void EventTranslator::SetTraceName(std::string name) {
  trace_->metadata().trace_name = std::move(name);
}

void EventTranslator::AddDropped(std::string reason, uint64_t count) {
  trace_->metadata().dropped.emplace_back(std::move(reason), count);
}

void EventTranslator::AddTopLevelValue(std::string key, std::string raw_json) {
  if (key == "deviceProperties") {
    device_family_.SetHasDeviceProperties(raw_json.find('{') != std::string::npos);
  }
  trace_->metadata().extra.emplace_back(std::move(key), std::move(raw_json));
}

void EventTranslator::Finish(int threads) {
  Flush();
  const auto start = std::chrono::steady_clock::now();
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
  // XProf's trace viewer JSON names no categories: its processes and threads say what each
  // event is (xprof_trace.h).
  if (LooksLikeXprofTrace(*trace_)) ApplyXprofConventions(trace_);
  trace_->Finalize(threads);
  stats_.finish_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace opscope::import
