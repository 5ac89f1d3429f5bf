// The trace model: what one profile holds once recording is over.
//
// Every producer fills this model and every consumer reads it: the live profiler builds one when a
// session stops, the importer builds one from a torch.profiler / Kineto JSON file, and
// key_averages, the chrome-trace exporter, the analyses and the Explorer all read it. It is
// column-light and pointer-free so a trace of millions of events stays small: names are interned
// ids, args live in a side store, and each slice is a fixed-size record.
//
//   opscope::Trace trace;
//   auto host = trace.AddProcess(1234, "python");
//   auto main_thread = trace.AddThreadTrack(host, 1234, "thread 1234 (python)");
//   opscope::Slice op;
//   op.name = trace.Intern("aten::mul");
//   op.kind = opscope::ActivityKind::kCpuOp;
//   op.track = main_thread;
//   op.ts_ns = 1000; op.dur_ns = 500; op.external_id = 7;
//   trace.AddSlice(op);
//   trace.Finalize();  // sorts, nests, resolves links; required before any query
//
// Thread safety: a Trace is built by one thread; once Finalize() returns, const methods may be
// called from any number of threads.
#ifndef OPSCOPE_TRACE_H_
#define OPSCOPE_TRACE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opscope {

// Index into a StringTable. 0 is always the empty string.
using StringId = uint32_t;
inline constexpr uint32_t kNone = 0xffffffffu;  // "no index" for track/slice/process indices

// Interns strings; ids are dense and stable for the table's lifetime. Views returned by Get()
// stay valid until the table is destroyed. Not thread-safe.
class StringTable {
 public:
  StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) noexcept;
  StringTable& operator=(StringTable&&) noexcept;
  ~StringTable();

  StringId Intern(std::string_view s);
  // Stores `s` under a new id without indexing it (Find() will not see it): for unique texts
  // such as args objects, where hashing would cost more than sharing saves.
  StringId Append(std::string_view s);
  // Returns kNone when `s` was never interned.
  StringId Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the table (text + index), for memory reports.
  size_t MemoryBytes() const;

 private:
  // The text blocks and the index from text to id (trace_storage.h).
  struct Storage;
  std::unique_ptr<Storage> storage_;
  std::vector<std::string_view> views_;  // by id, into the text blocks; never moves once written
};

// What an event is, from Kineto's activity types. Importers map legacy categories
// ("Operator", "Kernel", ...) onto these; the original category string is kept in Slice::category.
enum class ActivityKind : uint8_t {
  kCpuOp,           // cpu_op: a framework (ATen) op on a host thread
  kUserAnnotation,  // user_annotation: record_function ranges
  kPythonFunction,  // python_function
  // cuda_runtime / privateuse1_runtime / mtia_runtime / xpu_runtime: host runtime API calls.
  kRuntime,
  kDriver,            // cuda_driver / privateuse1_driver
  kKernel,            // kernel: a device execution (Neuron: nc_exec_running)
  kMemcpy,            // gpu_memcpy
  kMemset,            // gpu_memset
  kDeviceAnnotation,  // gpu_user_annotation
  kInstruction,       // device engine instruction or DMA transfer (opscope's Neuron DEVICE mode)
  // collective_comm: the host-side range (NCCL/RCCL kernels themselves are kKernel).
  kCollective,
  kSync,      // cuda_sync and other host/device synchronisation ranges
  kOverhead,  // overhead
  kOther,     // anything else; category string tells what
};

// True for activity that runs on the device (kernel, memcpy, memset, device annotation,
// instruction): the activity whose time fills the device columns.
bool IsDeviceActivity(ActivityKind kind);
// The Kineto category string opscope writes for a kind ("cpu_op", "kernel", ...); runtime and
// driver calls use the PrivateUse1 spelling ("privateuse1_runtime"). Importers keep the original
// spelling in Slice::category.
std::string_view KinetoCategory(ActivityKind kind);
// The kind's own name, the enumerator's without its k ("cpu_op", "runtime", "memcpy",
// "instruction", ...): how the Explorer's API names kinds.
std::string_view ActivityKindName(ActivityKind kind);

// A complete event ("X" phase). 64 bytes; times are nanoseconds relative to Trace::base_time_ns,
// already in the host clock domain.
struct Slice {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  // Kineto "External id": links an op to the activity it launched; 0 = none.
  int64_t external_id = 0;
  int64_t correlation = 0;  // runtime call <-> device activity; also the ac2g flow id; 0 = none
  StringId name = 0;
  StringId category = 0;      // the original "cat" string
  uint32_t track = kNone;     // index into Trace::tracks()
  uint32_t args = kNone;      // opaque handle into the trace's arg store; kNone = no args
  uint32_t parent = kNone;    // enclosing slice on the same track (set by Finalize)
  StringId input_shapes = 0;  // "[[2, 3], []]" as PyTorch prints Input Dims; 0 = not recorded
  ActivityKind kind = ActivityKind::kOther;
  uint8_t depth = 0;  // nesting depth within its lane (set by Finalize)
  uint16_t lane = 0;  // sub-lane for slices that overlap without nesting (set by Finalize)
};
static_assert(sizeof(Slice) == 64, "Slice is a fixed-size record; keep it at one cache line");

