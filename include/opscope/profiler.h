// The profiler: record host ops and device activity, then read them as torch.profiler would.
//
//   opscope::Profiler prof({.activities = {opscope::ProfilerActivity::kCPU,
//                                          opscope::ProfilerActivity::kPrivateUse1},
//                           .record_shapes = true});
//   prof.Start();
//   {
//     OPSCOPE_SCOPE("my_op");                       // host op range; free when compiled out
//     opscope::RecordFunction fn("block " + name);  // user annotation, any name
//   }
//   prof.Stop();
//   std::cout << prof.key_averages().Table("self_cpu_time_total", 10);
//   prof.export_chrome_trace("trace.json.gz");
//
// Record path: fixed-size records go into per-thread buffers with no lock, no allocation and no
// formatting; a full buffer drops and counts (the count reaches the trace metadata and the
// table). Session methods are not thread-safe (one thread drives a Profiler); the record
// functions may be called from any thread at any time. At most one session records at a time.
#ifndef OPSCOPE_PROFILER_H_
#define OPSCOPE_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/activity.h"
#include "opscope/key_averages.h"
#include "opscope/trace.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// Record API (cheap; safe from any thread).

// Interns a name for records; thread-safe slow path (a lock and a hash lookup). Ids are stable
// for the process lifetime; callers cache them.
uint32_t InternName(std::string_view name);
// The text of an interned name.
std::string_view NameOf(uint32_t name_id);

// One argument's shape for record_shapes. `dims` is read during the call only.
struct InputShape {
  const int64_t* dims = nullptr;
  uint32_t ndim = 0;
  bool is_tensor = true;  // non-tensor arguments print as "[]"
};

namespace internal {
// Bits of the record state: what the running session collects (0 = no session).
inline constexpr uint32_t kRecordHost = 1;
inline constexpr uint32_t kRecordShapes = 2;
inline constexpr uint32_t kRecordDevice = 4;
extern std::atomic<uint32_t> g_record_state;
}  // namespace internal

// True while a session records host activity: one relaxed atomic load.
inline bool ProfilingActive() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordHost) != 0;
}
// True while a session records with record_shapes.
inline bool RecordShapesEnabled() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordShapes) != 0;
}

// RAII host op range. Kind kCpuOp by default. While open, CurrentOpCorrelation() on this thread
// returns correlation(). Not copyable or movable: it must close on the thread that opened it.
class RecordScope {
 public:
  explicit RecordScope(uint32_t name_id, ActivityKind kind = ActivityKind::kCpuOp) {
    if (ProfilingActive()) Begin(name_id, kind, {});
  }
  RecordScope(uint32_t name_id, std::span<const InputShape> shapes) {
    if (ProfilingActive()) Begin(name_id, ActivityKind::kCpuOp, shapes);
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;
  ~RecordScope() {
    if (correlation_ != 0) End();
  }
  // This op's correlation id (Kineto "External id"); 0 when not recording.
  uint64_t correlation() const { return correlation_; }

 private:
  void Begin(uint32_t name_id, ActivityKind kind, std::span<const InputShape> shapes);
  void End();

  uint64_t correlation_ = 0;
  uint64_t previous_ = 0;  // the enclosing op's correlation, restored on close
  uint64_t start_ticks_ = 0;
  uint32_t name_ = 0;
  uint32_t shapes_ = 0;
  uint8_t kind_ = 0;
};

// record_function("name"): a user annotation range. The name may be built at run time; it is
// interned when (and only when) a session records.
class RecordFunction {
 public:
  explicit RecordFunction(std::string_view name);
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;
  ~RecordFunction() = default;
  uint64_t correlation() const { return scope_ ? scope_->correlation() : 0; }

 private:
  std::optional<RecordScope> scope_;  // engaged only while profiling; no heap allocation
};

// An instant event on the calling thread ("i" phase, thread scope).
void RecordInstant(uint32_t name_id);
// One sample of a counter series named `name_id` ("C" phase).
void RecordCounter(uint32_t name_id, double value);

#define OPSCOPE_CONCAT_INNER_(a, b) a##b
#define OPSCOPE_CONCAT_(a, b) OPSCOPE_CONCAT_INNER_(a, b)
#ifdef OPSCOPE_DISABLE_PROFILING
#define OPSCOPE_SCOPE(name_literal) \
  do {                              \
  } while (false)
#else
// A host op range named by a string literal, open until the end of the enclosing block.
#define OPSCOPE_SCOPE(name_literal)                                \
  static const uint32_t OPSCOPE_CONCAT_(opscope_name_, __LINE__) = \
      ::opscope::InternName(name_literal);                         \
  ::opscope::RecordScope OPSCOPE_CONCAT_(opscope_scope_,           \
                                         __LINE__)(OPSCOPE_CONCAT_(opscope_name_, __LINE__))
#endif

// ---------------------------------------------------------------------------------------------
// Session API (torch.profiler's surface).

enum class ProfilerActivity { kCPU, kPrivateUse1 };
// Neuron's profile modes: DEVICE (engine-level device activity), RUNTIME (runtime calls and
// executions), CPU_UTIL and HOST_MEMORY (sampled from /proc into counter tracks).
enum class ProfileMode { kDevice, kRuntime, kCpuUtil, kHostMemory };

// Thrown by session methods: bad configuration, misuse (Start twice), unwritable output,
// a failing on_trace_ready. Recorded data is never discarded when it is thrown.
class ProfilerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a core list such as "0,1,2-5" into sorted unique indices. Throws ProfilerError naming
// the offending text and its position on bad input ("3-1", "x", "1,,2").
std::vector<int> ParseCoreList(std::string_view spec);

// Mirrors torch_neuronx's NeuronConfig.
struct DeviceConfig {
  std::vector<ProfileMode> modes = {ProfileMode::kDevice, ProfileMode::kRuntime};
  // When set and no on_trace_ready is given, each finished window is written to
  // <dir>/<host>_pid_<pid>/<timestamp>/trace.json.
  std::string profile_output_dir;
  bool correlate_device_time = true;      // map device clocks to host time with ClockSync
  int64_t max_events_per_nc = 1'000'000;  // device activities kept per NeuronCore
  std::string capture_enabled_for_nc;     // "" = every core; else ParseCoreList syntax
  int sample_period_ms = 10;              // CPU_UTIL / HOST_MEMORY sampling period
  bool flush_device_on_stop = true;       // run device flush hooks before collecting

