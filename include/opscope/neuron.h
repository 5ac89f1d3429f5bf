// The simulated AWS NeuronCore: a cost model of the hardware, an asynchronous executor per
// NeuronCore behind the tensor runtime's "neuron" backend, the profiler activity the real Neuron
// runtime reports, and the NeuronLink ring all-reduce. docs/neuron-model.md documents every
// parameter of the model and its source.
//
// Tensors on the "neuron" device run on the process's default device (RegisterNeuronBackend() in
// device.h); this header configures it, waits for it, and asks the model what work costs:
//
//   opscope::neuron::ModelConfig config = opscope::neuron::ModelConfig::Preset("trn2");
//   config.ApplyOverrides("dma_queues = 8", "inline");
//   opscope::neuron::ResetDefaultDevice(config);  // tensors now run on a trn2 with 8 DMA queues
//   ... ops on Device("neuron:0") ...
//   opscope::neuron::synchronize();  // torch.neuron.synchronize(): waits for the modeled time
//
//   opscope::neuron::ModelEstimate e =
//       opscope::neuron::EstimateModelOp("rmsnorm", {128, 4096}, "bf16", config);
//   // e.cost.device_ns: one execution's device time; e.cost.busy_ns: per engine
//
// Thread safety: ModelConfig and ModelEstimate are plain values; the free functions may be called
// from any thread. RingAllReduce::Run is called by each rank's thread (see the class).
#ifndef OPSCOPE_NEURON_H_
#define OPSCOPE_NEURON_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::neuron {

// ---- The device's configuration ----------------------------------------------------------------

// Thrown for an unknown preset, an unknown key, a malformed or out-of-range value, or an
// unreadable config file; what() names the source (file and line), the key, the value and the
// valid range.
class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad op, shape, dtype or op graph given to the model estimate; what() names the source and
// line of a graph file ("g.txt:3: ...").
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Params;  // the model's parameters (internal to src/device/neuron)

// One configuration of the simulated chip: a preset ("trn1", NeuronCore-v2, the default; "trn2",
// NeuronCore-v3) and overrides of any of its documented parameters by key (the keys, units and
// valid ranges are docs/neuron-model.md's and FormatRanges()'s). Every value it holds is within
// its range: an override that is not throws ParamsError and changes nothing.
class ModelConfig {
 public:
  ModelConfig();  // the trn1 preset
  ~ModelConfig();
  ModelConfig(const ModelConfig& other);
  ModelConfig& operator=(const ModelConfig& other);

  // Throws ParamsError for an unknown preset name.
  static ModelConfig Preset(std::string_view name);
  static std::vector<std::string> PresetNames();  // "trn1", "trn2"
  // The preset, then the file named by $OPSCOPE_NEURON_CONFIG when set.
  static ModelConfig FromEnvironment();

  // Applies `key = value` lines ('#' starts a comment; `preset = trn2` first resets to a preset),
  // checking each value against its documented range. `source` names the text in errors.
  void ApplyOverrides(std::string_view text, std::string_view source);
  // Reads `path` (a regular file of at most 1 MiB) and applies it.
  void ApplyOverridesFile(const std::string& path);

  const std::string& preset() const;
  // The value of the parameter `key` ("hbm_gbps"), in the unit its name says. Throws ParamsError
  // for an unknown key.
  double Get(std::string_view key) const;
  // All parameters as `key = value` lines, in the format ApplyOverrides reads.
  std::string Format() const;
  // The valid range of every key, one `key: [min, max]` line each.
  static std::string FormatRanges();

 private:
  // src/device/neuron's access to the parameters (device/neuron/params.h).
  friend const Params& ParamsOf(const ModelConfig& config);
  friend ModelConfig ConfigOf(const Params& params);
  std::unique_ptr<Params> params_;  // never null
};

// ---- What work costs on the model --------------------------------------------------------------

enum class Engine : uint8_t { kTensor, kVector, kScalar, kGpSimd, kDma };
inline constexpr int kNumEngines = 5;
const char* EngineName(Engine e);  // "TensorE", "VectorE", "ScalarE", "GpSimdE", "DMA"

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

struct ProgramCost {
  int64_t device_ns = 0;    // nc_exec_running duration: the sum of the phases
  int64_t makespan_ns = 0;  // engines, first instruction start to last end
  std::array<int64_t, kNumExecPhases> phase_ns{};
  int64_t instructions = 0;
  int64_t dma_bytes = 0;                       // bytes moved by DMA (loads, stores, spills)
  int64_t spill_bytes = 0;                     // of which SBUF spills and reloads
  std::array<int64_t, kNumEngines> busy_ns{};  // per engine kind, summed over lanes
};

