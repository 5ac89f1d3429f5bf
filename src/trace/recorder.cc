// Recording sessions: per-thread buffers, the device-activity store, start and stop.
#include "trace/recorder.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "opscope/record.h"
#include "trace/thread_buffer.h"

namespace opscope {
namespace internal {

std::atomic<uint32_t> g_record_state{0};
std::atomic<uint64_t> g_generation{0};
thread_local ThreadBuffer* tl_buffer = nullptr;

namespace {

// Device activity of the running recording. A mutex is enough: backends report per execution
// (microseconds apart), not per instruction on a hot host path.
struct DeviceStore {
  std::vector<DeviceActivity> activities;
  std::vector<ClockSyncPoint> syncs;
  std::unordered_map<int32_t, int64_t> per_device;
  uint64_t dropped_capacity = 0;
  uint64_t dropped_per_core = 0;
};

struct RecorderState {
  std::mutex mu;  // guards everything below
  bool running = false;
  uint64_t last_generation = 0;
  RecorderConfig config;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // never shrinks
  DeviceStore device;
  uint64_t device_dropped_no_session = 0;
  std::vector<DeviceDescription> devices;
  std::vector<bool> capture;  // by device index; empty = all
  int64_t start_ns = 0;
  std::vector<TickPoint> tick_points;  // anchors for converting this recording's ticks
};

RecorderState& State() {
  static RecorderState* state = new RecorderState;  // never destroyed: threads may outlive main
  return *state;
}

// Marks the thread's buffer reusable when the thread exits.
struct BufferOwner {
  ThreadBuffer* buffer = nullptr;
  ~BufferOwner() {
    if (buffer != nullptr) buffer->owner_alive.store(false, std::memory_order_release);
    tl_buffer = nullptr;
  }
};
thread_local BufferOwner tl_owner;

void ResetForGeneration(ThreadBuffer* b, const RecorderConfig& config, uint64_t generation) {
  if (b->capacity != config.buffer_records) {
    b->records.reset(new Record[config.buffer_records]);  // default-init: pages stay untouched
    b->capacity = config.buffer_records;
  }
  uint32_t want_shapes = config.record_shapes ? config.shape_words : 0;
  if (want_shapes > b->shape_capacity) {
    b->shape_words.reset(new int64_t[want_shapes]);
    b->shape_capacity = want_shapes;
  }
  b->shape_used.store(0, std::memory_order_relaxed);
  b->size.store(0, std::memory_order_relaxed);
  b->dropped.store(0, std::memory_order_relaxed);
  b->shapes_dropped.store(0, std::memory_order_relaxed);
  b->tid = CurrentThreadId();
  b->generation.store(generation, std::memory_order_release);
}

bool DeviceCaptured(const RecorderState& s, int32_t device) {
  if (s.capture.empty()) return true;
  return device >= 0 && static_cast<size_t>(device) < s.capture.size() && s.capture[device];
}

}  // namespace

ThreadBuffer* AcquireThreadBuffer() {
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running) return nullptr;
  const uint64_t generation = s.last_generation;
  ThreadBuffer* b = tl_owner.buffer;
  if (b == nullptr) {
    for (auto& candidate : s.buffers) {
      if (!candidate->owner_alive.load(std::memory_order_acquire) &&
          candidate->generation.load(std::memory_order_relaxed) != generation) {
        b = candidate.get();
        b->owner_alive.store(true, std::memory_order_relaxed);
        break;
      }
    }
    if (b == nullptr) {
      s.buffers.push_back(std::make_unique<ThreadBuffer>());
      b = s.buffers.back().get();
    }
    tl_owner.buffer = b;
  }
  if (b->generation.load(std::memory_order_relaxed) != generation) {
    ResetForGeneration(b, s.config, generation);
  }
  tl_buffer = b;
  return b;
}

void StartRecording(const RecorderConfig& config) {
  RecorderState& s = State();
  TickClock::Process();  // calibrate before the first record, outside the session
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.running) {
    throw std::logic_error("a profiling session is already recording in this process");
  }
  s.config = config;
  s.device = DeviceStore{};
  s.capture.clear();
  for (int core : config.capture_devices) {
    if (core < 0) continue;
    if (static_cast<size_t>(core) >= s.capture.size()) s.capture.resize(core + 1, false);
    s.capture[core] = true;
  }
  s.running = true;
  s.tick_points.clear();
  s.tick_points.push_back(ReadTickPoint());
  s.start_ns = NowNs();
  s.last_generation += 1;
  g_generation.store(s.last_generation, std::memory_order_release);
  uint32_t state = 0;
  if (config.host) state |= kRecordHost;
  if (config.host && config.record_shapes) state |= kRecordShapes;
  if (config.device) state |= kRecordDevice;
  if (config.memory) state |= kRecordMemory;
  g_record_state.store(state, std::memory_order_release);
}

