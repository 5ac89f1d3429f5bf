// Profiler sessions: start/stop, the schedule, windows, delivery to on_trace_ready.
#include "opscope/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "opscope/export.h"
#include "profiler/chrome_trace.h"
#include "profiler/device_hooks.h"
#include "profiler/proc_sampler.h"
#include "profiler/trace_builder.h"
#include "trace/clock.h"
#include "trace/recorder.h"

namespace opscope {

// One recorded window: what runs between BeginRecording and EndRecording.
struct Profiler::Window {
  std::unique_ptr<internal::ProcSampler> sampler;
  uint64_t step_start_ticks = 0;
  int64_t step = 0;
  bool step_open = false;
};

namespace {

bool Has(const std::vector<ProfilerActivity>& v, ProfilerActivity a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

bool IsRecording(Schedule::Action a) {
  return a == Schedule::Action::kRecord || a == Schedule::Action::kRecordAndSave;
}

// <dir>/<host>_pid_<pid>/<timestamp>_<ms>/trace.json: one folder per window.
std::string DefaultOutputPath(const std::string& dir) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count() %
            1000;
  return ProfileRunDirectory(dir) + "_" + std::to_string(ms) + "/trace.json";
}

}  // namespace

Profiler::Profiler(ProfilerOptions options)
    : options_(std::move(options)), trace_(std::make_unique<Trace>()) {
  trace_->Finalize();
}

Profiler::~Profiler() {
  if (!running_) return;
  try {
    Stop();
  } catch (const std::exception& e) {
    last_error_ = e.what();
  }
}

Profiler::Scope::~Scope() {
  if (!p_.running()) return;
  try {
    p_.Stop();
  } catch (const std::exception& e) {
    // Destructors must not throw; the message stays readable through last_error().
    p_.last_error_ = e.what();
  }
}

void Profiler::Start() {
  if (running_) throw ProfilerError("Profiler::Start: this profiler is already running");
  if (options_.schedule) {
    const Schedule& s = *options_.schedule;
    if (s.skip_first < 0 || s.wait < 0 || s.warmup < 0 || s.active < 1 || s.repeat < 0) {
      throw ProfilerError("schedule: need skip_first, wait, warmup, repeat >= 0 and active >= 1");
    }
  }
  if (!options_.device.capture_enabled_for_nc.empty()) {
    ParseCoreList(options_.device.capture_enabled_for_nc);  // throws with position
  }
  if (options_.device.max_events_per_nc <= 0) {
    throw ProfilerError("max_events_per_nc must be positive (got " +
                        std::to_string(options_.device.max_events_per_nc) + ")");
  }
  if (internal::RecordingRunning()) {
    throw ProfilerError("Profiler::Start: another profiling session is recording in this process");
  }
  running_ = true;
  step_num_ = 0;
  pending_error_.clear();
  action_ = options_.schedule ? options_.schedule->At(0) : Schedule::Action::kRecord;
  try {
    Transition(Schedule::Action::kNone, action_);
  } catch (...) {
    running_ = false;
    action_ = Schedule::Action::kNone;
    throw;
  }
}

void Profiler::Stop() {
  if (!running_) throw ProfilerError("Profiler::Stop: the profiler is not running");
  // The last window is delivered whether or not the schedule reached its save step.
  if (window_ != nullptr) EndRecording(/*deliver=*/true);
  running_ = false;
  action_ = Schedule::Action::kNone;
  if (!pending_error_.empty()) {
    last_error_ = std::move(pending_error_);
    pending_error_.clear();
    throw ProfilerError(last_error_);
  }
}

void Profiler::step() {
  if (!running_) return;
  const Schedule::Action previous = action_;
  step_num_ += 1;
  if (window_ != nullptr) internal::AddTickPoint();
  action_ = options_.schedule ? options_.schedule->At(step_num_) : Schedule::Action::kRecord;
  if (window_ != nullptr && window_->step_open) {
    // Close ProfilerStep#N; the next one opens below if a window records step N+1.
    internal::RecordRange(InternName("ProfilerStep#" + std::to_string(window_->step)),
                          ActivityKind::kUserAnnotation, window_->step_start_ticks,
                          internal::RawTicks(), NewCorrelationId());
    window_->step_open = false;
  }
  Transition(previous, action_);
  if (window_ != nullptr && !window_->step_open && options_.schedule) {
    window_->step = step_num_;
    window_->step_open = true;
    window_->step_start_ticks = internal::RawTicks();
  }
  if (!pending_error_.empty()) {
    last_error_ = std::move(pending_error_);
    pending_error_.clear();
    throw ProfilerError(last_error_);
  }
}

void Profiler::Transition(Schedule::Action from, Schedule::Action to) {
  if (window_ != nullptr && (from == Schedule::Action::kRecordAndSave || !IsRecording(to))) {
    EndRecording(/*deliver=*/true);
  }
  if (IsRecording(to) && window_ == nullptr) BeginRecording();
}

void Profiler::BeginRecording() {
  auto window = std::make_unique<Window>();
  const bool device = Has(options_.activities, ProfilerActivity::kPrivateUse1);
  internal::RecorderConfig config;
  config.host = Has(options_.activities, ProfilerActivity::kCPU);
  config.record_shapes = options_.record_shapes;
  config.device = device;
  config.memory = options_.profile_memory;
  config.buffer_records = options_.thread_buffer_records;
  config.max_device_activities = options_.max_device_activities;
  config.max_events_per_device = options_.device.max_events_per_nc;
  config.keep_instructions = options_.device.HasMode(ProfileMode::kDevice);
  config.keep_runtime = options_.device.HasMode(ProfileMode::kRuntime) ||
                        options_.device.HasMode(ProfileMode::kDevice);
  if (!options_.device.capture_enabled_for_nc.empty()) {
    config.capture_devices = ParseCoreList(options_.device.capture_enabled_for_nc);
  }
  try {
    internal::StartRecording(config);
  } catch (const std::logic_error& e) {
    throw ProfilerError(std::string("Profiler::Start: ") + e.what());
  }
  // options_ outlives every window and never changes, so a backend thread that read the pointer
  // just before the session stopped still reads valid memory.
  if (device) internal::SetActiveDeviceConfig(&options_.device);
  const bool cpu_util = options_.device.HasMode(ProfileMode::kCpuUtil);
  const bool host_memory = options_.device.HasMode(ProfileMode::kHostMemory);
  if (cpu_util || host_memory) {
    window->sampler = std::make_unique<internal::ProcSampler>(cpu_util, host_memory,
                                                              options_.device.sample_period_ms);
  }
  if (options_.schedule) {
    window->step = step_num_;
    window->step_open = true;
    window->step_start_ticks = internal::RawTicks();
  }
  window_ = std::move(window);
}

void Profiler::EndRecording(bool deliver) {
  std::unique_ptr<Window> window = std::move(window_);
  if (window->step_open) {
    internal::RecordRange(InternName("ProfilerStep#" + std::to_string(window->step)),
                          ActivityKind::kUserAnnotation, window->step_start_ticks,
                          internal::RawTicks(), NewCorrelationId());
  }
  const bool device = Has(options_.activities, ProfilerActivity::kPrivateUse1);
  internal::TraceBuildOptions build;
  if (device && options_.device.flush_device_on_stop) {
    const Status st = internal::RunDeviceFlushHooks();
    if (!st.ok() && pending_error_.empty()) pending_error_ = st.message();
  }
  if (device) {
    build.extra_dropped.emplace_back("in_flight_at_stop", internal::QueryDevicesInFlight());
  }
  internal::SetActiveDeviceConfig(nullptr);
  if (window->sampler) window->sampler->Stop();
  internal::Recording recording = internal::StopRecording();
  if (window->sampler) build.counters = window->sampler->Take();
  build.correlate_device_time = options_.device.correlate_device_time;
  build.record_shapes = options_.record_shapes;
  build.with_flops = options_.with_flops;
  *trace_ = internal::BuildTrace(std::move(recording), std::move(build));
  if (deliver) Deliver();
}

void Profiler::Deliver() {
  if (options_.on_trace_ready) {
    try {
      options_.on_trace_ready(*this);
    } catch (const std::exception& e) {
      pending_error_ = std::string("on_trace_ready callback failed: ") + e.what() +
                       " (the trace is kept: read it with trace() or export it again)";
    } catch (...) {
      pending_error_ =
          "on_trace_ready callback failed with a non-standard exception "
          "(the trace is kept)";
    }
    return;
  }
  if (!options_.device.profile_output_dir.empty()) {
    std::string path = DefaultOutputPath(options_.device.profile_output_dir);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) {
      pending_error_ = "cannot create profile output directory '" +
                       std::filesystem::path(path).parent_path().string() + "': " + ec.message() +
                       " (the trace is kept: export it with export_chrome_trace)";
      return;
    }
    const Status st = WriteChromeTrace(*trace_, path);
    if (!st.ok()) {
      pending_error_ =
          st.message() + " (the trace is still held by this Profiler: export_chrome_trace)";
    }
  }
}

KeyAverages Profiler::key_averages(bool group_by_input_shape) const {
  return KeyAverages::FromTrace(*trace_, {.group_by_input_shape = group_by_input_shape});
}

void Profiler::export_chrome_trace(const std::string& path) const {
  const Status st = WriteChromeTrace(*trace_, path);
  if (!st.ok()) {
    throw ProfilerError(st.message());  // the trace stays here: the caller may export it again
  }
}

void Profiler::export_perfetto(const std::string& path) const {
  const Status st = WritePerfettoTrace(*trace_, path);
  if (!st.ok()) {
    throw ProfilerError(st.message());  // the trace stays here: the caller may export it again
  }
}

std::string ProfileRunDirectory(const std::string& dir) {
  // Leftovers of runs killed while exporting, anywhere in the layout (<host>_pid_<pid>/<time>/..).
  internal::RemoveStaleTempTraces(dir, 4);
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
  return dir + "/" + host + "_pid_" + std::to_string(getpid()) + "/" + stamp;
}

}  // namespace opscope
