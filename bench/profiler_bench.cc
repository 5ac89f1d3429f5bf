// Record-path cost per host op (begin + end) with profiling on, off, and compiled out; per
// allocator "[memory]" event with profile_memory off (a branch) and on; raw clock
// costs; Kineto JSON export throughput. Prints Google Benchmark's table, then a summary with
// ratios against the baseline of this same run (an empty loop) and the targets. Sessions
// are the public Profiler's; a window's trace is built outside the timed region.
#include <benchmark/benchmark.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "opscope/export.h"
#include "opscope/profiler.h"

namespace opscope::bench {
int CompiledOutOps(int n);
}

namespace {

constexpr int kBatch = 1000;            // ops per benchmark iteration
constexpr int kBatchesPerWindow = 500;  // restart the recording before buffers fill
std::map<std::string, double> g_ns_per_op;

void Report(benchmark::State& state, const char* key) {
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  (void)key;
}

__attribute__((noinline)) int EmptyLoop(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += i;
    asm volatile("" : "+r"(sum));
  }
  return sum;
}

// The raw clock the record path stores (the TSC on x86-64, as src/trace/clock.h reads it).
inline uint64_t RawTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(opscope::NowNs());
#endif
}

// A profiling session restarted every `batches_per_window` batches, outside the timed region (its
// thread buffer holds one window of `records_per_op` records per op; with record_shapes the
// session's shape buffer, 2^20 words, must hold the window's shapes too).
class Session {
 public:
  Session(opscope::ProfilerOptions options, int records_per_op, int batches_per_window)
      : options_(std::move(options)), batches_per_window_(batches_per_window) {
    options_.thread_buffer_records = uint32_t(records_per_op * kBatch * batches_per_window + 16);
    Start();
  }

  // Ends a batch: every batches_per_window batches, stops the session (building its trace) and
  // starts a fresh one, outside the timed region.
  void NextBatch(benchmark::State& state) {
    if (++batches_ != batches_per_window_) return;
    state.PauseTiming();
    Stop(state);
    Start();
    batches_ = 0;
    state.ResumeTiming();
  }

  // Stops the session and invalidates the run if any record was dropped.
  void Stop(benchmark::State& state) {
    prof_->Stop();
    if (!prof_->trace().metadata().dropped.empty())
      state.SkipWithError("records were dropped: the measurement is invalid");
    prof_.reset();
  }

 private:
  void Start() {
    prof_ = std::make_unique<opscope::Profiler>(options_);
    prof_->Start();
  }

  opscope::ProfilerOptions options_;
  const int batches_per_window_;
  int batches_ = 0;
  std::unique_ptr<opscope::Profiler> prof_;
};

void BM_Baseline_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(EmptyLoop(kBatch));
  Report(state, "baseline");
}

void BM_HostOp_CompiledOut(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(opscope::bench::CompiledOutOps(kBatch));
  Report(state, "compiled_out");
}

void BM_HostOp_Off(benchmark::State& state) {
  static const uint32_t name = opscope::InternName("bench_op");
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      opscope::RecordScope scope(name);
      benchmark::DoNotOptimize(scope);
    }
  }
  Report(state, "off");
}

void BM_HostOp_On(benchmark::State& state) {
  static const uint32_t name = opscope::InternName("bench_op");
  Session session({}, 1, kBatchesPerWindow);
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      opscope::RecordScope scope(name);
      benchmark::DoNotOptimize(scope);
    }
    session.NextBatch(state);
  }
  session.Stop(state);
  Report(state, "on");
}

void BM_HostOp_OnWithShapes(benchmark::State& state) {
  static const uint32_t name = opscope::InternName("bench_op_shapes");
  static const int64_t dims[2] = {64, 128};
  const opscope::InputShape shapes[2] = {{dims, 2, true}, {dims, 2, true}};
  opscope::ProfilerOptions options;
  options.record_shapes = true;
  Session session(options, 1, kBatchesPerWindow / 5);  // two 2-D shapes: under 10 words an op
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      opscope::RecordScope scope(name, shapes);
      benchmark::DoNotOptimize(scope);
    }
    session.NextBatch(state);
  }
  session.Stop(state);
  Report(state, "on_shapes");
}

void BM_Clock_Rdtsc(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(RawTicks());
  }
  Report(state, "raw_ticks");
}

void BM_Clock_ClockGettimeMonotonic(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) benchmark::DoNotOptimize(opscope::NowNs());
  }
  Report(state, "clock_gettime");
}

// A recorded trace of `n` ops (nested 2 deep) exported to Kineto JSON.
void BM_ExportChromeTrace(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  opscope::ProfilerOptions options;
  options.thread_buffer_records = static_cast<uint32_t>(n + 16);
  opscope::Profiler prof(options);
  prof.Start();
  static const uint32_t outer = opscope::InternName("aten::linear");
  static const uint32_t inner = opscope::InternName("aten::addmm");
  for (int i = 0; i < n / 2; ++i) {
    opscope::RecordScope a(outer);
    opscope::RecordScope b(inner);
  }
  prof.Stop();
  const opscope::Trace& trace = prof.trace();
  const std::string path = "/tmp/opscope_profiler_bench_" + std::to_string(getpid()) + ".json";
  const size_t bytes = opscope::ChromeTraceJson(trace, path).size();
  for (auto _ : state) {
    const opscope::Status st = opscope::WriteChromeTrace(trace, path);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace.slices().size()));
  state.counters["events"] = static_cast<double>(trace.slices().size());
  state.counters["json_MB"] = static_cast<double>(bytes) / 1e6;
}