// One execution of an op or an op graph on the model, as `opscope model` prints it.
struct ModelEstimate {
  ProgramCost cost;
  std::string dtype;       // the inputs' dtype, by its canonical name ("f32", "bf16", "fp8")
  int64_t ops = 0;         // loop-nest ops of the device program
  int64_t io_tensors = 0;  // HBM buffers an execution binds (the eager path binds each)
  // Lanes of each engine kind on one logical core (DMA: its queues): busy_ns / (lanes x
  // makespan_ns) is the engine's utilization.
  std::array<double, kNumEngines> lanes{};
};

// The ops EstimateModelOp knows, in the order `opscope model --help` lists them.
std::vector<std::string> ModelOpNames();
// One execution of `op` over `shape`: add mul silu exp (any rank, flattened to [rows, last]),
// rmsnorm softmax layernorm (likewise, normalized over the last dim), mm (M, K, N), bmm
// (B, M, K, N); `dtype` "f32", "bf16" or "fp8" (mm and bmm only). `eager`: through the
// framework's eager path (tensor binding and dispatch per execution); otherwise the steady state
// of a kernel benchmark. Throws ModelError for a bad op, shape or dtype.
ModelEstimate EstimateModelOp(std::string_view op, const std::vector<int64_t>& shape,
                              std::string_view dtype, const ModelConfig& config,
                              bool eager = false);
// One execution of the op graph in the file at `path` (the format: docs/neuron-model.md);
// `dtype` is that of inputs that do not name one. Throws ModelError naming the file and line.
ModelEstimate EstimateModelGraph(const std::string& path, std::string_view dtype,
                                 const ModelConfig& config, bool eager = false);

// ---- The process's device ----------------------------------------------------------------------

// Replaces the default device (the one the "neuron" backend runs on; created on first use from
// ModelConfig::FromEnvironment()) with one configured by `config`, after the old one's work.
void ResetDefaultDevice(const ModelConfig& config);
// The default device's configuration.
ModelConfig DefaultDeviceConfig();
// torch.neuron.synchronize(): waits for all work on the default device, as long as the model
// says it takes. Throws std::runtime_error if an execution failed since the last call.
void synchronize();
// Executions enqueued on the default device and not finished in the model's time.
int InFlightExecutions();

// ---- NeuronLink collectives --------------------------------------------------------------------

struct NeuronLinkParams {
  double link_gbps = 43.8;       // one ring link, GB/s = bytes per ns, reduction included
  double hop_latency_ns = 1300;  // per ring step: DMA descriptor + semaphore latency
};
// "trn1" (the only preset with a published collective measurement; used for trn2 too). Throws
// std::invalid_argument for another name.
NeuronLinkParams NeuronLinkPreset(std::string_view preset);

// Modeled duration of a ring all-reduce of `bytes` over `ranks` ranks arriving together.
int64_t RingAllReduceNs(int64_t bytes, int ranks, const NeuronLinkParams& link);

// All-reduce over a ring of NeuronCores on NeuronLink: the real reduction, moved chunk by chunk
// between the ranks' threads, and its time from the link model. A ring all-reduce of S bytes over
// n ranks runs n-1 reduce-scatter steps then n-1 all-gather steps; a step on rank r starts once r
// has finished its previous step and r-1 its own, and costs hop_latency + S/n / link bandwidth.
// A rank that arrives late holds every other rank back by its lateness; all finish together.
//
//   opscope::neuron::RingAllReduce ring(4, opscope::neuron::NeuronLinkPreset("trn1"));
//   // on rank r's thread, with its gradient and the model time its device reaches the collective:
//   int64_t end_ns = ring.Run(r, std::span<float>(grad), arrive_ns);  // grad now holds the sum
//
// Thread safety: Run is called once per collective by each of the n ranks' threads, concurrently;
// it blocks until the collective has finished on every rank. One collective at a time.
class RingAllReduce {
 public:
  // Throws std::invalid_argument for fewer than 1 rank.
  RingAllReduce(int ranks, NeuronLinkParams link);
  ~RingAllReduce();
  RingAllReduce(const RingAllReduce&) = delete;
  RingAllReduce& operator=(const RingAllReduce&) = delete;

  // Sums `data` over the ranks in place (every rank passes the same number of floats) and returns
  // the modeled time, in the caller's time base, at which the collective ends on `rank`.
  // `arrive_ns` is when the rank's device reaches the collective.
  int64_t Run(int rank, std::span<float> data, int64_t arrive_ns);

  int ranks() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_NEURON_H_