bool RecordingRunning() {
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.running;
}

Recording StopRecording() {
  RecorderState& s = State();
  g_record_state.store(0, std::memory_order_release);
  Recording out;
  out.stop_ns = NowNs();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running) return out;
  s.running = false;
  const uint64_t generation = s.last_generation;
  g_generation.store(0, std::memory_order_release);
  for (auto& b : s.buffers) {
    if (b->generation.load(std::memory_order_acquire) != generation) continue;
    ThreadRecords t;
    t.tid = b->tid;
    uint32_t n = b->size.load(std::memory_order_acquire);
    t.records.assign(b->records.get(), b->records.get() + n);
    uint32_t shape_used = b->shape_used.load(std::memory_order_relaxed);
    if (b->shape_capacity > 0 && shape_used > 0) {
      t.shape_words.assign(b->shape_words.get(),
                           b->shape_words.get() + std::min(shape_used, b->shape_capacity));
    }
    t.dropped = b->dropped.load(std::memory_order_relaxed);
    t.shapes_dropped = b->shapes_dropped.load(std::memory_order_relaxed);
    if (!t.records.empty() || t.dropped > 0) out.threads.push_back(std::move(t));
  }
  out.device = std::move(s.device.activities);
  out.syncs = std::move(s.device.syncs);
  out.device_dropped_capacity = s.device.dropped_capacity;
  out.device_dropped_per_core = s.device.dropped_per_core;
  out.device_dropped_no_session = s.device_dropped_no_session;
  s.device_dropped_no_session = 0;
  s.device = DeviceStore{};
  out.devices = s.devices;
  out.start_ns = s.start_ns;
  s.tick_points.push_back(ReadTickPoint());
  out.tick_clock = TickClock::FromPoints(std::move(s.tick_points));
  s.tick_points.clear();
  return out;
}

void AddTickPoint() {
  RecorderState& s = State();
  TickPoint p = ReadTickPoint();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.running && s.tick_points.size() < 1'000'000) s.tick_points.push_back(p);
}

void RecordRange(uint32_t name, ActivityKind kind, uint64_t start_ticks, uint64_t end_ticks,
                 uint64_t correlation) {
  if (!ProfilingActive()) return;
  ThreadBuffer* b = CurrentThreadBuffer();
  if (b == nullptr) return;
  b->Push(
      Record{start_ticks, end_ticks, Record::Pack(correlation, kind, RecordType::kRange), name, 0});
}

}  // namespace internal

bool DeviceActivityEnabled() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordDevice) != 0;
}

void ReportDeviceActivity(const DeviceActivity& activity) {
  using namespace internal;
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running || !s.config.device) {
    s.device_dropped_no_session += 1;
    return;
  }
  if (!DeviceCaptured(s, activity.device)) return;  // not asked for: not a loss
  const bool is_instruction = activity.kind == ActivityKind::kInstruction;
  if (is_instruction ? !s.config.keep_instructions : !s.config.keep_runtime) return;
  if (s.device.activities.size() >= s.config.max_device_activities) {
    s.device.dropped_capacity += 1;
    return;
  }
  int64_t& per_core = s.device.per_device[activity.device];
  if (activity.clock == ActivityClock::kDevice && per_core >= s.config.max_events_per_device) {
    s.device.dropped_per_core += 1;
    return;
  }
  if (activity.clock == ActivityClock::kDevice) per_core += 1;
  s.device.activities.push_back(activity);
}

void ReportDeviceEventsDropped(int32_t device, uint64_t count) {
  using namespace internal;
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running || !s.config.device || !DeviceCaptured(s, device)) return;
  s.device.dropped_per_core += count;
}

void ReportClockSync(const ClockSyncPoint& point) {
  using namespace internal;
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.running) return;
  s.device.syncs.push_back(point);
}

void RegisterDevice(const DeviceDescription& description) {
  using namespace internal;
  RecorderState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  for (auto& d : s.devices) {
    if (d.name == description.name) {
      d = description;
      return;
    }
  }
  s.devices.push_back(description);
}

}  // namespace opscope
