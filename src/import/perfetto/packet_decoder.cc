// TracePacket fields to the reader's state and events (packet_decoder.h).
#include "import/perfetto/packet_decoder.h"

#include <simdjson.h>

#include "base/json_escape.h"
#include "base/saturating.h"
#include "import/perfetto/debug_annotations.h"
#include "import/perfetto/proto_read.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pp = opscope::perfetto::packet;
namespace pt = opscope::perfetto::track;
using protozero::data_view;
using protozero::pbf_reader;
using protozero::pbf_wire_type;

// Entries of an interned table: (iid, text) pairs, field 1 and 2 of each entry.
template <typename Fn>
void ForEachInterned(data_view entry, Fn fn) {
  pbf_reader e(entry);
  uint64_t iid = 0;
  std::string_view text;
  while (e.next()) {
    if (e.tag() == 1 && IsVarint(e)) {
      iid = e.get_uint64();
    } else if (e.tag() == 2 && IsBytes(e)) {
      text = AsText(e.get_view());
    } else {
      e.skip();
    }
  }
  fn(iid, text);
}

// The fields of a packet that matter here. The message fields are views whose bit in `present`
// says they were read: a packet is decoded per event, so nothing here is zeroed that need not be.
struct PacketFields {
  enum Field : uint32_t {
    kInterned = 1u << 0,
    kDefaults = 1u << 1,
    kTrackEvent = 1u << 2,
    kTrackDescriptor = 1u << 3,
    kClockSnapshot = 1u << 4,
    kThreadDescriptor = 1u << 5,
    kChromeEvents = 1u << 6,
    kRangeOfInterest = 1u << 7,
    kStreamingProfile = 1u << 8,
    kTimestamp = 1u << 9,
    kClockId = 1u << 10,
  };
  uint32_t present = 0;
  uint32_t sequence_id = 0;
  uint32_t flags = 0;
  uint32_t clock_id;   // with kClockId
  uint64_t timestamp;  // with kTimestamp
  bool cleared = false;
  bool previous_dropped = false;
  data_view interned, defaults, track_event, track_descriptor, clock_snapshot, thread_descriptor,
      chrome_events, range_of_interest, streaming_profile;
  bool has(Field f) const { return (present & f) != 0; }
  void Set(Field f, data_view* field, data_view v) {
    present |= f;
    *field = v;
  }
};

// The fields of a packet of track events (timestamp, sequence id and flags, the event, interned
// data), read by RawFields. False, with `p` partly filled, at the first other field.
bool ReadEventPacketFields(data_view packet, PacketFields* p) {
  using F = PacketFields;
  constexpr auto kVarint = pbf_wire_type::varint;
  constexpr auto kBytes = pbf_wire_type::length_delimited;
  RawFields r(packet);
  while (!r.done()) {
    switch (r.Key()) {
      case FieldKey(pp::kTimestamp, kVarint):
        p->timestamp = r.Varint();
        p->present |= F::kTimestamp;
        break;
      case FieldKey(pp::kTrustedPacketSequenceId, kVarint):
        p->sequence_id = static_cast<uint32_t>(r.Varint());
        break;
      case FieldKey(pp::kSequenceFlags, kVarint):
        p->flags = static_cast<uint32_t>(r.Varint());
        break;
      case FieldKey(pp::kTrackEvent, kBytes):
        if (!r.Bytes(&p->track_event)) return false;
        p->present |= F::kTrackEvent;
        break;
      case FieldKey(pp::kInternedData, kBytes):
        if (!r.Bytes(&p->interned)) return false;
        p->present |= F::kInterned;
        break;
      default:
        return false;
    }
  }
  return true;
}

