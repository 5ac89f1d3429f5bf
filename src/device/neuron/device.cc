// The simulated device: one in-order execution queue and worker thread per logical NeuronCore.
//
// Execute() stamps the work with the host op's correlation, reports the host-side runtime call
// (nrta_execute_schedule) and enqueues -- blocking while the core already holds
// max_inflight_executions, as the Neuron runtime's execution queue does. The core's worker
// computes the real result, lowers and schedules the program on the cost model, adds the
// execution's phases (program switch, launch, binding, eager dispatch, completion), and then waits
// until the host clock reaches the execution's modeled end (mapped from the device clock): only
// then is the execution finished, its device events (nc_exec_running, its phases, engine
// instructions) written to the core's ring buffer, and Synchronize() released. The host therefore
// sees the device take its modeled time.
#include "device/neuron/device.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>

#include "device/neuron/capture.h"
#include "device/neuron/device_clock.h"
#include "device/neuron/event_ring.h"
#include "device/neuron/instruction_graph.h"
#include "opscope/activity.h"

namespace opscope::neuron {
namespace {

// Set on the device's worker threads: work they enqueue (frees of tensors a kernel's closure
// owned) must never wait for their own queue to drain.
thread_local bool t_on_worker = false;
// Set while the profiler's stop hook drains the device: that wait is the profiler's, not the
// program's, and is not recorded as a synchronization.
thread_local bool t_in_profiler_flush = false;

// Defer() tasks a core may hold before the host blocks: frees and staged host writes are cheap,
// but a loop that only allocates could otherwise queue them without limit.
constexpr int kMaxDeferred = 4096;

struct Job {
  Program program;
  uint64_t external_id = 0;
  uint64_t correlation = 0;
  int64_t submit_host_ns = 0;
  CaptureOptions capture;
  bool record = false;
  std::function<void()> deferred;  // a Defer() task instead of an execution
};

}  // namespace

struct NeuronDevice::Impl {
  struct Core {
    int index = 0;
    std::mutex mu;
    std::condition_variable work_cv;
    std::deque<Job> queue;
    std::condition_variable space_cv;        // signalled when an execution or task finishes
    int queued_executions = 0;               // enqueued, not finished (guarded by mu)
    int queued_deferred = 0;                 // Defer() tasks not yet run (guarded by mu)
    int pending = 0;                         // executions enqueued and not finished
    int deferred = 0;                        // Defer() tasks not yet run (guarded by done_mu)
    int64_t free_at_ticks = INT64_MIN;       // device time at which the core is idle (see Run)
    std::unordered_set<std::string> loaded;  // programs already executed once
    std::atomic<bool> recorded{false};       // has run an execution a profiler recorded
    std::string last_program;                // worker-only: the program executed last
    EventRing ring;
    InstructionGraph graph;  // worker-only
    std::thread worker;
  };

  explicit Impl(Params p)
      : params(std::move(p)), clock(NowNs(), params.clock_offset_ns, params.clock_drift_ppm) {}

  void Run(Core* core);
  void RecordError(Core* core, const Job& job, const char* what) {
    std::lock_guard<std::mutex> lock(done_mu);
    if (async_error.empty()) {
      async_error = "neuron:" + std::to_string(core->index) + ": execution of '" +
                    job.program.name + "' failed on the device: " + what;
    }
  }
  // Waits until every core is idle (no executions, no deferred tasks).
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(done_mu);
    done_cv.wait(lock, [&] {
      for (auto& core : cores) {
        if (core->pending > 0 || core->deferred > 0) return false;
      }
      return true;
    });
  }
  void RecordSynchronize(int64_t start_ns, int64_t end_ns);
  void Finish(Core* core, Job& job, int64_t start_ticks, int64_t end_ticks,
              const std::array<int64_t, kNumExecPhases>& phases);
  void RecordDeviceEvents(Core* core, Job& job, int64_t start,
                          const std::array<int64_t, kNumExecPhases>& phases);
  // Waits (off the worker threads) until `core` has room under `limit` in *count.
  void WaitForRoom(Core* core, std::unique_lock<std::mutex>& lock, const int* count, int limit) {
    if (t_on_worker) return;
    core->space_cv.wait(lock, [&] { return *count < limit || stopping; });
  }

