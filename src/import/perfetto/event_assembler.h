// Track events, decoded, to the model's slices, instants, counters and flows.
//
// Events arrive in file order, with timestamps already on the primary clock; Perfetto's order is
// the timestamps' (an async slice may begin on one sequence and end on another, packets of
// several sequences interleave), so begins and ends are kept per track and matched once the whole
// trace is read: per track, in timestamp order (file order for ties), an end closes the innermost
// open slice. Flows are chained in timestamp order across the trace:
//   flow_ids (and legacy FLOW_INOUT, v1 't')   from the flow's last slice to this one, which is
//                                             then its last;
//   terminating_flow_ids (v1 'f')              from the flow's last slice to this one; it ends;
//   legacy FLOW_OUT (v1 's')                   this slice is the flow's last;
//   legacy FLOW_IN                             from the flow's last slice to this one.
// v1 flow events bind to the slice enclosing them on their track ('f' without bind_to_enclosing:
// the next slice to begin there). A flow whose terminating event precedes its last slice in time
// (clock skew) still joins the two.
//
// Finish() puts everything in the model: tracks (TrackTable::Materialize), slices with their
// kinds, instants, counters, flows, times made relative to the trace's first timestamp. Not
// thread-safe.
#ifndef OPSCOPE_IMPORT_PERFETTO_EVENT_ASSEMBLER_H_
#define OPSCOPE_IMPORT_PERFETTO_EVENT_ASSEMBLER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/import_log.h"
#include "import/perfetto/opscope_blob.h"
#include "import/perfetto/track_table.h"
#include "opscope/trace.h"

namespace opscope::import::perfetto {

// How an event takes part in a flow (see the file comment).
enum class FlowOp : uint8_t { kNext, kTerminate, kOut, kIn, kStart, kStep, kFinish };

struct FlowRef {
  uint64_t id = 0;
  FlowOp op = FlowOp::kNext;
  bool legacy_v1 = false;        // v1 ids have their own namespace (with the event's category)
  bool binds_enclosing = false;  // v1 'f' with bind_to_enclosing
  StringId category = 0;         // v1: the event's category and name, for the flow
  StringId name = 0;
};

// A slice's kind is derived from its category and track unless set (ActivityKind values only).
inline constexpr auto kDeriveKind = static_cast<ActivityKind>(0xff);

class EventAssembler {
 public:
  EventAssembler(Trace* trace, TrackTable* tracks, ImportLog* log);
  // Capacity for a trace of `input_bytes` of protobuf.
  void Reserve(uint64_t input_bytes);

  // A slice `s` (s.track = its track slot, s.ts_ns on the primary clock) begins; with
  // `dropped` (before the range of interest) it is matched but not kept.
  void Begin(const Slice& s, bool dropped, const std::vector<FlowRef>& flows);
  // The innermost open slice on `slot` ends at `ts_ns`; `args` (may be "") merge into its args,
  // `flows` attach to it.
  void End(uint32_t slot, int64_t ts_ns, std::string args, const std::vector<FlowRef>& flows);
  // A slice with its duration (legacy complete events).
  void Complete(const Slice& s, const std::vector<FlowRef>& flows);
  void AddInstant(const Instant& i) { instants_.push_back(i); }
  void AddCounter(const CounterSample& c) { counters_.push_back(c); }
  // A v1 flow event ('s', 't', 'f') on `slot` at `ts_ns`.
  void AddFlowEvent(uint32_t slot, int64_t ts_ns, const FlowRef& flow);

  // opscope's blob, when the trace has one: kinds, flows and times as written. Must outlive this.
  void UseBlob(const OpscopeBlob* blob);

  // Everything into the model (not finalized). Returns the number of slices.
  uint64_t Finish();
  // After Finish: the primary clock's time of the model's ts 0, and the device family the slices'
  // categories name (as the JSON reader decides it).
  int64_t origin() const { return origin_; }
  std::string DeviceType() const;

 private:
  struct Marker {
    int64_t ts_ns;
    uint32_t payload;     // begin: pending slice (kNone when dropped); end: end record
    uint32_t slot_begin;  // track slot << 1 | 1 for a begin
  };
  static_assert(sizeof(Marker) == 16);
  // What matching does per track in track order: a warning, or an end's args merged.
  struct Deferred {
    enum What : uint8_t { kNoOpenSlice, kMergeArgs, kNeverEnded };
    uint32_t slot;
    What what;
    int64_t ts_ns;   // kNoOpenSlice: the end's time
    uint32_t slice;  // kMergeArgs, kNeverEnded: the pending slice
    uint32_t end;    // kMergeArgs: the end record
  };
  struct EndRecord {
    std::string args;
    uint32_t slice = kNone;  // set by matching
  };
  // A flow event, resolved to its slice by Finish.
  struct PendingFlow {
    FlowRef ref;
    int64_t ts_ns;
    uint32_t target;  // pending slice, end record (kEndBit), or track slot (v1)
  };
  static constexpr uint32_t kEndBit = 0x80000000u;

  // A flow's identity: its id, and for v1 flows its category.
  struct FlowKey {
    uint64_t id;
    StringId category;
    bool operator==(const FlowKey& o) const { return id == o.id && category == o.category; }
  };
  struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const {
      return std::hash<uint64_t>()(k.id * 0x9E3779B97F4A7C15ull ^ k.category);
    }
  };

  // Pending slice `i` (after PlaceSlices: placed), wherever it is kept.
  const Slice& Pending(uint32_t i) const {
    return slices_in_model_ ? trace_->slices()[first_slice_ + i] : slices_[i];
  }
  void PushMarker(uint32_t slot, int64_t ts_ns, uint32_t payload, bool begin);
  void MatchSlices();
  void Apply(const Deferred& d);
  void IndexSlicesBySlot();
  void MarkDeviceTracks();
  bool PlaceSlices();
  uint64_t SlicesToModel(bool all_placed);
  ActivityKind KindOf(const Slice& s);
  int64_t Origin() const;
  uint32_t ResolveTarget(const PendingFlow& f) const;
  uint32_t BindV1(uint32_t slot, int64_t ts_ns, bool enclosing) const;
  void ChainFlows();
  void AddFlow(const FlowRef& ref, uint32_t from, uint32_t to);

  Trace* trace_;
  TrackTable* tracks_;
  ImportLog* log_;
  const OpscopeBlob* blob_ = nullptr;
  std::vector<Slice> slices_;          // pending: track = slot, times on the primary clock
  std::vector<Marker> markers_;        // begins and ends of every track, in file order
  std::vector<int64_t> slot_last_ts_;  // per slot: its last marker's time
  bool markers_sorted_ = true;         // every slot's markers are in time order
  std::vector<EndRecord> ends_;
  std::vector<PendingFlow> flows_;
  std::vector<Instant> instants_;
  std::vector<CounterSample> counters_;
  std::unordered_map<StringId, ActivityKind> kind_of_category_;
  std::vector<std::vector<uint32_t>> slices_by_slot_;  // for v1 binding, after matching
  // Per pending slice: its index in the model (kNone when it has no track); empty when every
  // slice went in, in order, from first_slice_.
  std::vector<uint32_t> trace_index_;
  uint32_t first_slice_ = 0;
  bool slices_in_model_ = false;  // the model took slices_'s storage (SlicesToModel)
  std::unordered_map<uint64_t, const OpscopeBlob::Flow*> listed_flows_;  // by ordinal
  int64_t origin_ = 0;
  // The flows' category and name, interned at the first flow (the blob's, or "flow").
  StringId flow_category_ = kNone, flow_name_ = kNone;
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_EVENT_ASSEMBLER_H_