// Instant ("i") event.
struct Instant {
  int64_t ts_ns = 0;
  StringId name = 0;
  StringId category = 0;
  uint32_t track = kNone;
  uint32_t args = kNone;
  char scope = 't';  // 't' thread, 'p' process, 'g' global
};

// One sample of one counter series ("C" event). The track is a counter track.
struct CounterSample {
  int64_t ts_ns = 0;
  double value = 0;
  uint32_t track = kNone;
};

// A flow arrow between two slices (Kineto "s"/"f" pairs: ac2g, fwdbwd, async_cpu_to_gpu).
struct Flow {
  uint64_t id = 0;
  StringId category = 0;
  StringId name = 0;
  uint32_t from = kNone;  // slice index
  uint32_t to = kNone;    // slice index
};

struct Process {
  int64_t pid = 0;
  std::string pid_text;  // the original pid when it was a string ("Spans", "GPU 0"); else empty
  StringId name = 0;     // process_name metadata
  StringId labels = 0;   // process_labels metadata
  int64_t sort_index = 0;
  bool is_device = false;  // device pids: GPU/NeuronCore processes
};

enum class TrackKind : uint8_t {
  kThread,        // a host thread
  kDeviceStream,  // a device stream / NeuronCore execution queue
  kDeviceEngine,  // an engine or DMA queue lane inside a device (Neuron DEVICE mode)
  kCounter,       // counter series
};

struct Track {
  uint32_t process = kNone;  // index into processes()
  int64_t tid = 0;
  std::string tid_text;  // the original tid when it was a string; else empty
  StringId name = 0;     // thread_name metadata or a generated name
  int64_t sort_index = 0;
  TrackKind kind = TrackKind::kThread;
  uint16_t lanes = 1;  // number of sub-lanes after Finalize()
};

// Where a device slice came from: the host op that launched it and the runtime call.
struct DeviceLink {
  uint32_t op = kNone;       // the cpu_op / user_annotation slice it is attributed to
  uint32_t runtime = kNone;  // the runtime/driver call with the same correlation
};

// Which peer's definitions the device figures follow (opscope/analysis.h, ComputeDeviceTimeline),
// by what wrote the trace: TraceLens's PyTorch report reads Kineto traces, its JAX report XLA's.
enum class DeviceTimelineRule : uint8_t {
  // TraceLens gpu_timeline: activity linked to a runtime call or op; memcpy = memcpy activity.
  kKineto,
  // TraceLens's JAX gpu_timeline: every activity on a device stream, linked or not; memcpy =
  // memcpy and memset activity and kernels named copy* / memcpy* / memset* (any case).
  kXla,
};

struct TraceMetadata {
  int64_t schema_version = 1;
  int64_t base_time_ns = 0;  // epoch ns of ts 0
  std::string device_type;   // "CUDA", "NEURON", "MTIA", ... ("" when the trace has no device)
  std::string trace_name;
  DeviceTimelineRule timeline_rule = DeviceTimelineRule::kKineto;
  // Other top-level keys, each as its raw JSON value text (deviceProperties, distributedInfo, ...).
  std::vector<std::pair<std::string, std::string>> extra;
  // Events the producer dropped (full buffers, ring-buffer overwrite), by reason.
  std::vector<std::pair<std::string, uint64_t>> dropped;
  // Events the importer skipped with a warning, and the first few messages.
  uint64_t skipped_events = 0;
  std::vector<std::string> warnings;
};

struct PackedArgs;  // src/trace/packed_args.h (the importer's)

class Trace {
 public:
  Trace();
  Trace(Trace&&) noexcept;
  Trace& operator=(Trace&&) noexcept;
  ~Trace();

