// The profiler session: record host ops and device activity, then read them as torch.profiler
// would.
//
//   opscope::Profiler prof({.activities = {opscope::ProfilerActivity::kCPU,
//                                          opscope::ProfilerActivity::kPrivateUse1},
//                           .record_shapes = true,
//                           .profile_memory = true});
//   prof.Start();
//   {
//     OPSCOPE_SCOPE("my_op");                       // host op range; free when compiled out
//     opscope::RecordFunction fn("block " + name);  // user annotation, any name
//   }
//   prof.Stop();
//   std::cout << prof.key_averages().Table("self_cpu_time_total", 10);
//   prof.export_chrome_trace("trace.json.gz");
//
// The record calls (OPSCOPE_SCOPE, RecordScope, RecordFunction, ...) are declared in
// opscope/record.h, what a device backend reads of the session in opscope/device_config.h; this
// header includes both. Session methods are not thread-safe (one thread drives a Profiler); the
// record functions may be called from any thread at any time. At most one session records at a
// time.
#ifndef OPSCOPE_PROFILER_H_
#define OPSCOPE_PROFILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/activity.h"
#include "opscope/device_config.h"
#include "opscope/key_averages.h"
#include "opscope/record.h"
#include "opscope/trace.h"

namespace opscope {

enum class ProfilerActivity { kCPU, kPrivateUse1 };

// Thrown by session methods: bad configuration, misuse (Start twice), unwritable output,
// a failing on_trace_ready. Recorded data is never discarded when it is thrown.
class ProfilerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a core list such as "0,1,2-5" into sorted unique indices. Throws ProfilerError naming
// the offending text and its position on bad input ("3-1", "x", "1,,2").
std::vector<int> ParseCoreList(std::string_view spec);

// <dir>/<host>_pid_<pid>/<YYYYmmdd_HHMMSS>: the folder Neuron's profiler writes one run's
// profiles under (local time, this process's pid). Also removes the temporary trace files that
// runs killed while exporting left under `dir` (their process is gone).
std::string ProfileRunDirectory(const std::string& dir);

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
  // with_flops: key_averages gets the "Total FLOPs" column, counted from the recorded shapes as
  // PyTorch counts them (mm, addmm, bmm, baddbmm, mul, add, conv2d); needs record_shapes.
  bool with_flops = false;
  // profile_memory: every allocation and free by the device allocators (the cpu backend's and each
  // NeuronCore's) becomes a "[memory]" instant on the thread that made it, with "Device Type",
  // "Device Id", "Addr", "Bytes" (< 0 for a free), "Total Allocated" and "Total Reserved" as
  // Kineto writes them; key_averages gets the CPU Mem / Self CPU Mem / NEURON Mem / Self NEURON
  // Mem columns. Off, an allocation costs one predictable branch more.
  bool profile_memory = false;
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
  // Kineto JSON; ".gz" suffix = gzip. Atomic (temp file + rename; temp files that killed
  // processes left in the folder are removed). Throws ProfilerError naming the path, the reason
  // (a full disk, `ulimit -f`) and how much was written; the trace stays in the Profiler, so the
  // call can be retried.
  void export_chrome_trace(const std::string& path) const;
  // Perfetto protobuf (.pftrace; ".gz" suffix = gzip), written as export_chrome_trace writes: what
  // Perfetto UI opens fastest, a fraction of the JSON's size, and read back by opscope to the same
  // trace (WritePerfettoTrace, opscope/export.h). Throws ProfilerError as export_chrome_trace does.
  void export_perfetto(const std::string& path) const;
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

}  // namespace opscope

#endif  // OPSCOPE_PROFILER_H_
