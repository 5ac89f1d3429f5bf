// The packets that describe rather than record (track descriptors, clock snapshots, opscope's
// metadata entry) and the end of the import: the model's metadata (packet_decoder.h).
#include <simdjson.h>

#include "base/json_escape.h"
#include "import/perfetto/packet_decoder.h"
#include "import/perfetto/proto_read.h"
#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pt = opscope::perfetto::track;
using protozero::data_view;
using protozero::pbf_reader;

std::string Utf8(std::string_view bytes) {
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) return std::string(bytes);
  return internal::ValidUtf8(bytes);
}

void ReadProcess(data_view data, TrackDescription* d) {
  d->what = TrackDescription::What::kProcess;
  pbf_reader r(data);
  while (r.next()) {
    switch (r.tag()) {
      case pt::kProcessPid:
        d->pid = static_cast<int32_t>(Varint(r).value_or(0));
        break;
      case pt::kProcessName:
        if (auto s = TextField(r)) d->process_or_thread_name = Utf8(*s);
        break;
      case pt::kProcessLabels:
        if (auto s = TextField(r)) d->process_labels.push_back(Utf8(*s));
        break;
      default:
        r.skip();
    }
  }
}

void ReadThread(data_view data, TrackDescription* d) {
  d->what = TrackDescription::What::kThread;
  pbf_reader r(data);
  while (r.next()) {
    switch (r.tag()) {
      case pt::kThreadPid:
        d->pid = static_cast<int32_t>(Varint(r).value_or(0));
        break;
      case pt::kThreadTid:
        d->tid = Varint(r).value_or(0);
        break;
      case pt::kThreadName:
        if (auto s = TextField(r)) d->process_or_thread_name = Utf8(*s);
        break;
      default:
        r.skip();
    }
  }
}

void ReadCounter(data_view data, TrackDescription* d) {
  d->what = TrackDescription::What::kCounter;
  pbf_reader r(data);
  while (r.next()) {
    switch (r.tag()) {
      case pt::kCounterType:
        d->counter_type = static_cast<int32_t>(Varint(r).value_or(0));
        break;
      case pt::kCounterUnitMultiplier: {
        const int64_t m = Varint(r).value_or(1);
        d->unit_multiplier = m == 0 ? 1 : m;
        break;
      }
      case pt::kCounterIsIncremental:
        d->incremental = Varint(r).value_or(0) != 0;
        break;
      default:
        r.skip();
    }
  }
}

}  // namespace

std::string PacketDecoder::OnTrackDescriptor(data_view data) {
  TrackDescription d;
  bool has_uuid = false;
  pbf_reader r(data);
  while (r.next()) {
    switch (r.tag()) {
      case pt::kUuid:
        if (auto v = Uvarint(r)) {
          d.uuid = *v;
          has_uuid = true;
        }
        break;
      case pt::kParentUuid:
        d.parent_uuid = Uvarint(r);
        break;
      case pt::kName:
      case pt::kStaticName:
      case pt::kAtraceName:
        if (auto s = TextField(r)) d.name = Utf8(*s);
        break;
      case pt::kSiblingMergeBehavior:
        d.merge_none = Varint(r).value_or(0) == pt::kSiblingMergeBehaviorNone;
        break;
      case pt::kProcess:
        if (IsBytes(r)) {
          ReadProcess(r.get_view(), &d);
        } else {
          r.skip();
        }
        break;
      case pt::kThread:
        if (IsBytes(r)) {
          ReadThread(r.get_view(), &d);
        } else {
          r.skip();
        }
        break;
      case pt::kCounter:
        if (IsBytes(r)) {
          ReadCounter(r.get_view(), &d);
        } else {
          r.skip();
        }
        break;
      default:
        r.skip();
    }
  }
  if (!has_uuid && d.what == TrackDescription::What::kNamed) {
    return "a track descriptor without a uuid";
  }
  tracks_.Describe(d);
  return "";
}

