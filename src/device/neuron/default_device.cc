// The process's default Neuron device and torch.neuron-style free functions.
#include <memory>
#include <mutex>

#include "device/neuron/device.h"
#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

std::mutex& DefaultMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::unique_ptr<NeuronDevice>& DefaultSlot() {
  static auto* slot = new std::unique_ptr<NeuronDevice>();
  return *slot;
}

}  // namespace

NeuronDevice& DefaultDevice() {
  std::lock_guard<std::mutex> lock(DefaultMutex());
  auto& slot = DefaultSlot();
  if (!slot) slot = std::make_unique<NeuronDevice>(ParamsFromEnvironment());
  return *slot;
}

void ResetDefaultDevice(const Params& params) {
  std::lock_guard<std::mutex> lock(DefaultMutex());
  auto& slot = DefaultSlot();
  slot.reset();  // waits for the old device's work
  slot = std::make_unique<NeuronDevice>(params);
}

void ResetDefaultDevice(const ModelConfig& config) { ResetDefaultDevice(ParamsOf(config)); }

ModelConfig DefaultDeviceConfig() { return ConfigOf(DefaultDevice().params()); }

void synchronize() { DefaultDevice().Synchronize(); }
int InFlightExecutions() { return DefaultDevice().InFlight(); }

}  // namespace opscope::neuron
