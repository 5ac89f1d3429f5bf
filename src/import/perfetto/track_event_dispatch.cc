// What each kind of TrackEvent becomes: slices, instants, counters, flows, args
// (track_event_reader.h).
#include <string>

#include "import/kineto/event_category.h"
#include "import/perfetto/track_event_reader.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pe = opscope::perfetto::event;
namespace pl = opscope::perfetto::legacy;

std::optional<ActivityKind> KindNamed(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(ActivityKind::kOther); ++k) {
    if (ActivityKindName(static_cast<ActivityKind>(k)) == name) return static_cast<ActivityKind>(k);
  }
  return std::nullopt;
}

}  // namespace

std::string TrackEventReader::Read(protozero::data_view event, uint32_t sequence_id,
                                   SequenceState* seq, std::optional<int64_t> packet_ts_ns) {
  Fields& f = fields_;
  ReadFields(event, &f);
  int64_t ts_ns = 0;
  if (std::string why = EventTime(f, sequence_id, seq, packet_ts_ns, &ts_ns); !why.empty()) {
    return why;
  }
  Slice s;
  s.ts_ns = ts_ns;
  s.kind = kDeriveKind;
  if (std::string why = NameAndCategory(f, *seq, &s); !why.empty()) return why;
  const bool legacy = f.type == pe::kTypeUnspecified;
  if (legacy && !f.has_legacy) return "it has neither a type nor a legacy phase";
  const uint32_t slot = TrackOf(f, seq, legacy, legacy ? trace_->Str(s.name) : std::string_view());
  s.track = slot;
  const std::string why = legacy ? DispatchLegacy(f, slot, seq, &s) : Dispatch(f, slot, seq, &s);
  if (!why.empty()) return why;
  AddCounters(f, slot, sequence_id, seq, ts_ns);
  AddThreadTime(f, slot, seq, ts_ns);
  return "";
}

std::string TrackEventReader::NameAndCategory(const Fields& f, const SequenceState& seq, Slice* s) {
  const std::optional<uint64_t> iid = f.name_iid ? f.name_iid : f.legacy_name_iid;
  if (f.name) {
    s->name = Name(*f.name);
  } else if (iid) {
    const StringId* name = seq.event_names.Find(*iid);
    if (name == nullptr) return "its name iid " + std::to_string(*iid) + " was not interned";
    s->name = *name;
  }
  if (f.category_iids.size() == 1 && f.categories.empty()) {
    const StringId* cat = seq.categories.Find(f.category_iids[0]);
    if (cat == nullptr) {
      return "its category iid " + std::to_string(f.category_iids[0]) + " was not interned";
    }
    s->category = *cat;
    return "";
  }
  std::string joined;  // several categories: "a,b", as Perfetto shows them
  for (uint64_t c : f.category_iids) {
    const StringId* cat = seq.categories.Find(c);
    if (cat == nullptr) return "its category iid " + std::to_string(c) + " was not interned";
    joined += (joined.empty() ? "" : ",") + std::string(trace_->Str(*cat));
  }
  for (std::string_view c : f.categories) joined += (joined.empty() ? "" : ",") + std::string(c);
  if (!joined.empty()) s->category = Name(joined);
  return "";
}

