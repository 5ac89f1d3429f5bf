// TraceIndex: the Explorer's read-only view of one finalized trace, laid out in lanes, with the
// level-of-detail queries the UI asks for.
//
// Lanes are what the system trace draws, grouped (framework, framework-device interaction,
// runtime, hardware, device engines, counters). A host thread's slices are split by kind into a
// framework lane, an interaction lane (copies, synchronize) and runtime lanes (one per device the
// calls drive), so each layer of the stack gets its own group. Within a lane, each nesting depth
// is a row of non-overlapping slices sorted by time; a row keeps start/end arrays and a prefix sum
// of busy time, so a viewport query merges everything narrower than a pixel into summary blocks
// with a few binary searches per pixel: its cost depends on the viewport's width in pixels, not
// on how many events the range holds.
//
// Times: the index and its internal queries (ViewportQuery, SlicesOverlapping) use the trace's own
// ns. Every time it writes to JSON, and every time the API reads from a request, is in API time:
// ns relative to the trace's start (ToApi / FromApi), an exact integer that a browser's double
// holds without loss at any zoom (an epoch timestamp, ~1.7e18 ns, is past a double's 2^53).
//
// Thread safety: built by the constructor (its per-lane parts on `threads` threads, the index
// the same for every count), except what IndexBuild::kDeferred leaves for later; every const
// method may run concurrently, a deferred part being built once by whichever needs it first.
// The Trace must outlive the index.
#ifndef OPSCOPE_EXPLORER_TRACE_INDEX_H_
#define OPSCOPE_EXPLORER_TRACE_INDEX_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "explorer/memory_lanes.h"
#include "opscope/trace.h"

namespace opscope::explorer {

enum class LaneGroup : uint8_t {
  kFramework,    // host threads: cpu_op, user_annotation, python_function
  kInteraction,  // framework <-> device: copies, synchronize
  kRuntime,      // host runtime API calls (nrta_*, cuda*), one lane per (thread, device)
  kHardware,     // device executions: nc_exec_running, CUDA streams
  kEngines,      // engine instruction lanes and DMA queues
  kCounters,     // counter series
  kMemory,       // allocated / reserved bytes per device; written nested at the top of kHardware
};
inline constexpr int kNumLaneGroups = 7;
std::string_view LaneGroupKey(LaneGroup group);  // "framework", "interaction", ...

// What a lane holds, within its group: a host thread's ops, its Python stack (python_function
// frames, drawn apart so deep stacks do not push the ops down), its copies and syncs, or its
// runtime calls; a device stream; an engine or DMA queue; a counter series; a device's memory.
enum class LaneRole : uint8_t {
  kOps,
  kPython,
  kInteraction,
  kRuntime,
  kStream,
  kEngine,
  kCounter,
  kMemory
};
std::string_view LaneRoleKey(LaneRole role);  // "ops", "python", ...

// One row of non-overlapping slices, sorted by start. Times in ns.
struct LaneRow {
  std::vector<uint32_t> ids;   // slice indices
  std::vector<int64_t> start;  // ts_ns per slice
  std::vector<int64_t> end;    // ts_ns + dur_ns; non-decreasing
  std::vector<int64_t> busy;   // busy[i] = sum of durations of slices [0, i)
};

struct Lane {
  LaneGroup group = LaneGroup::kFramework;
  LaneRole role = LaneRole::kOps;
  // Says what the lane is, unique within the trace: "thread 12 (python3) · Python stack",
  // "GPU 0 · stream 7", "thread 12 (python3) · runtime → GPU 0".
  std::string title;
  uint32_t process = kNone;
  uint32_t track = kNone;
  uint32_t device_process = kNone;  // runtime lanes: the device process the calls drive
  std::vector<LaneRow> rows;        // slice lanes: one per depth
  std::vector<int64_t> counter_ts;  // counter lanes: samples sorted by time
  std::vector<double> counter_value;
  uint32_t memory_device = kNone;  // memory lanes: the device's index in MemoryLanes
  size_t num_events = 0;
  int64_t sort_key[5] = {0, 0, 0, 0, 0};
};

struct ViewportQuery {
  int64_t t0 = 0;  // trace ns
  int64_t t1 = 0;
  int width_px = 1000;
  std::vector<uint32_t> lanes;  // empty = every lane
  // Slices narrower than this many pixels are merged into blocks.
  double min_px = 1.0;
  // The times items are written in: API time (ToApi) when empty; the job's viewport maps each
  // rank's times onto its aligned axis. Must be non-decreasing.
  std::function<int64_t(int64_t)> to_output;
  uint32_t lane_base = 0;  // added to every lane id written (the job's rank-unique lane ids)
  // Items as [ts,dur,row,name,id,count] only (no ext, busy_ns, kind): a third fewer bytes for a
  // page that draws by name (the job's).
  bool compact = false;
  // Each lane's items as one flat array, `stride` numbers an item (6 compact, else 9), and
  // "stride" in the answer: a page parses it in a third of the time, without an array per item.
  bool flat = false;
};

// The names a viewport answer uses ("strings"), numbered in order of first use. One table may
// serve the lanes of several traces (the job's viewport), each under its own `source` number.
// The traces must outlive it.
class ViewportNames {
 public:
  uint32_t Index(uint32_t source, const Trace& trace, StringId id);
  void Write(JsonWriter* w) const;  // "strings": [...]

