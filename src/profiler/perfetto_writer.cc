// The Perfetto exporter's bytes: packets, descriptors and sequences (perfetto_writer.h).
#include "profiler/perfetto_writer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/saturating.h"
#include "opscope/export.h"
#include "profiler/trace_file.h"
#include "trace/perfetto_protos.h"

namespace opscope::internal {
namespace {

namespace pp = opscope::perfetto::packet;
namespace pt = opscope::perfetto::track;
namespace pe = opscope::perfetto::event;
namespace pc = opscope::perfetto::clock;
using protozero::pbf_writer;

constexpr uint32_t kIncrementalClock = pc::kFirstSequenceClock;

}  // namespace

std::string PerfettoWriter::Write() {
  out_.reserve(trace_.slices().size() * 48 + (1 << 16));
  WriteMetadataAndClock();
  WriteDescriptors();
  for (uint32_t t = 0; t < trace_.tracks().size(); ++t) {
    for (size_t lane = 0; lane < lanes_[t].size(); ++lane) {
      WriteLane(t, lane == 0 ? track_uuid_[t] : lane_uuid_[t][lane - 1], lanes_[t][lane]);
    }
  }
  WriteInstants();
  for (uint32_t t = 0; t < trace_.tracks().size(); ++t) {
    if (trace_.tracks()[t].kind == TrackKind::kCounter) WriteCounters(t);
  }
  return std::move(out_);
}

void PerfettoWriter::WriteMetadataAndClock() {
  namespace pch = opscope::perfetto::chrome;
  {
    pbf_writer packet(writer_, opscope::perfetto::trace::kPacket);
    pbf_writer bundle(packet, pp::kChromeEvents);
    pbf_writer entry(bundle, pch::kMetadata);
    entry.add_string(pch::kMetadataName, std::string(opscope::perfetto::kOpscopeMetadataName));
    entry.add_string(pch::kMetadataJsonValue, MetadataJson());
  }
  // BOOTTIME is the trace clock; REALTIME sits base_time_ns - shift above it.
  pbf_writer packet(writer_, opscope::perfetto::trace::kPacket);
  packet.add_uint32(pp::kTrustedPacketSequenceId, next_sequence_);
  pbf_writer snapshot(packet, pp::kClockSnapshot);
  {
    pbf_writer boot(snapshot, pc::kClocks);
    boot.add_uint32(pc::kClockId, pc::kBoottime);
    boot.add_uint64(pc::kTimestamp, static_cast<uint64_t>(shift_ns_));
  }
  if (trace_.metadata().base_time_ns >= 0) {
    pbf_writer real(snapshot, pc::kClocks);
    real.add_uint32(pc::kClockId, pc::kRealtime);
    real.add_uint64(pc::kTimestamp, static_cast<uint64_t>(trace_.metadata().base_time_ns));
  }
  snapshot.add_uint32(pc::kPrimaryTraceClock, pc::kBoottime);
}

void PerfettoWriter::WriteDescriptors() {
  const uint32_t seq = next_sequence_++;
  auto descriptor = [&](auto&& fill) {
    pbf_writer packet(writer_, opscope::perfetto::trace::kPacket);
    packet.add_uint32(pp::kTrustedPacketSequenceId, seq);
    pbf_writer d(packet, pp::kTrackDescriptor);
    fill(d);
  };
  for (uint32_t i = 0; i < trace_.processes().size(); ++i) {
    const Process& p = trace_.processes()[i];
    descriptor([&](pbf_writer& d) {
      d.add_uint64(pt::kUuid, process_uuid_[i]);
      pbf_writer process(d, pt::kProcess);
      process.add_int32(pt::kProcessPid, DescriptorPid(i));
      process.add_string(pt::kProcessName, std::string(trace_.Str(p.name)));
      if (p.labels != 0) process.add_string(pt::kProcessLabels, std::string(trace_.Str(p.labels)));
    });
  }
  for (uint32_t i = 0; i < trace_.tracks().size(); ++i) {
    const Track& t = trace_.tracks()[i];
    const std::string name(trace_.Str(t.name));
    descriptor([&](pbf_writer& d) {
      d.add_uint64(pt::kUuid, track_uuid_[i]);
      d.add_uint64(pt::kParentUuid, process_uuid_[t.process]);
      if (t.kind == TrackKind::kThread) {
        pbf_writer thread(d, pt::kThread);
        thread.add_int32(pt::kThreadPid, DescriptorPid(t.process));
        thread.add_int64(pt::kThreadTid, t.tid);
        if (!name.empty()) thread.add_string(pt::kThreadName, name);
        return;
      }
      d.add_string(pt::kName, name);
      if (t.kind == TrackKind::kCounter) {
        pbf_writer counter(d, pt::kCounter);
        counter.add_bool(pt::kCounterIsIncremental, false);
      }
    });
    for (uint64_t lane : lane_uuid_[i]) {
      descriptor([&](pbf_writer& d) {
        d.add_uint64(pt::kUuid, lane);
        d.add_uint64(pt::kParentUuid, track_uuid_[i]);
        d.add_string(pt::kName, name);
      });
    }
  }
}

void PerfettoWriter::StartSequence(uint32_t seq, uint64_t t0, uint64_t default_track) {
  pbf_writer packet(writer_, opscope::perfetto::trace::kPacket);
  packet.add_uint32(pp::kTrustedPacketSequenceId, seq);
  packet.add_uint32(pp::kSequenceFlags, pp::kSeqIncrementalStateCleared);
  {
    pbf_writer defaults(packet, pp::kTracePacketDefaults);
    defaults.add_uint32(opscope::perfetto::defaults::kTimestampClockId, kIncrementalClock);
    if (default_track != 0) {
      pbf_writer event(defaults, opscope::perfetto::defaults::kTrackEventDefaults);
      event.add_uint64(opscope::perfetto::defaults::kTrackUuid, default_track);
    }
  }
  pbf_writer snapshot(packet, pp::kClockSnapshot);
  {
    pbf_writer clock(snapshot, pc::kClocks);
    clock.add_uint32(pc::kClockId, kIncrementalClock);
    clock.add_uint64(pc::kTimestamp, t0);
    clock.add_bool(pc::kIsIncremental, true);
  }
  pbf_writer boot(snapshot, pc::kClocks);
  boot.add_uint32(pc::kClockId, pc::kBoottime);
  boot.add_uint64(pc::kTimestamp, t0);
  last_time_ = t0;
}

void PerfettoWriter::EventPacket(uint32_t seq, uint64_t t, SequenceInterner* interner) {
  pbf_writer packet(writer_, opscope::perfetto::trace::kPacket);
  packet.add_uint64(pp::kTimestamp, t - last_time_);
  last_time_ = t;
  packet.add_uint32(pp::kTrustedPacketSequenceId, seq);
  // No SEQ_NEEDS_INCREMENTAL_STATE: it only tells a reader what to skip after data loss, and a
  // written file loses none (2 bytes a packet, 4% of a converted trace).
  interner->Flush(&packet);
  packet.add_message(pp::kTrackEvent, event_);
}

void PerfettoWriter::Args(uint32_t args, pbf_writer* event, SequenceInterner* interner,
                          DerivedArgs* derived) {
  if (args == kNone) return;
  WriteArgs(trace_.ArgsJson(args), event, interner, derived);
}

// A slice's begin: name, category, args, and what the model holds that they do not say.
void PerfettoWriter::SliceBegin(uint32_t index, SequenceInterner* interner) {
  const Slice& s = trace_.slices()[index];
  event_.clear();
  pbf_writer event(event_);
  event.add_uint32(pe::kType, pe::kTypeSliceBegin);
  event.add_uint64(pe::kNameIid, interner->Name(s.name, trace_.Str(s.name)));
  if (s.category != 0) {
    event.add_uint64(pe::kCategoryIids, interner->Category(s.category, trace_.Str(s.category)));
  }
  DerivedArgs derived;
  Args(s.args, &event, interner, &derived);
  using namespace opscope::perfetto;  // NOLINT(build/namespaces): the reserved names
  if (kind_of_category_.at(s.category) != s.kind) {
    WriteStringAnnotation(kKindAnnotation, ActivityKindName(s.kind), &event, interner);
  }
  if (derived.external_id.value_or(0) != s.external_id) {
    WriteIntAnnotation(kExternalIdAnnotation, s.external_id, &event, interner);
  }
  if (trace_.Str(s.input_shapes) != derived.input_dims) {
    WriteStringAnnotation(kInputShapesAnnotation, trace_.Str(s.input_shapes), &event, interner);
  }
  if (derived.correlation.value_or(0) != s.correlation) {
    event.add_uint64(pe::kCorrelationId, static_cast<uint64_t>(s.correlation));
  }
  // Flow ids as varints (flow_ids_old, terminating_flow_ids_old: the same meaning, still read by
  // Perfetto): a correlation id takes 3-4 bytes there, 8 as fixed64.
  for (uint32_t k = out_begin_[index]; k < out_begin_[index + 1]; ++k) {
    event.add_uint64(pe::kFlowIdsOld, out_ids_[k]);
  }
  for (uint32_t k = in_begin_[index]; k < in_begin_[index + 1]; ++k) {
    event.add_uint64(pe::kTerminatingFlowIdsOld, in_ids_[k]);
  }
}

// One lane of a track: its slices nest, so each end closes the innermost open slice.
void PerfettoWriter::WriteLane(uint32_t track, uint64_t uuid, const std::vector<uint32_t>& slices) {
  (void)track;
  if (slices.empty()) return;
  const uint32_t seq = next_sequence_++;
  StartSequence(seq, Time(trace_.slices()[slices.front()].ts_ns), uuid);
  SequenceInterner interner;
  std::vector<int64_t> open;  // ends of the open slices
  auto end_until = [&](int64_t until) {
    while (!open.empty() && open.back() <= until) {
      event_.clear();
      pbf_writer end(event_);
      end.add_uint32(pe::kType, pe::kTypeSliceEnd);
      EventPacket(seq, Time(open.back()), &interner);
      open.pop_back();
    }
  };
  for (uint32_t i : slices) {
    const Slice& s = trace_.slices()[i];
    end_until(s.ts_ns);
    SliceBegin(i, &interner);
    EventPacket(seq, Time(s.ts_ns), &interner);
    open.push_back(SatAdd(s.ts_ns, s.dur_ns));
  }
  end_until(std::numeric_limits<int64_t>::max());
}

void PerfettoWriter::WriteInstants() {
  const std::vector<Instant>& instants = trace_.instants();
  if (instants.empty()) return;
  const uint32_t seq = next_sequence_++;
  StartSequence(seq, Time(instants.front().ts_ns), 0);
  SequenceInterner interner;
  for (const Instant& i : instants) {
    event_.clear();
    pbf_writer event(event_);
    event.add_uint32(pe::kType, pe::kTypeInstant);
    event.add_uint64(pe::kTrackUuid, track_uuid_[i.track]);
    event.add_uint64(pe::kNameIid, interner.Name(i.name, trace_.Str(i.name)));
    if (i.category != 0) {
      event.add_uint64(pe::kCategoryIids, interner.Category(i.category, trace_.Str(i.category)));
    }
    DerivedArgs derived;
    Args(i.args, &event, &interner, &derived);
    if (i.scope == 'g' || i.scope == 'p') {
      pbf_writer legacy(event, pe::kLegacyEvent);
      legacy.add_uint32(opscope::perfetto::legacy::kInstantEventScope,
                        i.scope == 'g' ? opscope::perfetto::legacy::kScopeGlobal
                                       : opscope::perfetto::legacy::kScopeProcess);
    }
    EventPacket(seq, Time(i.ts_ns), &interner);
  }
}

void PerfettoWriter::WriteCounters(uint32_t track) {
  const std::vector<CounterSample>& counters = trace_.counters();
  auto first = std::lower_bound(counters.begin(), counters.end(), track,
                                [](const CounterSample& c, uint32_t t) { return c.track < t; });
  if (first == counters.end() || first->track != track) return;
  const uint32_t seq = next_sequence_++;
  StartSequence(seq, Time(first->ts_ns), track_uuid_[track]);
  SequenceInterner interner;
  for (auto c = first; c != counters.end() && c->track == track; ++c) {
    event_.clear();
    pbf_writer event(event_);
    event.add_uint32(pe::kType, pe::kTypeCounter);
    // Integral values as a varint (smaller); both read back as the same double.
    if (std::nearbyint(c->value) == c->value && std::fabs(c->value) < 9007199254740992.0) {
      event.add_int64(pe::kCounterValue, static_cast<int64_t>(c->value));
    } else {
      event.add_double(pe::kDoubleCounterValue, c->value);
    }
    EventPacket(seq, Time(c->ts_ns), &interner);
  }
}

std::string PerfettoTraceBytes(const Trace& trace) { return PerfettoWriter(trace).Write(); }

}  // namespace opscope::internal

namespace opscope {

Status WritePerfettoTrace(const Trace& trace, const std::string& path) {
  const bool gzip = path.size() > 3 && path.ends_with(".gz");
  return internal::WriteTraceFile(path, internal::PerfettoTraceBytes(trace), gzip,
                                  "Perfetto trace");
}

}  // namespace opscope
