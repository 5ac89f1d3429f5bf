// The record path's internals: fixed-size records, per-thread buffers, and the session-level
// store of device activity. The profiler (src/profiler) starts and stops recording here and
// turns what it collects into a Trace.
//
// Buffers: each thread that records gets a ThreadBuffer the first time it records in a
// session (a lock, once). The owner thread is its only writer; it publishes each record with a
// release store of `size`. StopRecording() reads every buffer of the session after clearing the
// record state. Buffers are never freed while the process runs: a late writer that saw the old
// state still writes into valid memory, and the buffer of an exited thread is reused by the next
// new thread once its records are collected.
#ifndef OPSCOPE_SRC_TRACE_RECORDER_H_
#define OPSCOPE_SRC_TRACE_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "opscope/activity.h"
#include "opscope/trace.h"
#include "trace/clock.h"

namespace opscope::internal {

// kMemory is followed by its kMemoryTotals record in the same buffer (pushed together):
//   kMemory:       start_ticks = time, end_ticks = Addr, name = Device Type, shapes = Device Id;
//   kMemoryTotals: start_ticks = Bytes, end_ticks = Total Allocated, name | shapes << 32 = Total
//                  Reserved (all int64 bits).
enum class RecordType : uint8_t {
  kRange = 0,
  kInstant = 1,
  kCounter = 2,
  kMemory = 3,
  kMemoryTotals = 4
};

// One host record. 32 bytes. Times are RawTicks().
struct Record {
  uint64_t start_ticks;
  uint64_t end_ticks;  // kCounter: the bits of the double value
  // Bits 0-47: correlation id (External id); 48-55: ActivityKind; 56-63: RecordType.
  uint64_t packed;
  uint32_t name;    // InternName id
  uint32_t shapes;  // 1 + word offset of the input shapes in the thread's shape arena; 0 = none

  static uint64_t Pack(uint64_t correlation, ActivityKind kind, RecordType type) {
    return (correlation & kCorrelationMask) | (static_cast<uint64_t>(kind) << 48) |
           (static_cast<uint64_t>(type) << 56);
  }
  uint64_t correlation() const { return packed & kCorrelationMask; }
  ActivityKind kind() const { return static_cast<ActivityKind>((packed >> 48) & 0xff); }
  RecordType type() const { return static_cast<RecordType>(packed >> 56); }
  static constexpr uint64_t kCorrelationMask = (1ull << 48) - 1;
};
static_assert(sizeof(Record) == 32, "Record is a fixed-size POD; keep it at 32 bytes");

struct RecorderConfig {
  bool host = true;
  bool record_shapes = false;
  bool device = false;
  bool memory = false;  // profile_memory: allocators report through RecordMemoryUsage
  uint32_t buffer_records = 1u << 20;  // per thread
  uint32_t shape_words = 1u << 20;     // per thread, when record_shapes
  uint64_t max_device_activities = 4'000'000;
  int64_t max_events_per_device = 1'000'000;
  bool keep_instructions = true;     // DEVICE mode
  bool keep_runtime = true;          // RUNTIME mode (runtime calls and executions)
  std::vector<int> capture_devices;  // empty = all
};

// What one thread recorded in the session.
struct ThreadRecords {
  uint64_t tid = 0;
  std::vector<Record> records;
  std::vector<int64_t> shape_words;  // see EncodeShapes in record_scope.cc
  uint64_t dropped = 0;              // records lost to a full buffer
  uint64_t shapes_dropped = 0;       // ops recorded without shapes (arena full)
};

struct Recording {
  std::vector<ThreadRecords> threads;
  std::vector<DeviceActivity> device;
  std::vector<ClockSyncPoint> syncs;
  std::vector<DeviceDescription> devices;  // registered backends, in registration order
  uint64_t device_dropped_capacity = 0;    // over max_device_activities
  uint64_t device_dropped_per_core = 0;    // over max_events_per_device
  uint64_t device_dropped_no_session = 0;  // reported while nothing recorded (since last stop)
  TickClock tick_clock;                    // ticks -> NowNs()
  int64_t start_ns = 0;                    // NowNs() at start
  int64_t stop_ns = 0;
};

// Begins recording; throws std::logic_error if a recording is already running.
void StartRecording(const RecorderConfig& config);
// Ends recording and hands over everything recorded since StartRecording.
Recording StopRecording();
bool RecordingRunning();

// Reads the tick and ns clocks side by side and keeps the pair as an anchor for converting this
// recording's ticks (see TickClock). The profiler calls it at each step; ~100 ns and a lock.
void AddTickPoint();

// Appends one complete range to the calling thread's buffer (used by the profiler for
// ProfilerStep#N ranges). No-op when not recording.
void RecordRange(uint32_t name, ActivityKind kind, uint64_t start_ticks, uint64_t end_ticks,
                 uint64_t correlation);

// Decodes the shapes stored at `offset` (Record::shapes - 1) as PyTorch prints Input Dims:
// "[[2, 3], [], [4]]".
std::string DecodeShapes(const std::vector<int64_t>& words, uint32_t offset);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_TRACE_RECORDER_H_