 private:
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<std::string_view> names_;
};

// What a search keeps: slices whose name is set in `names` (a bitmap over string ids) and whose
// kind's bit is set in `kinds` (bit i: ActivityKind i), listed by start or by duration (longest
// first).
struct SliceFilter {
  const std::vector<bool>* names = nullptr;
  uint32_t kinds = ~uint32_t{0};
  bool Keeps(const Slice& s) const {
    return s.name < names->size() && (*names)[s.name] && ((kinds >> static_cast<int>(s.kind)) & 1);
  }
};
enum class SearchOrder : uint8_t { kStart, kDuration };

// What the constructor builds. kDeferred leaves out what the first view (lanes and viewports)
// does not use, the External id and correlation lookups (WithExternalId, WithCorrelation: the
// slice details, chains and device views), for BuildDeferred or the first query that needs them;
// every answer is the same either way.
enum class IndexBuild : uint8_t { kEager, kDeferred };

class TraceIndex {
 public:
  // `threads`: the threads that build the per-lane parts (the calling thread counts); the index
  // is the same for every count.
  explicit TraceIndex(const Trace& trace, int threads = 1, IndexBuild build = IndexBuild::kEager);
  TraceIndex(const TraceIndex&) = delete;
  TraceIndex& operator=(const TraceIndex&) = delete;

  // Builds what IndexBuild::kDeferred left out, unless done already (then returns at once, or
  // waits for the thread building it). Any thread, concurrently with queries.
  void BuildDeferred() const;

  const Trace& trace() const { return trace_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }
  // A trace time as the API writes it (ns since start_ns()), and an API time as a trace time.
  int64_t ToApi(int64_t ts_ns) const { return internal::SatSub(ts_ns, start_ns_); }
  int64_t FromApi(int64_t api_ns) const { return internal::SatAdd(api_ns, start_ns_); }
  bool neuron_style() const { return neuron_style_; }
  uint32_t LaneOf(uint32_t slice) const { return slice_lane_[slice]; }
  uint32_t DepthOf(uint32_t slice) const { return slice_depth_[slice]; }

  // The memory timeline of `opscope report --memory`, one lane per device.
  const MemoryLanes& memory() const { return memory_; }

  // {"trace":{"start_ns" (0),"end_ns","origin_ns" (start_ns() in the trace's clock, a decimal
  // string: it may not fit a double),...}, "groups":[{"key","title","lanes":[...]}]}. Memory lanes
  // are a group
  // {"key":"memory","top":true,...} in "groups" of the hardware group (drawn above its lanes);
  // each memory lane carries "memory" (MemoryLanes::WriteDevice).
  void WriteLanes(JsonWriter* w) const;
  // {"t0","t1","ns_per_px","strings":[...],"lanes":[{"lane","items":[[ts,dur,row,name,id,count,
  //  ext,busy_ns,kind],...]}], "counters":[{"lane","points":[[ts,min,max,last],...]}],
  //  "memory":[{"lane","points":[MemoryLanes::WritePoints]}]}. A merged block has count > 1 and
  // the id, name, External id and kind of its first slice; `kind` indexes the "kinds" list of
  // WriteLanes.
  void WriteViewport(const ViewportQuery& q, JsonWriter* w) const;
  // WriteViewport's "lanes" entries alone (slice lanes of q.lanes, in order), names indexed in
  // `names` under `source`: the job's viewport writes several traces' lanes into one answer.
  void WriteSliceLanes(const ViewportQuery& q, uint32_t source, ViewportNames* names,
                       JsonWriter* w) const;
  // Box selection (times in trace ns; written as API times): per name count and time (clipped to
  // the range) of slices in `lanes` that overlap [t0, t1); at most `limit` names, most time first.
  void WriteSelection(int64_t t0, int64_t t1, const std::vector<uint32_t>& lanes, int limit,
                      JsonWriter* w) const;
  // Slices `filter` keeps, in `order` (start, or longest first; ties by start): `limit` of them
  // from the `offset`-th on. {"total","offset","complete","order","events":[slice refs]};
  // `complete` is passed through (false: the names were only partly matched). Memory is
  // O(offset + limit), not O(matches).
  void WriteSearch(const SliceFilter& filter, SearchOrder order, int offset, int limit,
                   bool complete, JsonWriter* w) const;
  // The slices overlapping [t0_ns, t1_ns] (start < t1_ns and end >= t0_ns), in slice order, found
  // through the lane rows without a pass over the whole trace.
  std::vector<uint32_t> SlicesOverlapping(int64_t t0_ns, int64_t t1_ns) const;
  // All details of one slice.
  void WriteSlice(uint32_t slice, JsonWriter* w) const;
  // Compact description of one slice, used in lists: {"id","name","ts","dur","lane","row","kind"}.
  void WriteSliceRef(uint32_t slice, JsonWriter* w) const;

