// TrackEvent fields to the event assembler (track_event_reader.h).
#include "import/perfetto/track_event_reader.h"

#include <simdjson.h>

#include "base/json_escape.h"
#include "import/kineto/event_category.h"
#include "import/perfetto/proto_read.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pe = opscope::perfetto::event;
namespace pl = opscope::perfetto::legacy;
using protozero::pbf_reader;
using protozero::pbf_wire_type;

bool UsToNs(int64_t us, int64_t* ns) { return !__builtin_mul_overflow(us, int64_t{1000}, ns); }

void ReadLegacy(protozero::data_view view, TrackEventReader::Fields* f) {
  f->has_legacy = true;
  pbf_reader r(view);
  while (r.next()) {
    const bool bytes = r.wire_type() == pbf_wire_type::length_delimited;
    switch (r.tag()) {
      case pl::kNameIid:
        f->legacy_name_iid = Uvarint(r);
        break;
      case pl::kPhase:
        f->phase = static_cast<int32_t>(Varint(r).value_or(0));
        break;
      case pl::kDurationUs:
        f->duration_us = Varint(r);
        break;
      case pl::kUnscopedId:
        f->unscoped_id = Uvarint(r);
        break;
      case pl::kLocalId:
        f->local_id = Uvarint(r);
        break;
      case pl::kGlobalId:
        f->global_id = Uvarint(r);
        break;
      case pl::kBindId:
        f->bind_id = Uvarint(r);
        break;
      case pl::kBindToEnclosing:
        f->bind_to_enclosing = Uvarint(r).value_or(0) != 0;
        break;
      case pl::kFlowDirection:
        f->flow_direction = static_cast<uint32_t>(Uvarint(r).value_or(0));
        break;
      case pl::kInstantEventScope:
        f->instant_scope = static_cast<uint32_t>(Uvarint(r).value_or(0));
        break;
      case pl::kPidOverride: {
        if (auto v = Varint(r)) f->pid_override = static_cast<int32_t>(*v);
        break;
      }
      case pl::kTidOverride: {
        if (auto v = Varint(r)) f->tid_override = static_cast<int32_t>(*v);
        break;
      }
      case pl::kIdScope:
        if (bytes) {
          f->id_scope = AsText(r.get_view());
        } else {
          r.skip();
        }
        break;
      default:
        r.skip();
    }
  }
}

// A TrackEvent field that holds one value: its type, track, name, counter value, correlation
// id, times, or its legacy event. False (nothing read) for other fields.
bool ReadSingleField(pbf_reader& r, uint32_t tag, TrackEventReader::Fields* f) {
  const bool bytes = r.wire_type() == pbf_wire_type::length_delimited;
  switch (tag) {
    case pe::kType:
      f->type = static_cast<uint32_t>(Uvarint(r).value_or(0));
      return true;
    case pe::kTrackUuid:
      f->track_uuid = Uvarint(r);
      return true;
    case pe::kNameIid:
      f->name_iid = Uvarint(r);
      return true;
    case pe::kName:
      if (!bytes) return false;
      f->name = AsText(r.get_view());
      return true;
    case pe::kCounterValue:
      f->counter_value = Varint(r);
      return true;
    case pe::kDoubleCounterValue:
      if (r.wire_type() != pbf_wire_type::fixed64) return false;
      f->double_counter_value = r.get_double();
      return true;
    case pe::kCorrelationId:
      f->correlation_id = Uvarint(r);
      return true;
    case pe::kTimestampDeltaUs:
      f->ts_delta_us = Varint(r);
      return true;
    case pe::kTimestampAbsoluteUs:
      f->ts_absolute_us = Varint(r);
      return true;
    case pe::kThreadTimeDeltaUs:
      f->thread_time_delta_us = Varint(r);
      return true;
    case pe::kThreadTimeAbsoluteUs:
      f->thread_time_absolute_us = Varint(r);
      return true;
    case pe::kThreadInstructionCountDelta:
      f->instructions_delta = Varint(r);
      return true;
    case pe::kThreadInstructionCountAbsolute:
      f->instructions_absolute = Varint(r);
      return true;
    case pe::kLegacyEvent:
      if (!bytes) return false;
      ReadLegacy(r.get_view(), f);
      return true;
    default:
      return false;
  }
}