std::optional<PacketDecoder::Compressed> ReadPacketFields(data_view packet, PacketFields* p) {
  using F = PacketFields;
  if (ReadEventPacketFields(packet, p)) return std::nullopt;
  *p = PacketFields();  // another field: the general reader takes the packet from its start
  pbf_reader r(packet);
  while (r.next()) {
    const uint32_t tag = r.tag();
    if (IsVarint(r)) {
      if (tag == pp::kTimestamp) {
        p->timestamp = r.get_uint64();
        p->present |= F::kTimestamp;
      } else if (tag == pp::kTimestampClockId) {
        p->clock_id = r.get_uint32();
        p->present |= F::kClockId;
      } else if (tag == pp::kTrustedPacketSequenceId) {
        p->sequence_id = r.get_uint32();
      } else if (tag == pp::kSequenceFlags) {
        p->flags = r.get_uint32();
      } else if (tag == pp::kIncrementalStateCleared) {
        p->cleared = r.get_bool();
      } else if (tag == pp::kPreviousPacketDropped) {
        p->previous_dropped = r.get_uint32() != 0;
      } else {
        r.skip();
      }
      continue;
    }
    if (!IsBytes(r)) {
      r.skip();
      continue;
    }
    switch (tag) {
      case pp::kCompressedPackets:
        return PacketDecoder::Compressed{r.get_view(), false};
      case pp::kZstdCompressedPackets:
        return PacketDecoder::Compressed{r.get_view(), true};
      case pp::kInternedData:
        p->Set(F::kInterned, &p->interned, r.get_view());
        break;
      case pp::kTracePacketDefaults:
        p->Set(F::kDefaults, &p->defaults, r.get_view());
        break;
      case pp::kTrackEvent:
        p->Set(F::kTrackEvent, &p->track_event, r.get_view());
        break;
      case pp::kTrackDescriptor:
        p->Set(F::kTrackDescriptor, &p->track_descriptor, r.get_view());
        break;
      case pp::kClockSnapshot:
        p->Set(F::kClockSnapshot, &p->clock_snapshot, r.get_view());
        break;
      case pp::kThreadDescriptor:
        p->Set(F::kThreadDescriptor, &p->thread_descriptor, r.get_view());
        break;
      case pp::kChromeEvents:
        p->Set(F::kChromeEvents, &p->chrome_events, r.get_view());
        break;
      case pp::kTrackEventRangeOfInterest:
        p->Set(F::kRangeOfInterest, &p->range_of_interest, r.get_view());
        break;
      case pp::kStreamingProfilePacket:
        p->Set(F::kStreamingProfile, &p->streaming_profile, r.get_view());
        break;
      default:
        r.skip();
    }
  }
  return std::nullopt;
}

}  // namespace

PacketDecoder::PacketDecoder(Trace* trace, ImportLog* log, const ImportOptions& options)
    : trace_(trace),
      log_(log),
      assembler_(trace, &tracks_, log),
      events_(trace, &tracks_, &assembler_, &clocks_, log, options) {}

StringId PacketDecoder::Text(std::string_view bytes) {
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) return trace_->Intern(bytes);
  return trace_->Intern(internal::ValidUtf8(bytes));
}

std::string PacketDecoder::Decode(data_view packet, std::optional<Compressed>* compressed) {
  using F = PacketFields;
  PacketFields p;
  *compressed = ReadPacketFields(packet, &p);
  if (compressed->has_value()) return "";
  if (last_sequence_ == nullptr || p.sequence_id != last_sequence_id_) {
    last_sequence_ = &sequences_[p.sequence_id];  // stable: unordered_map nodes do not move
    last_sequence_id_ = p.sequence_id;
  }
  SequenceState& seq = *last_sequence_;
  if (p.previous_dropped) seq.valid = false;
  if (p.cleared || (p.flags & pp::kSeqIncrementalStateCleared) != 0) seq.Clear();
  if ((p.flags & pp::kSeqNeedsIncrementalState) != 0 && !seq.valid) {
    return "it needs its sequence's incremental state, which was lost or never sent";
  }
  std::string why;
  // Anything but a timestamp and an event is rare: one test for all of it.
  constexpr uint32_t kState = F::kClockSnapshot | F::kInterned | F::kDefaults |
                              F::kThreadDescriptor | F::kChromeEvents | F::kStreamingProfile |
                              F::kTrackDescriptor;
  if ((p.present & kState) != 0) {
    if (p.has(F::kClockSnapshot)) OnClockSnapshot(p.clock_snapshot, p.sequence_id);
    if (p.has(F::kInterned)) OnInternedData(p.interned, &seq);
    if (p.has(F::kDefaults)) OnDefaults(p.defaults, &seq);
    if (p.has(F::kThreadDescriptor)) OnThreadDescriptor(p.thread_descriptor, &seq);
    if (p.has(F::kChromeEvents)) OnChromeEvents(p.chrome_events);
    if (p.has(F::kStreamingProfile)) OnStreamingProfile(p.streaming_profile, &seq);
    if (p.has(F::kTrackDescriptor)) why = OnTrackDescriptor(p.track_descriptor);
  }
  const uint32_t clock = p.has(F::kClockId)
                             ? p.clock_id
                             : (seq.default_clock_id != 0 ? seq.default_clock_id
                                                          : opscope::perfetto::clock::kBoottime);
  std::optional<int64_t> ts;
  if (p.has(F::kTimestamp)) {
    int64_t v = 0;
    if (clocks_.ToPrimary(p.sequence_id, clock, p.timestamp, &v)) ts = v;
  }
  if (p.has(F::kRangeOfInterest)) {
    pbf_reader r(p.range_of_interest);
    int64_t start_ns = 0, start = 0;
    while (r.next()) {
      if (r.tag() == 1 && IsVarint(r) && !__builtin_mul_overflow(r.get_int64(), 1000, &start_ns) &&
          clocks_.NsToPrimary(p.sequence_id, clock, start_ns, &start)) {
        events_.set_range_start(start);
      } else {
        r.skip();
      }
    }
  }
  if (p.has(F::kTrackEvent)) {
    events_seen_ = true;
    why = events_.Read(p.track_event, p.sequence_id, &seq, ts);
  }
  return why;
}

