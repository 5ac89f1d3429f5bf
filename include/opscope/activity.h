// The device-activity interface: how a device backend (the PrivateUse1 slot) tells the profiler
// what its runtime and hardware did.
//
// A backend reports three layers, each tied to the host op that caused it:
//   - runtime API calls on a host thread (nrta_execute_schedule), in the host clock;
//   - device executions (nc_exec_running) and engine-level activity (instructions, DMA), in the
//     device's own clock domain;
//   - clock sync points pairing a host timestamp with a device timestamp.
// The profiler maps device time to host time with ClockSync and links everything through
// `external_id` (the correlation id of the host op, from CurrentOpCorrelation()) and
// `correlation` (runtime call <-> device activity; becomes the ac2g flow id).
//
//   auto ext = opscope::CurrentOpCorrelation();          // on the dispatching host thread
//   opscope::DeviceActivity a;
//   a.kind = opscope::ActivityKind::kRuntime;
//   a.name = "nrta_execute_schedule";                     // static storage duration
//   a.external_id = ext; a.correlation = opscope::NewCorrelationId();
//   a.start = t0; a.end = t1; a.clock = opscope::ActivityClock::kHost;
//   opscope::ReportDeviceActivity(a);                     // no-op when nobody is profiling
//
// Thread safety: every function here may be called from any thread.
#ifndef OPSCOPE_ACTIVITY_H_
#define OPSCOPE_ACTIVITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/trace.h"

namespace opscope {

enum class ActivityClock : uint8_t {
  kHost,    // host monotonic nanoseconds (opscope::NowNs())
  kDevice,  // the device's own clock; mapped with the sync points the device reported
};

// One unit of device activity. Fixed-size; `name` and `detail` must have static storage duration
// or outlive the profiling session (backends use string literals or names they intern).
struct DeviceActivity {
  ActivityKind kind = ActivityKind::kKernel;
  ActivityClock clock = ActivityClock::kDevice;
  const char* name = "";
  int32_t device = 0;  // device index (NeuronCore id)
  int32_t stream = 0;  // lane within the device: queue, engine or DMA queue index
  int64_t start = 0;   // in `clock` units: ns for kHost, device ticks (ns) for kDevice
  int64_t end = 0;
  uint64_t external_id = 0;  // correlation id of the host op that caused it; 0 = unknown
  uint64_t correlation = 0;  // runtime call <-> device activity link; 0 = none
  uint64_t host_tid = 0;     // for kHost activity: the OS thread id it ran on
  // Optional extra args as a JSON object text ("{\"bytes\": 4096}"); empty for none.
  std::string args;
};

// A device clock reading paired with the host clock, read as close together as possible.
struct ClockSyncPoint {
  int32_t device = 0;
  int64_t host_ns = 0;
  int64_t device_ticks = 0;
};

// Describes a device backend to the profiler: its name upper-cased in tables ("NEURON"), its
// process and lane names in traces.
struct DeviceDescription {
  std::string name;                     // "neuron" (lower-case; tables upper-case it)
  std::string process_name;             // e.g. "NeuronCore 0" is built from this + device index
  std::vector<std::string> lane_names;  // names for stream indices (engines, queues)
};

// Host monotonic clock in nanoseconds: the clock every host timestamp in opscope uses.
int64_t NowNs();
// The OS thread id of the caller.
uint64_t CurrentThreadId();

// The correlation id of the innermost host op open on the calling thread, or 0 if none (or if
// profiling is off). Device backends stamp the work they enqueue with it.
uint64_t CurrentOpCorrelation();
// A fresh process-unique id for runtime <-> device links.
uint64_t NewCorrelationId();

// True when a profiling session that collects PrivateUse1 activity is running. Backends use it to
// skip building activity records nobody will read.
bool DeviceActivityEnabled();
// Hands activity to the running session (dropped and counted if none is running or its buffer
// is full; never blocks for long).
void ReportDeviceActivity(const DeviceActivity& activity);
void ReportClockSync(const ClockSyncPoint& point);
// A backend whose own per-core event buffer overwrote `count` events (Neuron's max_events_per_nc
// ring) reports the loss here; it is added to the session's per-core drop count.
void ReportDeviceEventsDropped(int32_t device, uint64_t count);
// A backend registers itself once (at startup or first use).
void RegisterDevice(const DeviceDescription& description);

// Fits device ticks to host nanoseconds from paired sync points: host = offset + (1 + drift) *
// device, by least squares over the points. With one point the drift is 0; with none, identity.
// offset_ns() is host - device at the first point's device time; drift is fitted only once the
// points span at least kMinDriftSpanTicks (before that, read jitter would dominate it).
class ClockSync {
 public:
  static constexpr int64_t kMinDriftSpanTicks = 1'000'000;
  void AddPoint(int64_t host_ns, int64_t device_ticks);
  // Refits from all points added so far.
  void Fit();
  int64_t ToHost(int64_t device_ticks) const;
  double offset_ns() const { return offset_ns_; }
  double drift() const { return drift_; }  // e.g. 1e-5 = device runs 10 ppm slow
  size_t num_points() const { return points_.size(); }

 private:
  std::vector<std::pair<int64_t, int64_t>> points_;  // (device, host)
  int64_t device_origin_ = 0;
  double offset_ns_ = 0;
  double drift_ = 0;
};

}  // namespace opscope

#endif  // OPSCOPE_ACTIVITY_H_
