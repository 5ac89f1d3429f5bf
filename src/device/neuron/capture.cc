// Bridges the device to the profiler's session config and stop hooks.
#include "device/neuron/capture.h"

#include "opscope/activity.h"
#include "opscope/device_config.h"

namespace opscope::neuron {

bool CurrentCaptureOptions(CaptureOptions* options) {
  *options = CaptureOptions{};
  const DeviceConfig* config = ActiveDeviceConfig();
  if (config == nullptr || !DeviceActivityEnabled()) return false;
  options->runtime = config->HasMode(ProfileMode::kRuntime);
  options->device = config->HasMode(ProfileMode::kDevice);
  options->max_events_per_nc = config->max_events_per_nc;
  options->core_mask = 0;
  for (int c = 0; c < 64; ++c) {
    if (config->CaptureEnabledFor(c)) options->core_mask |= 1ull << c;
  }
  return true;
}

void ReportDroppedDeviceEvents(int core, uint64_t count) { ReportDeviceEventsDropped(core, count); }

std::pair<int, int> RegisterProfilerHooks(std::function<void()> flush,
                                          std::function<uint64_t()> in_flight) {
  return {RegisterDeviceFlushHook(std::move(flush)),
          RegisterDeviceInFlightQuery(std::move(in_flight))};
}

void UnregisterProfilerHooks(std::pair<int, int> ids) {
  UnregisterDeviceHooks(ids.first);
  UnregisterDeviceHooks(ids.second);
}

}  // namespace opscope::neuron
