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

// Every number the model uses. Presets come from public NeuronCore figures (docs/neuron-model.md
// gives each one's source and its valid range); any field can be overridden by name from a
// key=value file (the key is the field name). Times in the unit their name says.
struct Params {
  std::string preset = "trn1";
  // Chip and core.
  double num_cores = 2;                    // physical NeuronCores on the simulated chip
  double logical_core_size = 1;            // physical cores per logical core (trn2's LNC=2)
  double partitions = 128;                 // SBUF partitions = rows per tile
  double free_tile_bytes = 8192;           // bytes per partition per tile along the free dimension
  double sbuf_bytes = 24.0 * 1024 * 1024;  // per physical core
  double psum_banks = 8;                   // PSUM accumulation banks (2 KiB per partition each)
  double hbm_gib = 16;                     // device memory per logical core (allocator capacity)
  // TensorE: initiation interval max(N, tensor_mm_min_cycles) cycles per matmul instruction of
  // moving free size N for 16-bit inputs, times the factor of the input dtype.
  double tensor_ghz = 2.8;
  double tensor_mm_min_cycles = 64;
  double tensor_fp32_factor = 4;            // FP32 inputs vs BF16/FP16
  double tensor_fp8_factor = 1;             // FP8 inputs vs BF16 (trn2: 0.5, double-row mode)
  double tensor_transpose_fp32_factor = 4;  // FP32 transpose vs BF16 (trn2: 2, transpose mode)
  // Vector-class engines (NKI cost model): an instruction streams its input tiles through the
  // engine at *_elems_per_cycle input elements per cycle over all partitions (128 lanes: N
  // cycles for one tile of N elements per partition, 2N for two), costs at least
  // *_overhead_cycles, and its result is ready *_overhead_cycles after its data.
  double vector_ghz = 1.12;
  double vector_elems_per_cycle = 128;           // 32-bit data
  double vector_elems_per_cycle_16bit = 128;     // one-input instructions on BF16/FP16 (trn2: 512)
  double vector_tt_elems_per_cycle_16bit = 128;  // two-input instructions on 16-bit (trn2: 256)
  double vector_overhead_cycles = 100;
  double scalar_ghz = 1.4;
  double scalar_elems_per_cycle = 128;
  double scalar_overhead_cycles = 264;
  double gpsimd_ghz = 1.4;
  double gpsimd_elems_per_cycle = 128;
  double gpsimd_overhead_cycles = 100;
  double vector_gpsimd_shared_port = 1;  // 1: VectorE and GpSimdE cannot access SBUF in parallel
  // Memory and DMA: each DMA queue serves `dma_partitions_per_queue` partitions of a tile; a
  // transfer's data phase costs bytes / bandwidth plus `dma_descriptor_ns` per contiguous chunk
  // (one per partition row), after `dma_latency_ns` of setup that overlaps earlier transfers for
  // up to `dma_inflight` transfers outstanding per queue.
  double hbm_gbps = 410;  // per physical core (GB/s = bytes/ns)
  double dma_queues = 16;
  double dma_partitions_per_queue = 8;
  double dma_queue_gbps = 17;
  double dma_latency_ns = 1300;
  double dma_descriptor_ns = 30;
  double dma_inflight = 4;
  // Runtime, per execution: switching the core to a different program than its last, launch and
  // completion, binding I/O tensors (eager path), and the eager path's remaining cost; the
  // one-time library load of a program's first execution; executions queued per core before the
  // host blocks.
  double program_switch_us = 10;
  double exec_launch_us = 12;
  double exec_complete_us = 2;
  double tensor_bind_us = 1;
  double eager_dispatch_us = 361;
  double first_exec_load_us = 1000;
  double max_inflight_executions = 8;
  // The device clock domain: device_ticks = clock_offset_ns + host_ns * (1 + clock_drift_ppm/1e6).
  double clock_offset_ns = 5e11;
  double clock_drift_ppm = 25;
};

// Thrown for an unknown preset, an unknown key, a malformed or out-of-range value, or an
// unreadable config file; what() names the source (file and line), the key, the value and the
// valid range.
class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "trn1" (NeuronCore-v2, the default) or "trn2" (NeuronCore-v3).
Params Preset(std::string_view name);
std::vector<std::string> PresetNames();
// Applies `key = value` lines ('#' starts a comment; `preset = trn2` first resets to a preset),
// checking each value against its documented range. `source` names the text in errors.
void ApplyOverrides(std::string_view text, std::string_view source, Params* params);
// Reads `path` (a regular file of at most kMaxConfigBytes) and applies it.
void ApplyOverridesFile(const std::string& path, Params* params);
inline constexpr size_t kMaxConfigBytes = 1 << 20;
// Throws ParamsError naming the first field outside its valid range (and the cross-field rules:
// logical_core_size divides num_cores). NeuronDevice and EstimateProgram call it.
void ValidateParams(const Params& params);
// The preset, then the file named by $OPSCOPE_NEURON_CONFIG when set.
Params ParamsFromEnvironment();
// All fields as `key = value` lines, in the file format ApplyOverrides reads.
std::string FormatParams(const Params& params);
// The valid range of every key, one `key: [min, max]` line each (docs and errors use it).
std::string FormatParamRanges();

