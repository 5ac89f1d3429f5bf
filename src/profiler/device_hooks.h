// The profiler's side of the device hooks declared in opscope/device_config.h.
#ifndef OPSCOPE_SRC_PROFILER_DEVICE_HOOKS_H_
#define OPSCOPE_SRC_PROFILER_DEVICE_HOOKS_H_

#include <string>

#include "opscope/device_config.h"
#include "opscope/status.h"

namespace opscope::internal {

// Publishes the running session's device config (nullptr when it stops). `config` must stay
// valid until replaced.
void SetActiveDeviceConfig(const DeviceConfig* config);
// Runs every flush hook, each even when an earlier one failed; the failures come back joined in
// one kUnavailable status ("device flush hook failed: ...; device flush hook failed: ...").
Status RunDeviceFlushHooks();
// Sum over the in-flight queries.
uint64_t QueryDevicesInFlight();

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_DEVICE_HOOKS_H_