// A repeated TrackEvent field (categories, extra counters, flows, debug annotations): its
// value(s) appended. False (nothing read) for other fields.
bool ReadRepeatedField(pbf_reader& r, uint32_t tag, TrackEventReader::Fields* f) {
  const bool bytes = r.wire_type() == pbf_wire_type::length_delimited;
  switch (tag) {
    case pe::kCategoryIids:
      ReadUints(r, &f->category_iids);
      return true;
    case pe::kCategories:
      if (!bytes) return false;
      f->categories.push_back(AsText(r.get_view()));
      return true;
    case pe::kExtraCounterTrackUuids:
      f->has_extra_uuids = true;
      ReadUints(r, &f->extra_uuids);
      return true;
    case pe::kExtraCounterValues:
      ReadInts(r, &f->extra_values);
      return true;
    case pe::kExtraDoubleCounterTrackUuids:
      f->has_extra_double_uuids = true;
      ReadUints(r, &f->extra_double_uuids);
      return true;
    case pe::kExtraDoubleCounterValues:
      ReadDoubles(r, &f->extra_double_values);
      return true;
    case pe::kFlowIds:
      ReadFixed(r, &f->flow_ids);
      return true;
    case pe::kFlowIdsOld:
      ReadUints(r, &f->flow_ids);
      return true;
    case pe::kTerminatingFlowIds:
      ReadFixed(r, &f->terminating_flow_ids);
      return true;
    case pe::kTerminatingFlowIdsOld:
      ReadUints(r, &f->terminating_flow_ids);
      return true;
    case pe::kDebugAnnotations:
      if (!bytes) return false;
      f->annotations.push_back(r.get_view());
      return true;
    default:
      return false;
  }
}