  Params params;
  DeviceClock clock;
  std::vector<std::unique_ptr<Core>> cores;
  std::mutex done_mu;
  std::condition_variable done_cv;
  std::string async_error;  // the first failure since the last Synchronize (guarded by done_mu)
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> executions{0};
  std::atomic<int64_t> instructions{0};
  std::pair<int, int> hooks_ids{-1, -1};
};

namespace {

// Pairs a host and a device clock reading for the profiler's ClockSync, and shows it in the
// trace as the runtime does: a `timestamp_sync_point` on the host thread (kOther: not an op).
void ReportSyncPoint(int core, int64_t host_ns, int64_t device_ticks) {
  ReportClockSync({core, host_ns, device_ticks});
  static const char* kSync = InternName("timestamp_sync_point");
  DeviceActivity a;
  a.kind = ActivityKind::kOther;
  a.clock = ActivityClock::kHost;
  a.name = kSync;
  a.device = core;
  a.start = host_ns;
  a.end = host_ns;
  a.host_tid = CurrentThreadId();
  a.args = "{\"device_ticks\": " + std::to_string(device_ticks) + "}";
  ReportDeviceActivity(a);
}

// Lanes (streams) of a logical NeuronCore: 0 the execution queue, 1 the execution's phases, then
// per physical core its four compute engines and its DMA queues.
int32_t Lane(const Instruction& ins, const Params& p) {
  const int32_t per_core = 4 + int32_t(p.dma_queues);
  const int32_t base = 2 + int32_t(ins.pcore) * per_core;
  return ins.engine == Engine::kDma ? base + 4 + ins.queue : base + int32_t(ins.engine);
}

std::vector<std::string> LaneNames(const Params& p) {
  std::vector<std::string> names = {"nc_exec (execution queue)", "execution phases"};
  const int pcores = int(p.logical_core_size);
  for (int c = 0; c < pcores; ++c) {
    const std::string suffix = c == 0 ? "" : " (physical core " + std::to_string(c) + ")";
    for (const char* e : {"TensorE", "VectorE", "ScalarE", "GpSimdE"}) {
      names.push_back(e + suffix);
    }
    for (int q = 0; q < int(p.dma_queues); ++q) {
      names.push_back("DMA queue " + std::to_string(q) + suffix);
    }
  }
  return names;
}

}  // namespace

void NeuronDevice::Impl::Run(Core* core) {
  t_on_worker = true;
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(core->mu);
      core->work_cv.wait(lock, [&] { return stopping || !core->queue.empty(); });
      if (core->queue.empty()) return;
      job = std::move(core->queue.front());
      core->queue.pop_front();
    }
    if (job.deferred) {
      job.deferred();
      job.deferred = nullptr;  // what it captured goes now, on this thread
      {
        std::lock_guard<std::mutex> lock(core->mu);
        --core->queued_deferred;
      }
      core->space_cv.notify_all();
      {
        std::lock_guard<std::mutex> done_lock(done_mu);
        --core->deferred;
      }
      done_cv.notify_all();
      continue;
    }
    // Errors here cannot reach the caller, who has moved on: like a device error they are kept
    // and thrown by the next Synchronize(), and the device stays usable.
    int64_t makespan = 0;
    try {
      if (job.program.compute) job.program.compute();
      core->graph.Lower(job.program, params);
      makespan = core->graph.Schedule(params);
    } catch (const std::exception& e) {
      RecordError(core, job, e.what());
      core->graph.Lower(Program(job.program.name), params);  // empty: the fixed phases only
    }
    EstimateOptions options;
    {
      std::lock_guard<std::mutex> lock(core->mu);
      options.first_execution = core->loaded.insert(job.program.name).second;
    }
    options.program_switch = !options.first_execution && core->last_program != job.program.name;
    core->last_program = job.program.name;
    const std::array<int64_t, kNumExecPhases> phases =
        ExecPhaseNs(job.program, params, options, makespan);
    int64_t total = 0;
    for (int64_t v : phases) total += v;
    // free_at_ticks starts at INT64_MIN, idle since forever whatever the clock's offset (from 0,
    // an offset below minus the host's uptime put the first execution's end days ahead).
    const int64_t start = std::max(core->free_at_ticks, clock.ToDevice(job.submit_host_ns));
    const int64_t end = start + total;
    core->free_at_ticks = end;
    executions.fetch_add(1, std::memory_order_relaxed);
    instructions.fetch_add(int64_t(core->graph.instructions().size()), std::memory_order_relaxed);
    // The device is busy until the modeled end: wait for it in host time. The worker reaches a
    // job once the previous one ended, so that is at most this execution's own length: never
    // longer, whatever the clock's parameters make of the conversion.
    const int64_t done_host = std::min<int64_t>(
        clock.ToHost(end), NowNs() + std::llround(double(total) / clock.rate()) + 1);
    for (int64_t now = NowNs(); now < done_host && !stopping; now = NowNs()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(done_host - now));
    }
    Finish(core, job, start, end, phases);
  }
}

