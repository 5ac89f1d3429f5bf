// `opscope demo allreduce`: a data-parallel step on N simulated NeuronCores (demo_allreduce.h).
#include "tools/demo_allreduce.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "opscope/activity.h"
#include "opscope/device.h"
#include "opscope/export.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"
#include "opscope/tensor.h"

namespace opscope::tools {
namespace {

// Host side of every launch: nrta_execute_schedule returns this long after it is called. The
// public trn1 measurements put host time beyond device time per launch at 40-91 us (shared
// hardware notes, row 12); the demo takes the low end.
constexpr int64_t kLaunchNs = 40'000;
// Host work between one step's all_reduce and the next step's first launch (optimizer step,
// next batch): a demo choice, equal on every rank so that only the straggler's delay differs.
constexpr int64_t kStepGapNs = 20'000;
constexpr int64_t kFirstStepNs = 100'000;
// The collective's device activity, named after Neuron's collective library (nccom).
constexpr const char* kCollectiveKernel = "nccom_all_reduce_ring";

// One rank's trace, built as the profiler lays out a Neuron trace: a host thread with ops and
// runtime calls, a "NeuronCore r" device process with its execution queue, ac2g flows.
class RankTrace {
 public:
  RankTrace(int rank, int world, int64_t base_ns) : rank_(rank) {
    const auto pid = static_cast<int64_t>(getpid());
    const auto tid = static_cast<int64_t>(CurrentThreadId());
    trace_.metadata().base_time_ns = base_ns;
    trace_.metadata().device_type = "NEURON";
    host_ = trace_.AddThreadTrack(trace_.AddProcess(pid, "opscope"), tid,
                                  fmt::format("thread {} (opscope)", tid));
    const uint32_t device = trace_.AddProcess(rank, fmt::format("NeuronCore {}", rank), true);
    trace_.MutableProcess(device).labels = trace_.Intern(fmt::format("NEURON {}", rank));
    queue_ =
        trace_.AddThreadTrack(device, 0, "nc_exec (execution queue)", TrackKind::kDeviceStream);
    std::string ranks;
    for (int r = 0; r < world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
    trace_.metadata().extra.emplace_back(
        "deviceProperties", fmt::format("[{{\"id\": {0}, \"name\": \"NeuronCore {0}\"}}]", rank));
    trace_.metadata().extra.emplace_back(
        "distributedInfo",
        fmt::format("{{\"backend\": \"xla\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 1, "
                    "\"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
                    "\"backend_config\": \"xla\", \"pg_size\": {}, \"ranks\": [{}]}}]}}",
                    rank, world, world, ranks));
  }

  // A host op, its runtime call and the device execution it launches; returns the execution's
  // slice. Times in ns since the trace's base.
  void Launch(std::string_view op, int64_t op_start, int64_t call_start, int64_t exec_start,
              int64_t exec_ns, const char* exec_name, const std::string& exec_args) {
    const int64_t ext = next_id_++, corr = next_id_++;
    Add(ActivityKind::kCpuOp, "cpu_op", op, host_, op_start,
        call_start + kLaunchNs + 1000 - op_start, fmt::format("{{\"External id\": {}}}", ext));
    const uint32_t call =
        Add(ActivityKind::kRuntime, "privateuse1_runtime", "nrta_execute_schedule", host_,
            call_start, kLaunchNs,
            fmt::format("{{\"External id\": {}, \"correlation\": {}, \"device\": {}}}", ext, corr,
                        rank_));
    const uint32_t exec =
        Add(ActivityKind::kKernel, "kernel", exec_name, queue_, exec_start, exec_ns,
            fmt::format("{{\"External id\": {}, \"device\": {}, \"stream\": 0, \"correlation\": "
                        "{}, {}}}",
                        ext, rank_, corr, exec_args));
    trace_.AddFlow(
        {static_cast<uint64_t>(corr), trace_.Intern("ac2g"), trace_.Intern("ac2g"), call, exec});
  }

  void Step(int64_t step, int64_t start, int64_t end) {
    Add(ActivityKind::kUserAnnotation, "user_annotation", fmt::format("ProfilerStep#{}", step),
        host_, start, end - start, fmt::format("{{\"External id\": {}}}", next_id_++));
  }

  // Finalizes and writes Kineto JSON; throws std::runtime_error naming the path on failure.
  void Write(const std::string& path) {
    trace_.metadata().trace_name = path;
    trace_.Finalize();
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::filesystem::create_directories(dir, ec);
    if (ec) {  // the real reason (a file in the way, no permission), not the write's ENOENT
      throw std::runtime_error(
          fmt::format("cannot create trace directory '{}': {}", dir.string(), ec.message()));
    }
    const Status st = WriteChromeTrace(trace_, path);
    if (!st.ok()) throw std::runtime_error(st.message());
  }

 private:
  uint32_t Add(ActivityKind kind, std::string_view category, std::string_view name, uint32_t track,
               int64_t ts, int64_t dur, const std::string& args) {
    Slice s;
    s.kind = kind;
    s.category = trace_.Intern(category);
    s.name = trace_.Intern(name);
    s.track = track;
    s.ts_ns = ts;
    s.dur_ns = dur;
    s.args = trace_.AddArgs(args);
    return trace_.AddSlice(s);
  }

  const int rank_;
  Trace trace_;
  uint32_t host_ = 0, queue_ = 0;
  int64_t next_id_ = 1;
};

struct Shared {
  const AllReduceDemoOptions& options;
  neuron::RingAllReduce& ring;
  neuron::ProgramCost matmul;
  int64_t base_ns;
  std::string run_dir;
  std::vector<std::vector<float>> local;    // each rank's own gradient
  std::vector<std::vector<float>> reduced;  // each rank's all-reduced gradient (last step)
  std::vector<std::string> errors;
};

// One rank's thread: every step, the matmul then the all_reduce; then its trace.
void RunRank(int rank, Shared* shared) {
  try {
    const AllReduceDemoOptions& o = shared->options;
    RankTrace trace(rank, o.ranks, shared->base_ns);
    const Tensor x = randn({o.m, o.k}, 1000 + static_cast<uint64_t>(rank));
    const Tensor w = randn({o.k, o.n}, 2000 + static_cast<uint64_t>(rank));
    const int64_t delay = rank == o.straggler ? std::llround(o.delay_us * 1e3) : 0;
    const std::string mm_args =
        fmt::format("\"program\": \"aten::mm[{}x{}x{}]\", \"instructions\": {}, \"dma_bytes\": {}",
                    o.m, o.k, o.n, shared->matmul.instructions, shared->matmul.dma_bytes);
    int64_t step_start = kFirstStepNs;
    for (int step = 0; step < o.steps; ++step) {
      std::vector<float> grad = mm(x, w).ToVector();  // the real gradient
      if (step == 0) shared->local[static_cast<size_t>(rank)] = grad;
      const int64_t mm_call = step_start + 3000;
      const int64_t mm_start = mm_call + kLaunchNs;
      const int64_t mm_end = mm_start + shared->matmul.device_ns + delay;
      trace.Launch("aten::mm", step_start + 2000, mm_call, mm_start, mm_end - mm_start,
                   "nc_exec_running", mm_args);
      const int64_t ar_call = mm_call + kLaunchNs + 3000;
      const int64_t arrive = std::max(mm_end, ar_call + kLaunchNs);
      const int64_t end = shared->ring.Run(rank, grad, arrive);
      const auto bytes = static_cast<int64_t>(grad.size() * sizeof(float));
      trace.Launch("c10d::allreduce_", ar_call - 1000, ar_call, arrive, end - arrive,
                   kCollectiveKernel,
                   fmt::format("\"Collective name\": \"allreduce\", \"In msg nelems\": {0}, "
                               "\"Out msg nelems\": {0}, \"Group size\": {1}, \"dtype\": "
                               "\"Float\", \"Process Group Name\": \"0\", \"Process Group "
                               "Description\": \"default_pg\", \"algorithm\": \"ring\", "
                               "\"bytes\": {2}",
                               grad.size(), o.ranks, bytes));
      trace.Step(step, step_start, end + 5000);
      if (step + 1 == o.steps) shared->reduced[static_cast<size_t>(rank)] = std::move(grad);
      step_start = end + kStepGapNs;
    }
    trace.Write(fmt::format("{}/rank_{}/trace.json", shared->run_dir, rank));
  } catch (const std::exception& e) {
    shared->errors[static_cast<size_t>(rank)] = e.what();
  }
}

// Ranks x steps the demo runs at most: each rank-step computes a real [m, k] x [k, n] matmul
// (~7 ms on one core of the development VM) and writes ~2 KB of trace, so this bounds a run to
// minutes and ~200 MB of traces instead of letting a typo run for days.
constexpr int64_t kMaxRankSteps = 100'000;

void Validate(const AllReduceDemoOptions& o) {
  if (o.ranks < 1 || o.ranks > 1024) {
    throw std::invalid_argument(fmt::format("--ranks must be 1 to 1024, got {}", o.ranks));
  }
  if (o.steps < 1 || o.steps > kMaxRankSteps / o.ranks) {
    throw std::invalid_argument(fmt::format(
        "--steps must be 1 to {} with {} ranks (at most {} rank-steps: each is a real matmul and "
        "~2 KB of trace), got {}",
        kMaxRankSteps / o.ranks, o.ranks, kMaxRankSteps, o.steps));
  }
  if (o.straggler < -1 || o.straggler >= o.ranks) {
    throw std::invalid_argument(
        fmt::format("--straggler {} is not a rank of a {}-rank job (0 to {})", o.straggler, o.ranks,
                    o.ranks - 1));
  }
  if (!(o.delay_us >= 0) || o.delay_us > 1e7) {
    throw std::invalid_argument(fmt::format("--delay-us must be 0 to 1e7, got {}", o.delay_us));
  }
  if (o.m < 1 || o.k < 1 || o.n < 1 || o.m * o.k > (1 << 24) || o.k * o.n > (1 << 24)) {
    throw std::invalid_argument("matmul sizes must be positive and each input under 16M elements");
  }
}

}  // namespace

AllReduceDemoResult RunAllReduceDemo(const AllReduceDemoOptions& options) {
  Validate(options);
  RegisterCpuBackend();
  AllReduceDemoResult result;
  result.options = options;
  const neuron::ModelConfig config = neuron::ModelConfig::Preset(options.preset);
  neuron::RingAllReduce ring(options.ranks, neuron::NeuronLinkPreset(options.preset));
  const int64_t base_ns = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count() *
                          1000;
  // Each rank's aten::mm runs through the framework's eager path (tensor binding and dispatch).
  Shared shared{options,
                ring,
                neuron::EstimateModelOp("mm", {options.m, options.k, options.n}, "f32", config,
                                        /*eager=*/true)
                    .cost,
                base_ns,
                ProfileRunDirectory(options.out_dir),
                std::vector<std::vector<float>>(static_cast<size_t>(options.ranks)),
                std::vector<std::vector<float>>(static_cast<size_t>(options.ranks)),
                std::vector<std::string>(static_cast<size_t>(options.ranks))};
  std::vector<std::thread> threads;
  for (int r = 0; r < options.ranks; ++r) threads.emplace_back(RunRank, r, &shared);
  for (std::thread& t : threads) t.join();
  for (const std::string& e : shared.errors) {
    if (!e.empty()) throw std::runtime_error(e);
  }
  result.run_dir = shared.run_dir;
  result.matmul_ns = shared.matmul.device_ns;
  result.gradient_bytes = options.m * options.n * static_cast<int64_t>(sizeof(float));
  result.allreduce_ns = neuron::RingAllReduceNs(result.gradient_bytes, options.ranks,
                                                neuron::NeuronLinkPreset(options.preset));
  for (int r = 0; r < options.ranks; ++r) {
    result.trace_paths.push_back(fmt::format("{}/rank_{}/trace.json", shared.run_dir, r));
  }
  const size_t n = shared.local.front().size();
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (const auto& local : shared.local) sum += local[i];
    for (const auto& reduced : shared.reduced) {
      result.max_abs_error = std::max(result.max_abs_error, std::fabs(reduced[i] - sum));
    }
  }
  return result;
}

std::string FormatAllReduceDemo(const AllReduceDemoResult& r) {
  const AllReduceDemoOptions& o = r.options;
  std::string out = fmt::format(
      "opscope demo allreduce: {} simulated NeuronCore{} ({} model), one thread each, {} step{}\n"
      "  each step: matmul [{}, {}] x [{}, {}] on the rank's NeuronCore ({:.1f} us modeled),\n"
      "  then all_reduce of the {:.1f} KiB gradient over a NeuronLink ring ({:.1f} us modeled "
      "with every rank on time)\n",
      o.ranks, o.ranks == 1 ? "" : "s", o.preset, o.steps, o.steps == 1 ? "" : "s", o.m, o.k, o.k,
      o.n, static_cast<double>(r.matmul_ns) / 1e3, static_cast<double>(r.gradient_bytes) / 1024.0,
      static_cast<double>(r.allreduce_ns) / 1e3);
  if (o.straggler >= 0) {
    out += fmt::format(
        "straggler: rank {} computes {:.1f} us longer every step, so the other {} rank{} wait "
        "that long at every all_reduce: {:.1f} us of waiting per step\n",
        o.straggler, o.delay_us, o.ranks - 1, o.ranks == 2 ? "" : "s", o.delay_us * (o.ranks - 1));
  }
  out +=
      fmt::format("all-reduced gradient on every rank against a direct sum: max |error| {:.3g}\n",
                  r.max_abs_error);
  out += fmt::format("traces: {}/rank_<r>/trace.json ({} files, Neuron's layout)\n", r.run_dir,
                     r.trace_paths.size());
  out += fmt::format("report: opscope report {}\n", r.run_dir);
  return out;
}

}  // namespace opscope::tools