// The event's annotations as args: into the model (`text` null) or as text (an end's, merged
// later).
std::string TrackEventReader::BuildArgs(const Fields& f, const SequenceState& seq, Slice* s,
                                        std::string* text) {
  if (f.annotations.empty()) return "";
  args_.Reset(&seq);
  std::string why;
  for (const protozero::data_view& a : f.annotations) {
    if (!args_.Add(a, &why)) return why;
  }
  if (args_.kind) {
    if (auto kind = KindNamed(*args_.kind)) s->kind = *kind;
  }
  if (args_.external_id_override) {
    s->external_id = *args_.external_id_override;
  } else if (args_.external_id) {
    s->external_id = *args_.external_id;
  }
  if (!f.correlation_id && args_.correlation) s->correlation = *args_.correlation;
  if (args_.input_shapes_override) {
    s->input_shapes = trace_->Intern(*args_.input_shapes_override);
  } else if (auto dims = args_.input_dims()) {
    s->input_shapes = trace_->Intern(*dims);
  }
  if (args_.empty() || !options_.keep_args) return "";
  if (text != nullptr) {
    *text = std::string(args_.Json());
    return "";
  }
  if (options_.keep_args_of) {
    ActivityKind kind = s->kind;
    if (kind == kDeriveKind) {
      kind = KindFromCategory(trace_->Str(s->category));
      if (s->category == 0 || kind == ActivityKind::kOther) kind = ActivityKind::kUserAnnotation;
    }
    if (!options_.keep_args_of(kind, trace_->Str(s->name))) return "";
  }
  s->args = trace_->AddArgs(args_.Json());
  return "";
}

void TrackEventReader::CollectFlows(const Fields& f, const Slice& s) {
  flows_.clear();
  for (uint64_t id : f.flow_ids) flows_.push_back({id, FlowOp::kNext});
  for (uint64_t id : f.terminating_flow_ids) flows_.push_back({id, FlowOp::kTerminate});
  if (f.bind_id) {  // legacy flow v2: the slice's flow direction
    FlowOp op = FlowOp::kOut;
    if (f.flow_direction == pl::kFlowIn) op = FlowOp::kIn;
    if (f.flow_direction == pl::kFlowInOut) op = FlowOp::kNext;
    flows_.push_back({*f.bind_id, op});
  }
  (void)s;
  log_->stats().flow_endpoints += flows_.size();
}

void TrackEventReader::AddInstantOrZeroSlice(const Fields& f, Slice* s, char scope) {
  (void)f;
  if (!flows_.empty()) {  // flows join slices: an instant in a flow is a zero-length slice
    s->dur_ns = 0;
    assembler_->Complete(*s, flows_);
    return;
  }
  Instant i;
  i.ts_ns = s->ts_ns;
  i.name = s->name;
  i.category = s->category;
  i.track = s->track;
  i.args = s->args;
  i.scope = scope;
  assembler_->AddInstant(i);
  ++log_->stats().instants;
}

std::string TrackEventReader::Dispatch(const Fields& f, uint32_t slot, SequenceState* seq,
                                       Slice* s) {
  const bool dropped = range_start_ && s->ts_ns < *range_start_;
  if (f.correlation_id) s->correlation = static_cast<int64_t>(*f.correlation_id);
  switch (f.type) {
    case pe::kTypeSliceBegin:
    case pe::kTypeInstant: {
      if (std::string why = BuildArgs(f, *seq, s, nullptr); !why.empty()) return why;
      tracks_->NoteEvent(slot, trace_->Str(s->name));
      CollectFlows(f, *s);
      if (f.type == pe::kTypeSliceBegin) {
        assembler_->Begin(*s, dropped, flows_);
        return "";
      }
      if (dropped) return "";
      const TrackTable::SlotType type = tracks_->slot(slot).type;
      char scope = 't';
      if (type == TrackTable::SlotType::kProcess) scope = 'p';
      if (type != TrackTable::SlotType::kThread && tracks_->ProcessOf(slot) == kNone) scope = 'g';
      if (f.instant_scope == pl::kScopeGlobal) scope = 'g';  // a scope the event states wins
      if (f.instant_scope == pl::kScopeProcess) scope = 'p';
      if (f.instant_scope == pl::kScopeThread) scope = 't';
      AddInstantOrZeroSlice(f, s, scope);
      return "";
    }
    case pe::kTypeSliceEnd: {
      std::string args;
      if (std::string why = BuildArgs(f, *seq, s, &args); !why.empty()) return why;
      tracks_->NoteEvent(slot, "");
      CollectFlows(f, *s);
      assembler_->End(slot, s->ts_ns, std::move(args), flows_);
      return "";
    }
    case pe::kTypeCounter: {
      tracks_->NoteEvent(slot, "");
      if (tracks_->slot(slot).type != TrackTable::SlotType::kCounter) {
        return "it is a counter value on a track that is not a counter track";
      }
      if (dropped) return "";
      double value = 0;
      if (f.double_counter_value) {
        value = *f.double_counter_value;
      } else if (f.counter_value) {
        value = static_cast<double>(*f.counter_value);
      } else {
        return "it is a counter event without a value";
      }
      CounterSample(slot, seq, s->ts_ns, value);
      return "";
    }
    case pe::kTypeState:
      if (!warned_state_) {
        warned_state_ = true;
        log_->Warn("TYPE_STATE events are not modelled (opscope has no state tracks); skipped",
                   false);
      }
      ++log_->stats().skipped;
      return "";
    default:
      return "its type " + std::to_string(f.type) + " is not one Perfetto defines";
  }
}

