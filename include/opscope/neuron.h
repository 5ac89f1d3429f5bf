// The simulated AWS NeuronCore device: a cost model of the hardware, an asynchronous executor per
// NeuronCore, and the profiler activity the real Neuron runtime reports.
//
// Work reaches the device as a Program: a list of loop-nest ops over 2-D tiles, inputs and outputs
// in HBM (host memory stands in for it), intermediates in SBUF. An eager op is a program of one op;
// a fused op (aten::_fused_rms_norm) or a compiled graph is one program of several ops, executed
// once. docs/neuron-model.md documents every parameter and its source.
//
//   opscope::neuron::Program p("aten::mul");
//   int x = p.AddBuffer({"x", 256, 4096});
//   int y = p.AddBuffer({"y", 256, 4096});
//   p.AddOp({"tensor_tensor", opscope::neuron::OpClass::kElementwise,
//            opscope::neuron::Engine::kVector, {x, x}, y});
//   p.compute = [&] { /* the real result, computed on the host */ };
//   opscope::neuron::NeuronDevice& dev = opscope::neuron::DefaultDevice();
//   dev.Execute(/*core=*/0, std::move(p), opscope::CurrentOpCorrelation());  // returns at once
//   opscope::neuron::synchronize();  // waits until the device's modeled time has passed
//
// Thread safety: NeuronDevice's methods may be called from any thread. Program is a plain value.
#ifndef OPSCOPE_NEURON_H_
#define OPSCOPE_NEURON_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/device.h"

namespace opscope::neuron {

// ---- Model parameters --------------------------------------------------------------------------

// Every number the model uses. Presets come from public NeuronCore figures; any field can be
// overridden by name from a key=value file (the key is the field name).
struct Params {
  std::string preset = "trn1";
  double num_cores = 2;           // NeuronCores on the simulated chip
  double partitions = 128;        // SBUF partitions = rows per tile
  double free_tile_bytes = 8192;  // bytes per partition per tile along the free dimension
  double sbuf_bytes = 24.0 * 1024 * 1024;
  double hbm_gib = 16;  // device memory per core (the allocator's capacity)
  // Engines: clock, FP32 throughput (whole engine, TFLOPS), fixed cycles per instruction.
  double tensor_ghz = 2.8, tensor_fp32_tflops = 23, tensor_overhead_cycles = 64;
  double vector_ghz = 1.12, vector_fp32_tflops = 2.3, vector_overhead_cycles = 100;
  double scalar_ghz = 1.4, scalar_fp32_tflops = 2.9, scalar_overhead_cycles = 264;
  double gpsimd_ghz = 1.4, gpsimd_fp32_tflops = 0.36, gpsimd_overhead_cycles = 100;
  // Memory and DMA.
  double hbm_gbps = 410;       // per core (GB/s = bytes/ns)
  double dma_queues = 16;      // DMA engines per core, each an in-order queue
  double dma_queue_gbps = 17;  // per queue
  double dma_setup_ns = 1300;  // per transfer: descriptor + semaphore latency
  // Runtime: the fixed cost of one device execution (launch, semaphore and descriptor setup,
  // completion notification), the share of it spent before the engines start, and the one-time
  // library load of a program's first execution.
  double exec_fixed_us = 380;
  double exec_launch_fraction = 0.85;
  double first_exec_load_us = 1000;
  // The device clock domain: device_ticks = clock_offset_ns + host_ns * (1 + clock_drift_ppm/1e6).
  double clock_offset_ns = 5e11;
  double clock_drift_ppm = 25;
};

// Thrown for an unknown preset, an unknown key, or a malformed value; what() names the source
// (file and line) and the offending text.
class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "trn1" (NeuronCore-v2, the default) or "trn2" (NeuronCore-v3).
Params Preset(std::string_view name);
std::vector<std::string> PresetNames();
// Applies `key = value` lines ('#' starts a comment; `preset = trn2` first resets to a preset).
// `source` names the text in errors ("my.cfg").
void ApplyOverrides(std::string_view text, std::string_view source, Params* params);
void ApplyOverridesFile(const std::string& path, Params* params);
// The preset, then the file named by $OPSCOPE_NEURON_CONFIG when set.
Params ParamsFromEnvironment();
// All fields as `key = value` lines, in the file format ApplyOverrides reads.
std::string FormatParams(const Params& params);

// ---- Programs ----------------------------------------------------------------------------------

enum class Engine : uint8_t { kTensor, kVector, kScalar, kGpSimd, kDma };
inline constexpr int kNumEngines = 5;
const char* EngineName(Engine e);  // "TensorE", "VectorE", "ScalarE", "GpSimdE", "DMA"

enum class Memory : uint8_t {
  kHbm,   // program input or output: moved by DMA
  kSbuf,  // intermediate: lives in SBUF for the program's duration, never moved
};

// A buffer seen as [rows, cols]: rows map to partitions, cols to the free dimension. A buffer with
// cols == 1 holds one value per row; one with rows == 1 is shared by every row (broadcast).
struct Buffer {
  std::string name;
  int64_t rows = 1;
  int64_t cols = 1;
  int32_t elem_bytes = 4;
  Memory memory = Memory::kHbm;
};

enum class OpClass : uint8_t {
  kElementwise,  // out[r, c] = f(in_i[r or 0, c or 0]...); iteration space = the output
  kRowReduce,    // out[r, 0] = reduce over c of f(in_i[r, c]...); iteration space = input 0
  kMatmul,       // out[M, N] = in0[M, K] x in1[K, N] on TensorE
};

// One loop-nest op. `name` is the instruction name in traces ("tensor_tensor", "activation").
struct Op {
  std::string name;
  OpClass op_class = OpClass::kElementwise;
  Engine engine = Engine::kVector;
  std::vector<int> inputs;       // buffer indices
  int output = -1;               // buffer index
  double flops_per_element = 1;  // per element of the iteration space
};

struct Program {
  Program() = default;
  explicit Program(std::string n) : name(std::move(n)) {}
  int AddBuffer(Buffer b);
  int AddOp(Op op);  // throws std::invalid_argument for bad buffer indices
  // Bytes the program must read from / write to HBM (each HBM buffer once).
  int64_t HbmBytes() const;