void PacketDecoder::OnClockSnapshot(data_view data, uint32_t sequence_id) {
  namespace pc = opscope::perfetto::clock;
  std::vector<ClockConverter::Reading> readings;
  uint32_t primary = 0;
  pbf_reader r(data);
  while (r.next()) {
    if (r.tag() == pc::kPrimaryTraceClock) {
      primary = static_cast<uint32_t>(Uvarint(r).value_or(0));
    } else if (r.tag() == pc::kClocks && IsBytes(r)) {
      ClockConverter::Reading reading;
      pbf_reader c(r.get_view());
      while (c.next()) {
        switch (c.tag()) {
          case pc::kClockId:
            reading.clock_id = static_cast<uint32_t>(Uvarint(c).value_or(0));
            break;
          case pc::kTimestamp:
            reading.timestamp = Uvarint(c).value_or(0);
            break;
          case pc::kIsIncremental:
            reading.is_incremental = Uvarint(c).value_or(0) != 0;
            break;
          case pc::kUnitMultiplierNs:
            reading.unit_multiplier_ns = Uvarint(c).value_or(0);
            break;
          default:
            c.skip();
        }
      }
      readings.push_back(reading);
    } else {
      r.skip();
    }
  }
  if (std::string why = clocks_.AddSnapshot(sequence_id, readings, primary); !why.empty()) {
    log_->Warn("clock snapshot: " + why, false);
  }
}

// ChromeEventBundle's metadata: opscope's entry, when this trace was written by opscope.
void PacketDecoder::OnChromeEvents(data_view data) {
  namespace pc = opscope::perfetto::chrome;
  pbf_reader r(data);
  while (r.next()) {
    if (r.tag() != pc::kMetadata || !IsBytes(r)) {
      r.skip();
      continue;
    }
    pbf_reader m(r.get_view());
    std::string_view name, json;
    while (m.next()) {
      if (m.tag() == pc::kMetadataName && IsBytes(m)) {
        name = AsText(m.get_view());
      } else if (m.tag() == pc::kMetadataJsonValue && IsBytes(m)) {
        json = AsText(m.get_view());
      } else {
        m.skip();
      }
    }
    if (name != opscope::perfetto::kOpscopeMetadataName || json.empty()) continue;
    if (blob_ || events_seen_) {
      log_->Warn("an opscope metadata entry after the trace's events is ignored", false);
      continue;
    }
    OpscopeBlob blob;
    if (std::string why = ParseOpscopeBlob(json, &blob); !why.empty()) {
      log_->Warn(why, false);
      continue;
    }
    blob_ = std::move(blob);
    tracks_.UseBlob(*blob_, trace_);
    assembler_.UseBlob(&*blob_);
  }
}

void PacketDecoder::Finish(int threads) {
  ImportStats& stats = log_->stats();
  stats.slices = assembler_.Finish();
  TraceMetadata& md = trace_->metadata();
  if (blob_) {  // as the trace was before it was written
    md.schema_version = blob_->schema_version;
    md.base_time_ns = blob_->base_time_ns;
    md.device_type = blob_->device_type;
    md.trace_name = blob_->trace_name;
    md.extra = blob_->extra;
    md.dropped = blob_->dropped;
    md.skipped_events = blob_->skipped_events + stats.skipped;
    md.warnings = blob_->warnings;
    md.warnings.insert(md.warnings.end(), stats.warnings.begin(), stats.warnings.end());
  } else {
    // ts 0 is the trace's first timestamp; on the wall clock when a snapshot gives REALTIME.
    md.base_time_ns = assembler_.origin() + clocks_.realtime_offset().value_or(0);
    md.device_type = assembler_.DeviceType();
    md.skipped_events = stats.skipped;
    md.warnings = stats.warnings;
  }
  trace_->Finalize(threads);
}

}  // namespace opscope::import::perfetto
