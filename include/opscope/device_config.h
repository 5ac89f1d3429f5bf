// What a profiling session asks of device backends: Neuron's profiler config (DeviceConfig, set
// as ProfilerOptions::device), and the hooks through which a backend reads it and is flushed when
// the session stops. Activity itself is reported through opscope/activity.h.
//
//   // In a backend, when a device execution starts:
//   if (const opscope::DeviceConfig* config = opscope::ActiveDeviceConfig()) {
//     record_engines = config->HasMode(opscope::ProfileMode::kDevice);
//   }
//   // Once, when the backend comes up:
//   int id = opscope::RegisterDeviceFlushHook([] { DrainQueues(); });
//
// Implemented in src/profiler. Thread safety: every function may be called from any thread.
#ifndef OPSCOPE_DEVICE_CONFIG_H_
#define OPSCOPE_DEVICE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opscope {

// Neuron's profile modes: DEVICE (engine-level device activity), RUNTIME (runtime calls and
// executions), CPU_UTIL and HOST_MEMORY (sampled from /proc into counter tracks).
enum class ProfileMode { kDevice, kRuntime, kCpuUtil, kHostMemory };

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

#endif  // OPSCOPE_DEVICE_CONFIG_H_
