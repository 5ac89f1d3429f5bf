// The simulated NeuronCore device: an asynchronous executor per NeuronCore that runs device
// programs (program.h) in the model's time, and records the activity the real Neuron runtime
// reports. Users reach it through tensors on the "neuron" backend and the free functions of
// opscope/neuron.h; the backend (backend.cc), the tests and the benchmarks drive it directly.
//
//   NeuronDevice& dev = DefaultDevice();
//   dev.Execute(/*core=*/0, std::move(program), opscope::CurrentOpCorrelation());  // returns at
//   once dev.Synchronize();  // waits until the device's modeled time has passed
//
// Thread safety: NeuronDevice's methods may be called from any thread.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_DEVICE_H_
#define OPSCOPE_SRC_DEVICE_NEURON_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "device/neuron/params.h"
#include "device/neuron/program.h"
#include "opscope/device.h"
#include "opscope/neuron.h"

namespace opscope::neuron {

// What activity the device records for the profiler, read from the running session's
// DeviceConfig at each Execute.
struct CaptureOptions {
  bool runtime = true;                  // nrta_execute_schedule + nc_exec_running
  bool device = true;                   // engine instructions and DMA (DEVICE mode)
  uint64_t core_mask = ~0ull;           // capture_enabled_for_nc; bit i = core i
  int64_t max_events_per_nc = 1000000;  // device ring buffer size per core
};

class NeuronDevice {
 public:
  explicit NeuronDevice(Params params);
  ~NeuronDevice();  // waits for queued work
  NeuronDevice(const NeuronDevice&) = delete;
  NeuronDevice& operator=(const NeuronDevice&) = delete;

  const Params& params() const;
  // Logical NeuronCores (num_cores / logical_core_size): the devices neuron:0..N-1.
  int num_cores() const;

  // Enqueues one execution of `program` on `core` and returns. `external_id` is the host op's
  // correlation (CurrentOpCorrelation()); activity is recorded only if a profiling session with
  // device activity is running, as its DeviceConfig asks. As the Neuron runtime's execution
  // queue, a core holds at most `max_inflight_executions` executions: when it is full the call
  // blocks until one finishes (except on the device's own worker threads, which never block).
  // Throws std::out_of_range for a bad core.
  void Execute(int core, Program program, uint64_t external_id);
  // Blocks until every queued execution has finished in the model's time (and its real result
  // is written) and every Defer() task has run. The host therefore waits as long as the device
  // is modeled to take. Throws std::runtime_error if an execution failed since the last call
  // (a throwing kernel or an invalid program), naming the core and the program.
  void Synchronize();
  // Executions enqueued but not finished in the model's time.
  int InFlight() const;
  // Hands the device events recorded so far (executions already finished) to the profiler and
  // reports ring-buffer overwrites. Returns the number of events overwritten since the last flush.
  uint64_t FlushActivity();

  // Runs `fn` on the core's worker after all work enqueued before it (no modeled time): frees
  // of memory that queued work may still read go through here. Bounded like Execute (a full
  // queue blocks the caller), so a loop of allocations cannot queue without limit.
  void Defer(int core, std::function<void()> fn);

  // Total executions and instructions modeled since construction.
  int64_t executions() const;
  int64_t instructions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process's device, created on first use from ParamsFromEnvironment(). ResetDefaultDevice
// replaces it (waits for the old one's work).
NeuronDevice& DefaultDevice();
void ResetDefaultDevice(const Params& params);

// RegisterNeuronBackend() (opscope/device.h) registers the default device as the PrivateUse1
// backend "neuron". Its BuildProgram lowers a compiled graph (ProgramGraph) into a
// NeuronDeviceProgram and its ExecuteProgram runs one.
// A multi-op program for DeviceBackend::ExecuteProgram: `program` describes the loop nests for
// the cost model (its `compute` is ignored) and `kernel` computes the outputs. The backend copies
// both, so the object need not outlive the call.
class NeuronDeviceProgram : public opscope::DeviceProgram {
 public:
  Program program;
  ProgramKernel kernel;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_DEVICE_H_