void NeuronDevice::Impl::RecordDeviceEvents(Core* core, Job& job, int64_t start,
                                            const std::array<int64_t, kNumExecPhases>& phases) {
  // Each phase of the execution is its own span on the "execution phases" lane.
  int64_t at = start, engines_at = start;
  for (int i = 0; i < kNumExecPhases; ++i) {
    if (i == int(ExecPhase::kEngines)) engines_at = at;
    if (phases[size_t(i)] <= 0) continue;
    DeviceActivity a;
    a.kind = ActivityKind::kInstruction;
    a.clock = ActivityClock::kDevice;
    a.name = InternName(ExecPhaseName(ExecPhase(i)));
    a.device = core->index;
    a.stream = 1;
    a.start = at;
    a.end = at + phases[size_t(i)];
    a.external_id = job.external_id;
    a.correlation = job.correlation;
    core->ring.Push(std::move(a));
    at += phases[size_t(i)];
  }
  for (const Instruction& ins : core->graph.instructions()) {
    DeviceActivity a;
    a.kind = ActivityKind::kInstruction;
    a.clock = ActivityClock::kDevice;
    a.name = ins.name;
    a.device = core->index;
    a.stream = Lane(ins, params);
    a.start = engines_at + ins.start_ns;
    a.end = engines_at + ins.end_ns;
    a.external_id = job.external_id;
    a.correlation = job.correlation;
    if (ins.bytes > 0) a.args = "{\"bytes\": " + std::to_string(ins.bytes) + "}";
    core->ring.Push(std::move(a));
  }
}

void NeuronDevice::Impl::Finish(Core* core, Job& job, int64_t start, int64_t end,
                                const std::array<int64_t, kNumExecPhases>& phases) {
  // Events of an execution that finishes after its session stopped are lost, as on the device.
  const bool record = job.record && DeviceActivityEnabled();
  {
    std::lock_guard<std::mutex> lock(core->mu);
    if (record) {
      if (core->ring.capacity() != size_t(job.capture.max_events_per_nc)) {
        core->ring.Reset(size_t(std::max<int64_t>(0, job.capture.max_events_per_nc)));
      }
      static const char* kExec = InternName("nc_exec_running");
      DeviceActivity exec;
      exec.kind = ActivityKind::kKernel;
      exec.clock = ActivityClock::kDevice;
      exec.name = kExec;
      exec.device = core->index;
      exec.stream = 0;
      exec.start = start;
      exec.end = end;
      exec.external_id = job.external_id;
      exec.correlation = job.correlation;
      exec.args = "{\"program\": \"" + job.program.name +
                  "\", \"instructions\": " + std::to_string(core->graph.instructions().size()) +
                  ", \"dma_bytes\": " + std::to_string(core->graph.dma_bytes()) +
                  ", \"eager\": " + (job.program.eager ? "true" : "false") + "}";
      core->ring.Push(std::move(exec));
      if (job.capture.device) RecordDeviceEvents(core, job, start, phases);
    }
  }
  // Not in flight any more (InFlight) before its queue slot is reused.
  {
    std::lock_guard<std::mutex> done_lock(done_mu);
    --core->pending;
  }
  {
    std::lock_guard<std::mutex> lock(core->mu);
    --core->queued_executions;
  }
  core->space_cv.notify_all();
  done_cv.notify_all();
}

