// What the running profiling session wants from the device, read from the profiler's device
// config (modes, capture_enabled_for_nc, max_events_per_nc), and how overwritten events reach it.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_
#define OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_

#include <cstdint>
#include <string_view>

#include "opscope/neuron.h"

namespace opscope::neuron {

// Fills `options` from the active session's device config; returns false when no session
// collects device activity (then nothing is recorded).
bool CurrentCaptureOptions(CaptureOptions* options);

// Tells the session that `count` device events of `core` were overwritten in its ring buffer.
void ReportDroppedDeviceEvents(int core, uint64_t count);

// Parses Neuron's capture_enabled_for_nc syntax ("0,1,2-5"; empty = all) into a core mask.
// Throws std::invalid_argument naming the bad part.
uint64_t ParseCoreList(std::string_view text);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_CAPTURE_H_