// The fields nearly every event carries (its type, track, name and category iids, debug
// annotations, flows and correlation id), read by RawFields. False, with `f` partly filled, at
// the first other field.
bool ReadCommonFields(protozero::data_view event, TrackEventReader::Fields* f) {
  constexpr auto kVarint = pbf_wire_type::varint;
  constexpr auto kBytes = pbf_wire_type::length_delimited;
  constexpr auto kFixed64 = pbf_wire_type::fixed64;
  RawFields r(event);
  while (!r.done()) {
    switch (r.Key()) {
      case FieldKey(pe::kType, kVarint):
        f->type = static_cast<uint32_t>(r.Varint());
        break;
      case FieldKey(pe::kTrackUuid, kVarint):
        f->track_uuid = r.Varint();
        break;
      case FieldKey(pe::kNameIid, kVarint):
        f->name_iid = r.Varint();
        break;
      case FieldKey(pe::kCategoryIids, kVarint):
        f->category_iids.push_back(r.Varint());
        break;
      case FieldKey(pe::kCorrelationId, kVarint):
        f->correlation_id = r.Varint();
        break;
      case FieldKey(pe::kDebugAnnotations, kBytes): {
        protozero::data_view v;
        if (!r.Bytes(&v)) return false;
        f->annotations.push_back(v);
        break;
      }
      case FieldKey(pe::kFlowIds, kFixed64): {
        uint64_t v = 0;
        if (!r.Fixed64(&v)) return false;
        f->flow_ids.push_back(v);
        break;
      }
      case FieldKey(pe::kTerminatingFlowIds, kFixed64): {
        uint64_t v = 0;
        if (!r.Fixed64(&v)) return false;
        f->terminating_flow_ids.push_back(v);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

void TrackEventReader::Fields::Clear() {
  // Members one by one, so the vectors keep their capacity from event to event. First those
  // ReadCommonFields sets; the others only after the general reader.
  type = 0;
  track_uuid.reset();
  name_iid.reset();
  category_iids.clear();
  correlation_id.reset();
  annotations.clear();
  flow_ids.clear();
  terminating_flow_ids.clear();
  if (!rare) return;
  rare = false;
  name.reset();
  categories.clear();
  counter_value.reset();
  double_counter_value.reset();
  has_extra_uuids = has_extra_double_uuids = false;
  extra_uuids.clear();
  extra_double_uuids.clear();
  extra_values.clear();
  extra_double_values.clear();
  ts_delta_us.reset();
  ts_absolute_us.reset();
  thread_time_delta_us.reset();
  thread_time_absolute_us.reset();
  instructions_delta.reset();
  instructions_absolute.reset();
  has_legacy = false;
  legacy_name_iid.reset();
  phase = 0;
  duration_us.reset();
  unscoped_id.reset();
  local_id.reset();
  global_id.reset();
  bind_id.reset();
  id_scope = {};
  bind_to_enclosing = false;
  flow_direction = 0;
  instant_scope = 0;
  pid_override.reset();
  tid_override.reset();
}

TrackEventReader::TrackEventReader(Trace* trace, TrackTable* tracks, EventAssembler* assembler,
                                   ClockConverter* clocks, ImportLog* log,
                                   const ImportOptions& options)
    : trace_(trace),
      tracks_(tracks),
      assembler_(assembler),
      clocks_(clocks),
      log_(log),
      options_(options),
      args_(options.max_depth) {}

StringId TrackEventReader::Name(std::string_view bytes) {
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) return trace_->Intern(bytes);
  return trace_->Intern(internal::ValidUtf8(bytes));
}

void TrackEventReader::ReadFields(protozero::data_view event, Fields* f) {
  f->Clear();
  if (ReadCommonFields(event, f)) return;
  f->Clear();  // another field: the general reader takes the event from its start
  f->rare = true;
  pbf_reader r(event);
  while (r.next()) {
    const uint32_t tag = r.tag();  // before any get_*: protozero's debug builds reset it there
    if (!ReadSingleField(r, tag, f) && !ReadRepeatedField(r, tag, f)) r.skip();
  }
}

std::string TrackEventReader::EventTime(const Fields& f, uint32_t sequence_id, SequenceState* seq,
                                        std::optional<int64_t> packet_ts, int64_t* ts_ns) {
  namespace pc = opscope::perfetto::clock;
  // The legacy microsecond fields are on CLOCK_MONOTONIC, as Chrome wrote them.
  int64_t us = 0, ns = 0;
  if (f.ts_absolute_us) {
    us = *f.ts_absolute_us;
  } else if (f.ts_delta_us) {
    if (__builtin_add_overflow(seq->reference_ts_us, *f.ts_delta_us, &us)) {
      return "its timestamp_delta_us overflows";
    }
    seq->reference_ts_us = us;
  } else if (packet_ts) {
    *ts_ns = *packet_ts;
    return "";
  } else {
    return "it has no valid timestamp";
  }
  if (!UsToNs(us, &ns) || !clocks_->NsToPrimary(sequence_id, pc::kMonotonic, ns, ts_ns)) {
    return "its timestamp (" + std::to_string(us) + " us) is out of range";
  }
  return "";
}

uint32_t TrackEventReader::TrackOf(const Fields& f, SequenceState* seq, bool legacy,
                                   std::string_view name) {
  if (!legacy && !f.pid_override && !f.tid_override) {  // the common case first
    if (f.track_uuid) return tracks_->ForUuid(*f.track_uuid);
    if (seq->has_default_track) {
      if (seq->default_track_slot == kNone) {
        seq->default_track_slot = tracks_->ForUuid(seq->default_track_uuid);
      }
      return seq->default_track_slot;
    }
    if (seq->has_thread) return tracks_->ForThread(seq->pid, seq->tid);
    return tracks_->ForUuid(0);
  }
  // The legacy thread: the sequence's ThreadDescriptor, else the thread of its default track.
  std::optional<int32_t> pid;
  uint32_t thread = kNone;
  if (seq->has_thread) {
    pid = seq->pid;
  } else if (seq->has_default_track) {
    const uint32_t d = tracks_->ForUuid(seq->default_track_uuid);
    thread = tracks_->ThreadOf(d);
    pid = tracks_->PidOf(d);
  }
  if (f.pid_override) pid = f.pid_override;
  if (f.tid_override) return tracks_->ForThread(pid.value_or(0), *f.tid_override);
  if (f.pid_override) return tracks_->ForProcess(*f.pid_override);
  if (f.track_uuid && *f.track_uuid != 0) return tracks_->ForUuid(*f.track_uuid);
  switch (f.phase) {
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'p':
    case 'F': {
      const std::optional<uint64_t> id = f.global_id  ? f.global_id
                                         : f.local_id ? f.local_id
                                                      : f.unscoped_id;
      if (!id) break;
      return tracks_->ForAsync(!f.global_id, pid.value_or(0), *id, std::string(f.id_scope),
                               std::string(name));
    }
    case 'I':
    case 'i':
    case 'R':
      if (f.instant_scope == pl::kScopeGlobal) return tracks_->ForGlobalLegacy();
      if (f.instant_scope == pl::kScopeProcess && pid) return tracks_->ForProcess(*pid);
      break;
    default:
      break;
  }
  if (seq->has_thread) return tracks_->ForThread(seq->pid, seq->tid);
  if (thread != kNone) return thread;
  return tracks_->ForUuid(0);
}

}  // namespace opscope::import::perfetto