// A synchronize as the profiler sees it, as Kineto records cudaDeviceSynchronize: the runtime call
// that waited on the host (the async API's completion wait, nrta_is_completed polled until the
// last scheduled execution completed, as one span) and, on each core that ran recorded work, a
// "Context Sync" device event over the same wait with the same correlation (and a clock sync
// point, so the core's clock maps), so analyses (the critical path) can tell what the host waited
// for.
void NeuronDevice::Impl::RecordSynchronize(int64_t start_ns, int64_t end_ns) {
  CaptureOptions capture;
  if (!DeviceActivityEnabled() || !CurrentCaptureOptions(&capture) || !capture.runtime) return;
  static const char* kWait = InternName("nrta_is_completed");
  static const char* kContextSync = InternName("Context Sync");
  const uint64_t correlation = NewCorrelationId();
  const uint64_t external_id = CurrentOpCorrelation();
  DeviceActivity rt;
  rt.kind = ActivityKind::kRuntime;
  rt.clock = ActivityClock::kHost;
  rt.name = kWait;
  rt.start = start_ns;
  rt.end = std::max(end_ns, start_ns + 1);
  rt.external_id = external_id;
  rt.correlation = correlation;
  rt.host_tid = CurrentThreadId();
  ReportDeviceActivity(rt);
  for (const auto& core : cores) {
    if (core->index >= 64 || !((capture.core_mask >> core->index) & 1) || !core->recorded) {
      continue;
    }
    ReportSyncPoint(core->index, end_ns, clock.ToDevice(end_ns));
    DeviceActivity s;
    s.kind = ActivityKind::kSync;
    s.clock = ActivityClock::kDevice;
    s.name = kContextSync;
    s.device = core->index;
    s.stream = -1;  // Kineto's Context Sync is on no stream (tid -1)
    s.start = clock.ToDevice(start_ns);
    s.end = clock.ToDevice(rt.end);
    s.external_id = external_id;
    s.correlation = correlation;
    s.args = "{\"sync_kind\": \"Context Sync\"}";
    ReportDeviceActivity(s);
  }
}

NeuronDevice::NeuronDevice(Params params) {
  ValidateParams(params);  // throws ParamsError before any thread starts
  impl_ = std::make_unique<Impl>(std::move(params));
  const Params& p = impl_->params;
  const int n = int(p.num_cores / p.logical_core_size);
  DeviceDescription desc;
  desc.name = "neuron";
  desc.process_name = "NeuronCore";
  desc.lane_names = LaneNames(p);
  RegisterDevice(desc);
  for (int i = 0; i < n; ++i) {
    auto core = std::make_unique<Impl::Core>();
    core->index = i;
    impl_->cores.push_back(std::move(core));
  }
  for (auto& core : impl_->cores) {
    core->worker = std::thread([this, c = core.get()] { impl_->Run(c); });
  }
  impl_->hooks_ids = RegisterProfilerHooks(
      [this] {
        t_in_profiler_flush = true;
        try {
          Synchronize();
        } catch (...) {
          t_in_profiler_flush = false;
          throw;
        }
        t_in_profiler_flush = false;
        FlushActivity();
      },
      [this] { return uint64_t(InFlight()); });
}

NeuronDevice::~NeuronDevice() {
  UnregisterProfilerHooks(impl_->hooks_ids);
  impl_->WaitIdle();
  impl_->stopping = true;
  for (auto& core : impl_->cores) {
    { std::lock_guard<std::mutex> lock(core->mu); }
    core->work_cv.notify_all();
    core->space_cv.notify_all();
    core->worker.join();
  }
}

const Params& NeuronDevice::params() const { return impl_->params; }
int NeuronDevice::num_cores() const { return int(impl_->cores.size()); }