void PacketDecoder::OnInternedData(data_view data, SequenceState* seq) {
  namespace pi = opscope::perfetto::interned;
  pbf_reader r(data);
  while (r.next()) {
    if (!IsBytes(r)) {
      r.skip();
      continue;
    }
    const uint32_t tag = r.tag();  // before get_view(): protozero's debug builds reset it there
    const data_view entry = r.get_view();
    switch (tag) {
      case pi::kEventNames:
        ForEachInterned(
            entry, [&](uint64_t iid, std::string_view s) { seq->event_names.Set(iid, Text(s)); });
        break;
      case pi::kEventCategories:
        ForEachInterned(
            entry, [&](uint64_t iid, std::string_view s) { seq->categories.Set(iid, Text(s)); });
        break;
      case pi::kDebugAnnotationNames:
        ForEachInterned(entry, [&](uint64_t iid, std::string_view s) {
          AnnotationName name;
          name.member = ", ";
          internal::AppendJsonString(name.member, s);
          name.member += ": ";
          name.role = RoleOfArgName(s);
          seq->annotation_names.Set(iid, std::move(name));
        });
        break;
      case pi::kDebugAnnotationStringValues:
        ForEachInterned(entry, [&](uint64_t iid, std::string_view s) {
          if (blob_ && iid >= opscope::perfetto::kJsonStringIidBase) {  // opscope's JSON values
            const std::string_view json = CheckedJsonValue(s);
            seq->annotation_json.Set(iid - opscope::perfetto::kJsonStringIidBase,
                                     json.empty() ? internal::JsonString(s) : std::string(json));
          } else {
            seq->annotation_strings.Set(iid, internal::JsonString(s));
          }
        });
        break;
      default:
        break;
    }
  }
}

void PacketDecoder::OnDefaults(data_view data, SequenceState* seq) {
  namespace pd = opscope::perfetto::defaults;
  seq->default_clock_id = 0;
  seq->has_default_track = false;
  seq->default_track_slot = kNone;
  seq->default_extra_counters.clear();
  seq->default_extra_double_counters.clear();
  pbf_reader r(data);
  while (r.next()) {
    if (r.tag() == pd::kTimestampClockId && IsVarint(r)) {
      seq->default_clock_id = r.get_uint32();
    } else if (r.tag() == pd::kTrackEventDefaults && IsBytes(r)) {
      pbf_reader d(r.get_view());
      while (d.next()) {
        if (d.tag() == pd::kTrackUuid && IsVarint(d)) {
          seq->has_default_track = true;
          seq->default_track_uuid = d.get_uint64();
        } else if (d.tag() == pd::kExtraCounterTrackUuids) {
          ReadUints(d, &seq->default_extra_counters);
        } else if (d.tag() == pd::kExtraDoubleCounterTrackUuids) {
          ReadUints(d, &seq->default_extra_double_counters);
        } else {
          d.skip();
        }
      }
    } else {
      r.skip();
    }
  }
}

// CPU samples are not modelled, but their timestamp deltas advance the sequence's reference time
// that TrackEvent's timestamp_delta_us adds to.
void PacketDecoder::OnStreamingProfile(data_view data, SequenceState* seq) {
  pbf_reader r(data);
  std::vector<int64_t> deltas;
  while (r.next()) {
    if (r.tag() == 2) {
      ReadInts(r, &deltas);
    } else {
      r.skip();
    }
  }
  for (int64_t d : deltas) seq->reference_ts_us = internal::SatAdd(seq->reference_ts_us, d);
}

void PacketDecoder::OnThreadDescriptor(data_view data, SequenceState* seq) {
  pbf_reader r(data);
  std::optional<std::string_view> name;
  while (r.next()) {
    if (r.tag() == pt::kThreadName && IsBytes(r)) {
      name = AsText(r.get_view());
      continue;
    }
    if (!IsVarint(r)) {
      r.skip();
      continue;
    }
    switch (r.tag()) {
      case pt::kThreadPid:
        seq->pid = r.get_int32();
        break;
      case pt::kThreadTid:
        seq->tid = r.get_int64();
        break;
      case pt::kThreadReferenceTimestampUs:
        seq->reference_ts_us = r.get_int64();
        break;
      case pt::kThreadReferenceThreadTimeUs:
        seq->reference_thread_time_us = r.get_int64();
        break;
      case pt::kThreadReferenceInstructionCount:
        seq->reference_instructions = r.get_int64();
        break;
      default:
        r.skip();
    }
  }
  seq->has_thread = true;
  const uint32_t slot = tracks_.ForThread(seq->pid, seq->tid);
  if (name) tracks_.slot(slot).descriptor_name = internal::ValidUtf8(*name);
}

}  // namespace opscope::import::perfetto
