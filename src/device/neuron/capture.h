// What the running profiling session wants from the device (the profiler's DeviceConfig: modes,
// capture_enabled_for_nc, max_events_per_nc), and the hooks the session calls at stop.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_
#define OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "device/neuron/device.h"

namespace opscope::neuron {

// Fills `options` from the active session's device config; returns false when no session
// collects device activity (then nothing is recorded).
bool CurrentCaptureOptions(CaptureOptions* options);

// Tells the session that `count` device events of `core` were overwritten in its ring buffer.
void ReportDroppedDeviceEvents(int core, uint64_t count);

// Registers the flush-on-stop hook and the in-flight query with the profiler; returns the ids
// for UnregisterProfilerHooks.
std::pair<int, int> RegisterProfilerHooks(std::function<void()> flush,
                                          std::function<uint64_t()> in_flight);
void UnregisterProfilerHooks(std::pair<int, int> ids);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_