void NeuronDevice::Execute(int core_index, Program program, uint64_t external_id) {
  if (core_index < 0 || core_index >= num_cores()) {
    throw std::out_of_range(
        "neuron:" + std::to_string(core_index) + " does not exist: the " + impl_->params.preset +
        " model has " + std::to_string(num_cores()) +
        " logical NeuronCores (neuron:0 .. neuron:" + std::to_string(num_cores() - 1) + ")");
  }
  Impl::Core* core = impl_->cores[core_index].get();
  const int64_t t0 = NowNs();
  Job job;
  job.program = std::move(program);
  job.external_id = external_id;
  job.record = CurrentCaptureOptions(&job.capture);
  job.record = job.record && (job.capture.runtime || job.capture.device) && core_index < 64 &&
               ((job.capture.core_mask >> core_index) & 1);
  if (job.record) {
    core->recorded = true;
    job.correlation = NewCorrelationId();
    ReportSyncPoint(core_index, t0, impl_->clock.ToDevice(t0));
  }
  const uint64_t correlation = job.correlation;
  const bool record = job.record;
  const bool job_runtime = job.capture.runtime;
  {
    std::unique_lock<std::mutex> lock(core->mu);
    // The runtime's execution queue is bounded: a full one blocks the caller (the framework
    // retries a scheduling call that reports the queue full).
    impl_->WaitForRoom(core, lock, &core->queued_executions,
                       int(impl_->params.max_inflight_executions));
    ++core->queued_executions;
    {
      std::lock_guard<std::mutex> done_lock(impl_->done_mu);
      ++core->pending;
    }
    // The device can start only once the runtime call has handed the work over.
    job.submit_host_ns = NowNs();
    core->queue.push_back(std::move(job));
  }
  core->work_cv.notify_one();
  if (record && job_runtime) {
    static const char* kRuntime = InternName("nrta_execute_schedule");
    DeviceActivity a;
    a.kind = ActivityKind::kRuntime;
    a.clock = ActivityClock::kHost;
    a.name = kRuntime;
    a.device = core_index;
    a.start = t0;
    a.end = std::max(NowNs(), t0 + 1);
    a.external_id = external_id;
    a.correlation = correlation;
    a.host_tid = CurrentThreadId();
    ReportDeviceActivity(a);
  }
}

void NeuronDevice::Synchronize() {
  const int64_t t0 = NowNs();
  impl_->WaitIdle();
  const int64_t t1 = NowNs();
  // As the Neuron runtime does, a synchronize reads the cores' finished events out (before its
  // own record, so a full per-core buffer keeps the executions and drops the sync event).
  FlushActivity();
  if (!t_in_profiler_flush) impl_->RecordSynchronize(t0, t1);
  std::string error;
  {
    std::lock_guard<std::mutex> lock(impl_->done_mu);
    error.swap(impl_->async_error);
  }
  if (!error.empty()) throw std::runtime_error(error);
}

void NeuronDevice::Defer(int core_index, std::function<void()> fn) {
  if (core_index < 0 || core_index >= num_cores()) {
    throw std::out_of_range("neuron:" + std::to_string(core_index) + " does not exist");
  }
  Impl::Core* core = impl_->cores[core_index].get();
  Job job;
  job.deferred = std::move(fn);
  {
    std::unique_lock<std::mutex> lock(core->mu);
    impl_->WaitForRoom(core, lock, &core->queued_deferred, kMaxDeferred);
    ++core->queued_deferred;
    {
      std::lock_guard<std::mutex> done_lock(impl_->done_mu);
      ++core->deferred;
    }
    core->queue.push_back(std::move(job));
  }
  core->work_cv.notify_one();
}

int NeuronDevice::InFlight() const {
  std::lock_guard<std::mutex> lock(impl_->done_mu);
  int n = 0;
  for (auto& core : impl_->cores) n += core->pending;
  return n;
}

uint64_t NeuronDevice::FlushActivity() {
  uint64_t dropped_total = 0;
  std::vector<DeviceActivity> events;
  for (auto& core : impl_->cores) {
    events.clear();
    uint64_t dropped;
    {
      std::lock_guard<std::mutex> lock(core->mu);
      dropped = core->ring.Drain(&events);
    }
    if (events.empty() && dropped == 0) continue;
    const int64_t now = NowNs();
    ReportSyncPoint(core->index, now, impl_->clock.ToDevice(now));
    for (const auto& e : events) ReportDeviceActivity(e);
    if (dropped > 0) ReportDroppedDeviceEvents(core->index, dropped);
    dropped_total += dropped;
  }
  return dropped_total;
}

int64_t NeuronDevice::executions() const { return impl_->executions.load(); }
int64_t NeuronDevice::instructions() const { return impl_->instructions.load(); }

}  // namespace opscope::neuron