  std::string name;  // the program's identity: its first execution pays the library load
  std::vector<Buffer> buffers;
  std::vector<Op> ops;  // in program order; an op reads buffers earlier ops wrote
  // Computes the real outputs in host memory (the simulated HBM). Runs on the core's worker
  // thread; may be empty (timing only).
  std::function<void()> compute;
};

// ---- The cost model (pure) ---------------------------------------------------------------------

struct ProgramCost {
  int64_t device_ns = 0;    // nc_exec_running duration: fixed cost + engine makespan (+ load)
  int64_t fixed_ns = 0;     // the execution's fixed cost
  int64_t makespan_ns = 0;  // engines, first instruction start to last end
  int64_t instructions = 0;
  int64_t dma_bytes = 0;
  std::array<int64_t, kNumEngines> busy_ns{};  // per engine kind, summed over queues
};
// What one execution of `program` costs on the model (not run; no activity).
ProgramCost EstimateProgram(const Program& program, const Params& params,
                            bool first_execution = false);

// ---- The device --------------------------------------------------------------------------------

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
  int num_cores() const;

  // Enqueues one execution of `program` on `core` and returns at once. `external_id` is the
  // host op's correlation (CurrentOpCorrelation()); activity is recorded only if a profiling
  // session with device activity is running, as its DeviceConfig asks. Throws std::out_of_range for
  // a bad core.
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
  // of memory that queued work may still read go through here.
  void Defer(int core, std::function<void()> fn);

  // Total executions and instructions modeled since construction.
  int64_t executions() const;
  int64_t instructions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process's device, created on first use from ParamsFromEnvironment(). ResetDefaultDevice
// replaces it (waits for the old one's work); used by tests and by --device-config.
NeuronDevice& DefaultDevice();
void ResetDefaultDevice(const Params& params);

// torch.neuron.synchronize(): waits for all work on the default device.
void synchronize();
int InFlightExecutions();

// ---- The tensor runtime's backend -------------------------------------------------------------
// opscope::RegisterNeuronBackend() (device.h) registers the default device as the PrivateUse1
// backend "neuron". Its BuildProgram lowers a compiled graph (ProgramGraph) into a
// NeuronDeviceProgram and its ExecuteProgram runs one:

// A multi-op program for DeviceBackend::ExecuteProgram: `program` describes the loop nests for
// the cost model (its `compute` is ignored) and `kernel` computes the outputs. The backend copies
// both, so the object need not outlive the call.
class NeuronDeviceProgram : public opscope::DeviceProgram {
 public:
  Program program;
  ProgramKernel kernel;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_NEURON_H_