std::string TrackEventReader::DispatchLegacy(const Fields& f, uint32_t slot, SequenceState* seq,
                                             Slice* s) {
  const bool dropped = range_start_ && s->ts_ns < *range_start_;
  if (f.correlation_id) s->correlation = static_cast<int64_t>(*f.correlation_id);
  const int32_t phase = f.phase;
  auto v1_flow = [&](FlowOp op) {
    const std::optional<uint64_t> id = f.bind_id       ? f.bind_id
                                       : f.unscoped_id ? f.unscoped_id
                                       : f.global_id   ? f.global_id
                                                       : f.local_id;
    if (!id) return;
    FlowRef ref{*id, op, /*legacy_v1=*/true, f.bind_to_enclosing, s->category, s->name};
    assembler_->AddFlowEvent(slot, s->ts_ns, ref);
    ++log_->stats().flow_endpoints;
  };
  switch (phase) {
    case 's':
      v1_flow(FlowOp::kStart);
      return "";
    case 't':
      v1_flow(FlowOp::kStep);
      return "";
    case 'f':
      v1_flow(FlowOp::kFinish);
      return "";
    case 'E':
    case 'e':
    case 'F': {
      std::string args;
      if (std::string why = BuildArgs(f, *seq, s, &args); !why.empty()) return why;
      tracks_->NoteEvent(slot, "");
      CollectFlows(f, *s);
      assembler_->End(slot, s->ts_ns, std::move(args), flows_);
      return "";
    }
    default:
      break;
  }
  const bool begin = phase == 'B' || phase == 'b' || phase == 'S';
  const bool complete = phase == 'X';
  const bool instant =
      phase == 'I' || phase == 'i' || phase == 'R' || phase == 'n' || phase == 'T' || phase == 'p';
  if (!begin && !complete && !instant) {
    const auto p = static_cast<size_t>(phase) & 127;
    if (!warned_phase_[p]) {
      warned_phase_[p] = true;
      log_->Warn("legacy events of phase '" + std::string(1, static_cast<char>(p)) +
                     "' are not modelled; skipped",
                 false);
    }
    ++log_->stats().skipped;
    return "";
  }
  if (std::string why = BuildArgs(f, *seq, s, nullptr); !why.empty()) return why;
  tracks_->NoteEvent(slot, trace_->Str(s->name));
  CollectFlows(f, *s);
  if (begin) {
    assembler_->Begin(*s, dropped, flows_);
  } else if (dropped) {
    return "";
  } else if (complete) {
    int64_t dur = 0;
    if (f.duration_us && (__builtin_mul_overflow(*f.duration_us, int64_t{1000}, &dur) || dur < 0)) {
      return "its duration_us is out of range";
    }
    s->dur_ns = dur;
    assembler_->Complete(*s, flows_);
  } else {
    char scope = 't';
    if (f.instant_scope == pl::kScopeGlobal) scope = 'g';
    if (f.instant_scope == pl::kScopeProcess) scope = 'p';
    AddInstantOrZeroSlice(f, s, scope);
  }
  return "";
}