// key_averages over the same kind of recorded trace (events/s).
void BM_KeyAverages(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  opscope::ProfilerOptions options;
  options.thread_buffer_records = static_cast<uint32_t>(n + 16);
  opscope::Profiler prof(options);
  prof.Start();
  static const uint32_t outer = opscope::InternName("aten::linear");
  static const uint32_t inner = opscope::InternName("aten::addmm");
  for (int i = 0; i < n / 2; ++i) {
    opscope::RecordScope a(outer);
    opscope::RecordScope b(inner);
  }
  prof.Stop();
  for (auto _ : state) {
    opscope::KeyAverages avg = opscope::KeyAverages::FromTrace(prof.trace());
    benchmark::DoNotOptimize(avg.Table("self_cpu_time_total"));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(prof.trace().slices().size()));
}

BENCHMARK(BM_Baseline_EmptyLoop);
BENCHMARK(BM_HostOp_CompiledOut);
BENCHMARK(BM_HostOp_Off);
BENCHMARK(BM_HostOp_On);
BENCHMARK(BM_HostOp_OnWithShapes);
BENCHMARK(BM_Clock_Rdtsc);
BENCHMARK(BM_Clock_ClockGettimeMonotonic);
BENCHMARK(BM_ExportChromeTrace)->Arg(200'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KeyAverages)->Arg(200'000)->Unit(benchmark::kMillisecond);

// One allocator event as CapacityAllocator reports it: the branch on MemoryProfilingActive(),
// then (while a profile_memory session records) a timestamp and two records stored together.
__attribute__((noinline)) void AllocatorEvent(uint64_t addr, int64_t bytes) {
  if (opscope::MemoryProfilingActive()) [[unlikely]] {
    opscope::RecordMemoryUsage({.device_type = 20,
                                .device_id = 0,
                                .addr = addr,
                                .bytes = bytes,
                                .total_allocated = bytes,
                                .total_reserved = bytes});
  }
}

void BM_MemoryEvent_Off(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) AllocatorEvent(uint64_t(i) * 64, 64);
  }
  Report(state, "memory_off");
}

void BM_MemoryEvent_On(benchmark::State& state) {
  opscope::ProfilerOptions options;
  options.profile_memory = true;
  Session session(options, 2, kBatchesPerWindow);
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) AllocatorEvent(uint64_t(i) * 64, 64);
    session.NextBatch(state);
  }
  session.Stop(state);
  Report(state, "memory_on");
}
BENCHMARK(BM_MemoryEvent_Off);
BENCHMARK(BM_MemoryEvent_On);

// Collects ns/op per benchmark for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("ns_per_op");
      if (it != r.counters.end()) g_ns_per_op[r.run_name.function_name] = it->second.value * 1e9;
      double items =
          r.counters.count("items_per_second") ? r.counters.at("items_per_second").value : 0;
      if (r.run_name.function_name == "BM_ExportChromeTrace") export_events_per_s = items;
      if (r.run_name.function_name == "BM_KeyAverages") key_averages_events_per_s = items;
    }
  }
  double export_events_per_s = 0;
  double key_averages_events_per_s = 0;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto get = [](const char* name) {
    auto it = g_ns_per_op.find(name);
    return it == g_ns_per_op.end() ? -1.0 : it->second;
  };
  const double base = get("BM_Baseline_EmptyLoop");
  std::printf("\nopscope record path, per host op (begin + end) or memory event, this run:\n");
  const struct {
    const char* name;
    const char* label;
    double target;
  } rows[] = {
      {"BM_HostOp_On", "profiling on", 20.0},
      {"BM_HostOp_OnWithShapes", "on + record_shapes (2 args)", 0},
      {"BM_HostOp_Off", "off (compiled in, no session)", 2.0},
      {"BM_HostOp_CompiledOut", "compiled out", 2.0},
      {"BM_MemoryEvent_Off", "memory event, profile_memory off", 2.0},
      {"BM_MemoryEvent_On", "memory event, profile_memory on", 20.0},
      {"BM_Clock_Rdtsc", "one RawTicks() read", 0},
      {"BM_Clock_ClockGettimeMonotonic", "one clock_gettime read", 0},
  };
  for (const auto& r : rows) {
    double v = get(r.name);
    if (v < 0) continue;
    std::printf("  %-32s %7.2f ns  (%+.2f ns over the empty-loop baseline %.2f ns)", r.label, v,
                v - base, base);
    if (r.target > 0)
      std::printf("  target <= %.0f ns: %s", r.target, v - base <= r.target ? "met" : "MISSED");
    std::printf("\n");
  }
  if (reporter.export_events_per_s > 0) {
    std::printf("  chrome trace export: %.2f M events/s\n", reporter.export_events_per_s / 1e6);
  }
  if (reporter.key_averages_events_per_s > 0) {
    std::printf("  key_averages + table: %.2f M events/s\n",
                reporter.key_averages_events_per_s / 1e6);
  }
  const double on = get("BM_HostOp_On"), ticks = get("BM_Clock_Rdtsc");
  if (on > 0 && ticks > 0) {
    std::printf(
        "  profiling on, less its two clock reads: %.2f ns (the clock is %.0f%% of the cost)\n",
        on - 2 * ticks, 100.0 * 2 * ticks / on);
  }
  std::printf("  (PyTorch's RecordFunction + Kineto costs about 1000 ns per op)\n");
  benchmark::Shutdown();
  return 0;
}