  // ---- Building (before Finalize) ----
  StringId Intern(std::string_view s) { return strings_.Intern(s); }
  uint32_t AddProcess(int64_t pid, std::string_view name, bool is_device = false);
  // Returns the existing process with this pid if there is one.
  uint32_t FindOrAddProcess(int64_t pid, std::string_view pid_text = {});
  uint32_t AddThreadTrack(uint32_t process, int64_t tid, std::string_view name,
                          TrackKind kind = TrackKind::kThread);
  uint32_t FindOrAddTrack(uint32_t process, int64_t tid, std::string_view tid_text = {},
                          TrackKind kind = TrackKind::kThread);
  uint32_t AddSlice(const Slice& s);
  // AddSlice for each, in order.
  void AddSlices(std::span<const Slice> slices);
  // The same, taking `slices`' storage when the trace holds none yet (no copy: a large trace's
  // slices are written once); `slices` is left empty.
  void AddSlices(std::vector<Slice>&& slices);
  // Appends `n` default slices and returns the first of them, for an importer that writes slices
  // in place (from several threads at distinct indices, if it likes). The pointer is valid until
  // the slices next change size; TruncateSlices gives back what was not written.
  Slice* AppendSlices(size_t n);
  // Keeps the first `n` slices (n <= slices().size()).
  void TruncateSlices(size_t n);
  // Capacity hint for AddSlice. Over-reserving is cheap: pages never written are never resident.
  void ReserveSlices(size_t n) { slices_.reserve(n); }
  // Labels, sort indices and names of processes and tracks added above (before Finalize).
  Process& MutableProcess(uint32_t index) { return processes_[index]; }
  Track& MutableTrack(uint32_t index) { return tracks_[index]; }
  // A slice added above, by the index AddSlice returned (before Finalize): for importers that
  // learn what a slice is only once the whole input is read.
  Slice& MutableSlice(uint32_t index) { return slices_[index]; }
  void AddInstant(const Instant& i) { instants_.push_back(i); }
  void AddCounter(const CounterSample& c) { counters_.push_back(c); }
  // A flow endpoint as the JSON gives it; Finalize() binds endpoints to slices by track + ts.
  void AddFlowEndpoint(uint64_t id, StringId category, StringId name, uint32_t track, int64_t ts_ns,
                       bool is_start, bool binds_enclosing);
  // A flow whose endpoints are already known slice indices.
  void AddFlow(const Flow& f) { flows_.push_back(f); }
  // Capacity hint for AddFlow (as ReserveSlices).
  void ReserveFlows(size_t n) { flows_.reserve(n); }
  // Stores an args object as JSON text (e.g. {"device": 0, "stream": 7}); returns the handle for
  // Slice::args / Instant::args. Each call stores its own copy (args carry unique ids).
  uint32_t AddArgs(std::string_view json_object_text);
  // Args objects packed into blocks on another thread (an importer's parse threads; see
  // src/trace/packed_args.h), taken whole and left empty: the same handles as AddArgs of each
  // object in order (none may be empty or "{}"). Returns the first object's handle.
  uint32_t AddPackedArgs(PackedArgs* packed);

  // Sorts slices by (track, ts, -dur), assigns parent/depth/lane, binds flow endpoints, and builds
  // the device links. Slice indices handed out by AddSlice are invalid afterwards; flows added with
  // AddFlow are remapped. Idempotent. `threads` > 1 runs the per-track steps (nesting, flow
  // binding) and the device links on up to that many threads (the caller's included) when the trace
  // is large enough to pay; the result is the same for any count.
  void Finalize(int threads = 1);
  bool finalized() const { return finalized_; }

  // ---- Queries (after Finalize) ----
  const StringTable& strings() const { return strings_; }
  std::string_view Str(StringId id) const { return strings_.Get(id); }
  const std::vector<Process>& processes() const { return processes_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  // Sorted by (track, ts_ns, longer first).
  const std::vector<Slice>& slices() const { return slices_; }
  // [begin, end) range of slices on one track.
  std::pair<uint32_t, uint32_t> TrackSlices(uint32_t track) const;
  const std::vector<Instant>& instants() const { return instants_; }
  const std::vector<CounterSample>& counters() const { return counters_; }
  const std::vector<Flow>& flows() const { return flows_; }
  // The slice's link; empty (both kNone) except for device activity.
  const DeviceLink& Link(uint32_t slice) const;
  // Device activity slices attributed to a host op slice (the op's direct device activity), in
  // slice order. Valid while the trace is.
  std::span<const uint32_t> DeviceActivityOf(uint32_t op_slice) const;
  std::string ArgsJson(uint32_t args) const;  // "{}" for kNone
  // The value text of one arg ("7", "\"aten::mul\"", "[[1, 2]]"), or nullopt.
  std::optional<std::string> FindArg(uint32_t args, std::string_view key) const;

  TraceMetadata& metadata() { return metadata_; }
  const TraceMetadata& metadata() const { return metadata_; }
  bool HasDeviceActivity() const;
  // Approximate bytes held, for memory reports.
  size_t MemoryBytes() const;

 private:
  // Finalize's steps, in order (trace_finalize.cc).
  void SortSlicesByTrack();
  void NestSlices(int threads);
  void NestTracks(uint32_t first, uint32_t last);  // tracks [first, last)
  void BindFlowEndpoints(int threads);
  void LinkDeviceActivity(int threads);
  void SortInstantsAndCounters();
  void IndexDeviceLinks(const std::vector<uint32_t>& linked, uint32_t op_links);

  StringTable strings_;
  std::vector<Process> processes_;
  std::vector<Track> tracks_;
  std::vector<Slice> slices_;
  std::vector<Instant> instants_;
  std::vector<CounterSample> counters_;
  std::vector<Flow> flows_;
  // What building and the queries keep besides the model itself: pending flow endpoints, the
  // per-track ranges, the device links, the arg store and the lookup indices (trace_storage.h).
  struct Storage;
  std::unique_ptr<Storage> storage_;
  TraceMetadata metadata_;
  bool finalized_ = false;
};

}  // namespace opscope

#endif  // OPSCOPE_TRACE_H_
