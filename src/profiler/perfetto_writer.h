// The Perfetto exporter's plan and its bytes (the public entry point is WritePerfettoTrace in
// opscope/export.h).
//
// The file, in order:
//   1. opscope's metadata entry (ChromeEventBundle metadata "opscope", a JSON value): trace
//      metadata, processes and tracks as the model holds them, which Perfetto tracks are lanes of
//      which, the activity kind of each category, flows that need listing (docs/formats.md);
//   2. a clock snapshot: BOOTTIME is the trace clock, REALTIME (the model's base_time_ns) beside
//   it;
//   3. a TrackDescriptor per process, per track (a thread descriptor for host threads, a named
//      track for device streams and engines, a counter track for counters) and per extra lane;
//   4. one packet sequence per lane of slices: a begin and an end per slice, in time order;
//      overlapping slices that do not nest go to further lanes (child tracks) so that every end
//      closes the slice it belongs to;
//   5. one sequence for every instant, one per counter track.
// Each sequence interns its names, categories, annotation names and string values, and times its
// packets on an incremental clock (each timestamp a delta from the previous one).
//
// Not thread-safe; one per export.
#ifndef OPSCOPE_SRC_PROFILER_PERFETTO_WRITER_H_
#define OPSCOPE_SRC_PROFILER_PERFETTO_WRITER_H_

#include <cstdint>
#include <map>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <utility>
#include <vector>

#include "opscope/trace.h"
#include "profiler/perfetto_args.h"

namespace opscope {
class JsonWriter;
}  // namespace opscope

namespace opscope::internal {

// The whole trace (finalized) as Perfetto protobuf bytes.
std::string PerfettoTraceBytes(const Trace& trace);

class PerfettoWriter {
 public:
  explicit PerfettoWriter(const Trace& trace);
  std::string Write();

 private:
  // ---- The plan (perfetto_metadata.cc) ----
  void PlanLanes();
  void PlanKinds();
  void PlanFlows();
  std::string MetadataJson() const;
  void TraceMetadataFields(JsonWriter* w) const;
  void ProcessAndTrackFields(JsonWriter* w) const;
  void LaneKindAndFlowFields(JsonWriter* w) const;
  int32_t DescriptorPid(uint32_t process) const;

  // ---- The bytes (perfetto_writer.cc) ----
  void WriteMetadataAndClock();
  void WriteDescriptors();
  void WriteLane(uint32_t track, uint64_t uuid, const std::vector<uint32_t>& slices);
  void WriteInstants();
  void WriteCounters(uint32_t track);
  // Starts sequence `seq` at time `t0`: incremental state cleared, an incremental clock at t0,
  // and (when not 0) the default track.
  void StartSequence(uint32_t seq, uint64_t t0, uint64_t default_track);
  // One packet of `seq` at time `t` carrying event_ (a TrackEvent's bytes).
  void EventPacket(uint32_t seq, uint64_t t, SequenceInterner* interner);
  void SliceBegin(uint32_t slice, SequenceInterner* interner);
  void Args(uint32_t args, protozero::pbf_writer* event, SequenceInterner* interner,
            DerivedArgs* derived);
  uint64_t Time(int64_t ts_ns) const { return static_cast<uint64_t>(ts_ns + shift_ns_); }

  const Trace& trace_;
  std::string out_;
  protozero::pbf_writer writer_{out_};
  std::string event_;       // the TrackEvent being written
  int64_t shift_ns_ = 0;    // model ts + shift = Perfetto timestamp (never negative)
  uint64_t last_time_ = 0;  // the current sequence's clock
  uint32_t next_sequence_ = 1;

  std::vector<uint64_t> process_uuid_, track_uuid_;
  // Per track: its lanes' slices; lanes past the first are child tracks with these uuids.
  std::vector<std::vector<std::vector<uint32_t>>> lanes_;
  std::vector<std::vector<uint64_t>> lane_uuid_;
  // Category -> the kind most of its slices have (the others carry opscope.kind).
  std::map<StringId, ActivityKind> kind_of_category_;
  // Flows: the default category and name; per slice, the Perfetto flow ids it starts and ends.
  StringId flow_category_ = 0, flow_name_ = 0;
  std::vector<uint32_t> out_begin_, in_begin_;  // CSR offsets per slice + 1
  std::vector<uint64_t> out_ids_, in_ids_;
  std::vector<uint32_t> listed_flows_;  // indices into trace_.flows() written by ordinal
};

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_PERFETTO_WRITER_H_