// ---- Programs ----------------------------------------------------------------------------------

enum class Engine : uint8_t { kTensor, kVector, kScalar, kGpSimd, kDma };
inline constexpr int kNumEngines = 5;
const char* EngineName(Engine e);  // "TensorE", "VectorE", "ScalarE", "GpSimdE", "DMA"
// Bit masks of engines an op may run on (Op::engines).
inline constexpr uint8_t EngineBit(Engine e) { return uint8_t(1u << int(e)); }

enum class Memory : uint8_t {
  kHbm,   // program input or output: moved by DMA
  kSbuf,  // intermediate: lives in SBUF; spilled to HBM only when SBUF is full
};

// A buffer seen as [rows, cols]: rows map to partitions, cols to the free dimension. A buffer with
// cols == 1 holds one value per row (a per-partition scalar operand); one with rows == 1 is shared
// by every row (loaded once, broadcast over partitions). elem_bytes: 4 = FP32, 2 = BF16, 1 = FP8.
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
  kMatmul,       // out[M, N] = in0[M, K] x in1[K, N] on TensorE (per batch, see Op::batch)
};

// One loop-nest op, costed per tile by the NKI cost model: its input tiles with more than one
// column are streamed (N cycles each), per-row [rows, 1] inputs are scalar operands. `name` is
// the instruction name in traces ("tensor_tensor", "activation").
struct Op {
  std::string name;
  OpClass op_class = OpClass::kElementwise;
  Engine engine = Engine::kVector;  // the engine it runs on (the preferred one when `engines`)
  std::vector<int> inputs;          // buffer indices
  int output = -1;                  // buffer index
  int passes = 1;                   // engine instructions per tile (a composite the engine
                                    // cannot do in one, e.g. two dependent tensor_tensor ops)
  uint8_t engines = 0;  // 0: `engine` only; else EngineBit()s of engines the scheduler may
                        // pick from (an nki unknown_engine op: tensor_scalar, tensor_copy)
  int64_t batch = 1;    // kMatmul: in0 [batch*M, K], in1 [batch*K, N], out [batch*M, N]
};

struct Program {
  Program() = default;
  explicit Program(std::string n) : name(std::move(n)) {}
  int AddBuffer(Buffer b);
  int AddOp(Op op);  // throws std::invalid_argument for bad buffer indices or shapes
  // Bytes of the program's inputs and outputs in HBM (each HBM buffer once).
  int64_t HbmBytes() const;
  // HBM buffers: the I/O tensors an execution binds.
  int IoTensors() const;

  std::string name;  // the program's identity: first execution and program switches key on it
  std::vector<Buffer> buffers;
  std::vector<Op> ops;  // in program order; an op reads buffers earlier ops wrote
  // The framework's eager path runs it (each execution pays tensor binding and the eager path's
  // remainder); false for a kernel benchmark's steady-state execution.
  bool eager = false;
  // Computes the real outputs in host memory (the simulated HBM). Runs on the core's worker
  // thread; may be empty (timing only).
  std::function<void()> compute;
};

// ---- The cost model (pure) ---------------------------------------------------------------------

// The phases of one execution (nc_exec_running), in order. Each is its own span in traces.
enum class ExecPhase : uint8_t {
  kLoad,           // first execution: library load (first_exec_load_us)
  kProgramSwitch,  // the core executed a different program last (program_switch_us)
  kLaunch,         // launch (exec_launch_us)
  kTensorBind,     // eager: I/O tensors bound (tensor_bind_us each)
  kEagerDispatch,  // eager: the eager path's remainder (eager_dispatch_us)
  kEngines,        // the program's instructions (the engine makespan)
  kComplete,       // completion notification (exec_complete_us)
};
inline constexpr int kNumExecPhases = 7;
const char* ExecPhaseName(ExecPhase p);  // "library_load", "program_switch", "launch", ...

struct EstimateOptions {
  bool first_execution = false;  // pays the library load
  bool program_switch = false;   // the core's previous execution ran another program
};

struct ProgramCost {
  int64_t device_ns = 0;    // nc_exec_running duration: the sum of the phases
  int64_t makespan_ns = 0;  // engines, first instruction start to last end
  std::array<int64_t, kNumExecPhases> phase_ns{};
  int64_t instructions = 0;
  int64_t dma_bytes = 0;                       // bytes moved by DMA (loads, stores, spills)
  int64_t spill_bytes = 0;                     // of which SBUF spills and reloads
  std::array<int64_t, kNumEngines> busy_ns{};  // per engine kind, summed over lanes
};
// What one execution of `program` costs on the model (not run; no activity). Throws ParamsError
// for invalid params and std::invalid_argument for an invalid program.
ProgramCost EstimateProgram(const Program& program, const Params& params,
                            EstimateOptions options = {});

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