  // Host ops: cpu_op / user_annotation / python_function on a host (non-device) process.
  bool IsHostOp(uint32_t slice) const;
  bool OnDevice(uint32_t slice) const;
  // The slices carrying this External id / correlation id (sorted by slice index).
  std::vector<uint32_t> WithExternalId(int64_t ext) const;
  std::vector<uint32_t> WithCorrelation(int64_t corr) const;
  // Slices nested inside `slice` on its track, at most `limit`.
  std::vector<uint32_t> Descendants(uint32_t slice, size_t limit) const;

 private:
  struct LaneKey {
    uint32_t track;
    LaneGroup group;
    LaneRole role;
    uint32_t device;  // runtime lanes: the device process the calls drive
  };
  using RuntimeDevices = std::unordered_map<uint32_t, uint32_t>;  // runtime call -> device

  struct LanePart;
  void BuildLanes(int threads);
  void ClassifyRange(std::pair<uint32_t, uint32_t> range, const RuntimeDevices& runtime_device,
                     LanePart* part) const;
  LaneKey ClassifySlice(uint32_t slice, const RuntimeDevices& runtime_device,
                        std::vector<int8_t>* copy_name) const;
  Lane MakeLane(const LaneKey& key) const;
  // Stacks a lane's slices (in time order) into rows by nesting depth; slices nested too deep go
  // to `unrowed`.
  void StackRows(const std::vector<uint32_t>& ids, uint32_t lane_id, Lane* lane,
                 std::vector<uint32_t>* unrowed);
  void BuildCounterLanes();
  void BuildMemoryLanes();
  void ComputeExtent();
  // WriteLanes' parts: the trace's header, one lane, one group (`g`'s lanes).
  void WriteTraceHeader(JsonWriter* w) const;
  void WriteLane(uint32_t lane_id, JsonWriter* w) const;
  void WriteGroup(LaneGroup g, JsonWriter* w) const;
  // WriteViewport's parts, one lane each; `scale` holds the query's pixel size.
  struct ViewportScale;
  void WriteSliceItems(uint32_t lane_id, const ViewportQuery& q, const ViewportScale& scale,
                       uint32_t source, ViewportNames* names, JsonWriter* w) const;
  void WriteCounterPoints(uint32_t lane_id, const ViewportQuery& q, const ViewportScale& scale,
                          JsonWriter* w) const;
  void TitleLanes();
  std::string LaneTitle(const Lane& lane, bool prefix_process) const;
  static std::vector<uint32_t> Lookup(const std::vector<std::pair<int64_t, uint32_t>>& map,
                                      int64_t key);

  const Trace& trace_;
  const MemoryLanes memory_;
  std::vector<Lane> lanes_;
  std::vector<uint32_t> slice_lane_;
  std::vector<uint16_t> slice_depth_;
  std::vector<uint32_t> unrowed_;  // slices in no lane row (nested too deep, or no track)
  // Sorted; written once under id_lookups_once_ (BuildDeferred), read only after it.
  mutable std::once_flag id_lookups_once_;
  mutable std::vector<std::pair<int64_t, uint32_t>> by_external_id_;
  mutable std::vector<std::pair<int64_t, uint32_t>> by_correlation_;
  int threads_ = 1;  // for BuildDeferred
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  bool neuron_style_ = false;
};

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_TRACE_INDEX_H_