  bool HasMode(ProfileMode mode) const;
  // True when `core` is in capture_enabled_for_nc (or the list is empty). Scans the text
  // without allocating; a list that does not parse (Start() rejects it) enables every core.
  bool CaptureEnabledFor(int core) const;
};

// torch.profiler.schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup`
// steps, and `active` recorded steps; `repeat` cycles (0 = forever).
struct Schedule {
  int skip_first = 0;
  int wait = 0;
  int warmup = 0;
  int active = 1;
  int repeat = 0;

  enum class Action { kNone, kWarmup, kRecord, kRecordAndSave };
  Action At(int64_t step) const;
};

class Profiler;
using TraceReadyCallback = std::function<void(Profiler&)>;

struct ProfilerOptions {
  std::vector<ProfilerActivity> activities = {ProfilerActivity::kCPU};
  bool record_shapes = false;
  // Without a schedule, Start() records until Stop().
  std::optional<Schedule> schedule{};
  TraceReadyCallback on_trace_ready{};
  DeviceConfig device{};
  // Records each thread may hold per window; above it records are dropped and counted.
  uint32_t thread_buffer_records = 1u << 20;
  // Device activity records per window, over all devices (in addition to max_events_per_nc).
  uint64_t max_device_activities = 4'000'000;
};

class Profiler {
 public:
  explicit Profiler(ProfilerOptions options = {});
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;
  // Stops a running session; errors are kept in last_error(), never thrown.
  ~Profiler();

  // Begins the session (recording at once, or per the schedule). Throws ProfilerError if
  // another session is running or the device config is invalid.
  void Start();
  // Ends the session; a window being recorded is finished and handed to on_trace_ready.
  // Throws ProfilerError if on_trace_ready threw (the trace is kept).
  void Stop();
  // Advances the schedule by one step (torch's prof.step()).
  void step();
  bool running() const { return running_; }
  int64_t step_num() const { return step_num_; }

  // The finalized trace of the last recorded window (empty before the first).
  const Trace& trace() const { return *trace_; }
  KeyAverages key_averages(bool group_by_input_shape = false) const;
  // Kineto JSON; ".gz" suffix = gzip. Atomic (temp file + rename). Throws ProfilerError naming
  // the path on failure; the trace is kept, so the call can be retried.
  void export_chrome_trace(const std::string& path) const;
  // The message of the last error swallowed by the destructor or a scope, or "".
  const std::string& last_error() const { return last_error_; }

  // RAII form: starts now, stops when destroyed.
  class Scope {
   public:
    explicit Scope(Profiler& p) : p_(p) { p_.Start(); }
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Profiler& p_;
  };

 private:
  struct Window;
  void BeginRecording();
  void EndRecording(bool deliver);
  void Deliver();
  void Transition(Schedule::Action from, Schedule::Action to);

  ProfilerOptions options_;
  std::unique_ptr<Trace> trace_;
  std::unique_ptr<Window> window_;
  Schedule::Action action_ = Schedule::Action::kNone;
  bool running_ = false;
  int64_t step_num_ = 0;
  std::string last_error_;
  std::string pending_error_;
};

// ---------------------------------------------------------------------------------------------
// Hooks for device backends (see activity.h for reporting activity).

// The device config of the running session, or nullptr when none records device activity.
// Valid until the session stops; read it when a device execution starts.
const DeviceConfig* ActiveDeviceConfig();
// Called (on the thread calling Stop) before device activity is collected, when
// flush_device_on_stop is set: a backend synchronizes and reports what it still holds. Hooks
// must not start or stop sessions. Returns an id for UnregisterDeviceHooks.
int RegisterDeviceFlushHook(std::function<void()> hook);
// Asked at stop (after the flush hooks): how many device executions were still in flight.
// The sum is stored in the trace metadata as dropped reason "in_flight_at_stop".
int RegisterDeviceInFlightQuery(std::function<uint64_t()> query);
void UnregisterDeviceHooks(int id);

}  // namespace opscope

#endif  // OPSCOPE_PROFILER_H_