void TrackEventReader::CounterSample(uint32_t slot, SequenceState* seq, int64_t ts_ns,
                                     double value) {
  const TrackTable::Slot& c = tracks_->slot(slot);
  value *= static_cast<double>(c.unit_multiplier);
  if (c.incremental) {
    double& running = seq->counter_values[c.uuid.value_or(slot)];
    running += value;
    value = running;
  }
  assembler_->AddCounter({ts_ns, value, slot});
  ++log_->stats().counters;
}

void TrackEventReader::AddCounters(const Fields& f, uint32_t slot, uint32_t sequence_id,
                                   SequenceState* seq, int64_t ts_ns) {
  (void)slot;
  (void)sequence_id;
  if (range_start_ && ts_ns < *range_start_) return;
  // A value on a track that is not a counter track is dropped, as a counter event there is.
  bool not_counter = false;
  auto add = [&](uint64_t uuid, double value) {
    const uint32_t counter = tracks_->ForUuid(uuid);
    tracks_->NoteEvent(counter, "");
    if (tracks_->slot(counter).type != TrackTable::SlotType::kCounter) {
      not_counter = true;
      return;
    }
    CounterSample(counter, seq, ts_ns, value);
  };
  const std::vector<uint64_t>& uuids =
      f.has_extra_uuids ? f.extra_uuids : seq->default_extra_counters;
  for (size_t i = 0; i < f.extra_values.size() && i < uuids.size(); ++i) {
    add(uuids[i], static_cast<double>(f.extra_values[i]));
  }
  const std::vector<uint64_t>& double_uuids =
      f.has_extra_double_uuids ? f.extra_double_uuids : seq->default_extra_double_counters;
  for (size_t i = 0; i < f.extra_double_values.size() && i < double_uuids.size(); ++i) {
    add(double_uuids[i], f.extra_double_values[i]);
  }
  if (f.extra_values.size() > uuids.size() || f.extra_double_values.size() > double_uuids.size()) {
    log_->Warn("an event has more extra counter values than counter tracks; the rest are dropped",
               false);
  }
  if (not_counter) {
    log_->Warn(
        "an event has an extra counter value on a track that is not a counter track; "
        "it is dropped",
        false);
  }
}

void TrackEventReader::AddThreadTime(const Fields& f, uint32_t slot, SequenceState* seq,
                                     int64_t ts_ns) {
  const bool time = f.thread_time_absolute_us || f.thread_time_delta_us;
  const bool instructions = f.instructions_absolute || f.instructions_delta;
  if (!time && !instructions) return;
  if (range_start_ && ts_ns < *range_start_) return;
  const uint32_t thread = tracks_->ThreadOf(slot);
  if (thread == kNone) return;  // thread time of an event on no thread: nowhere to put it
  if (time) {
    int64_t us = f.thread_time_absolute_us.value_or(0);
    if (!f.thread_time_absolute_us) {
      us = seq->reference_thread_time_us += *f.thread_time_delta_us;
    }
    const uint32_t counter = tracks_->ForThreadCounter(thread, 1);
    tracks_->NoteEvent(counter, "");
    CounterSample(counter, seq, ts_ns, static_cast<double>(us) * 1000.0);
  }
  if (instructions) {
    int64_t n = f.instructions_absolute.value_or(0);
    if (!f.instructions_absolute) n = seq->reference_instructions += *f.instructions_delta;
    const uint32_t counter = tracks_->ForThreadCounter(thread, 2);
    tracks_->NoteEvent(counter, "");
    CounterSample(counter, seq, ts_ns, static_cast<double>(n));
  }
}

}  // namespace opscope::import::perfetto
