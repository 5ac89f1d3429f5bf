// Neuron Explorer profile import (src/import/neuron, src/import/parquet): rows/s per core and peak
// memory against the profile's size, and the first view of `opscope explore`, on a profile
// generated at bench time by an independent writer (parquet-wasm, bench/neuron/write_profile.mjs)
// in the documented schema.
//
//   neuron_bench [--instructions N] [--dma N] [--profile DIR] [--baseline OPSCOPE] [--runs N]
//   neuron_bench --profile DIR --import-only THREADS     (one import in this process, for perf)
//
// Defaults: 10,000,000 instructions and 1,000,000 DMA packets (the full size is
// --instructions 50000000 --dma 5000000, a 1.2 GB profile that takes minutes to write).
// --profile reuses a directory written before (it is not removed). Each import runs in a child
// process (fork), so its peak RSS is its own. Baselines measured in the same run: reading the
// files (the page cache's speed), decoding the columns the reader asks for with the Parquet reader
// alone and obtaining the fresh memory of the trace's slices alone (each a floor under the
// import), and with --baseline another opscope binary's first view,
// interleaved with this one's.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/first_answer.h"
#include "bench/page_cache.h"
#include "bench/usage.h"
#include "import/neuron/track_stage.h"
#include "import/parquet/parquet_file.h"
#include "opscope/import.h"
#include "opscope/trace.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool Shell(const std::string& cmd) { return std::system(cmd.c_str()) == 0; }

uint64_t DirBytes(const fs::path& dir) {
  uint64_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  return bytes;
}

// What a child measured: wall seconds, rows, and from wait4 its CPU seconds (user + system, all
// threads) and peak RSS. On a shared machine the CPU time is the steadier figure: rows per CPU
// second is what one core does when it is not taken by others.
struct ChildRun {
  double seconds = -1;
  double rows = 0;
  double cpu_s = 0;
  double peak_mb = 0;
};

// Runs `work` (returns rows, or < 0 on failure) in a forked child; best of `runs`.
template <typename Work>
ChildRun InChild(const std::string& dir, int runs, Work work) {
  ChildRun best;
  for (int r = 0; r < runs; ++r) {
    opscope::bench::WarmPageCache(dir);
    int fds[2];
    if (pipe(fds) != 0) return best;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      const auto start = Clock::now();
      const double rows = work();
      const double result[2] = {Since(start), rows};
      const bool ok = write(fds[1], result, sizeof(result)) == sizeof(result);
      _exit(ok && rows >= 0 ? 0 : 1);
    }
    close(fds[1]);
    double result[2] = {-1, 0};
    const bool got = read(fds[0], result, sizeof(result)) == sizeof(result);
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return ChildRun{};
    if (best.seconds < 0 || result[0] < best.seconds) {
      const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
      best = {result[0], result[1], cpu, static_cast<double>(usage.ru_maxrss) / 1024.0};
    }
  }
  return best;
}

double ImportRows(const std::string& dir, int threads) {
  opscope::Trace trace;
  opscope::ImportStats stats;
  opscope::ImportOptions options;
  options.threads = threads;
  const opscope::Status st = opscope::ImportTrace(dir, &trace, &stats, options);
  if (!st.ok()) {
    std::fprintf(stderr, "neuron_bench: %s\n", st.message().c_str());
    return -1;
  }
  return static_cast<double>(stats.events);
}

// The Parquet reader alone on the big tables' columns the Neuron reader asks for.
double DecodeRows(const std::string& dir, int threads) {
  const std::vector<std::string> wanted = {
      "start_ts",   "end_ts",    "engine",     "opcode",     "timeline_track", "pcore_idx",
      "queue_name", "queue_idx", "queue_type", "engine_idx", "transfer_bytes"};
  double rows = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("Instruction", 0) != 0 && name.rfind("DmaPacket", 0) != 0) continue;
    std::unique_ptr<opscope::parquet::ParquetFile> f;
    if (!opscope::parquet::ParquetFile::Open(e.path().string(), &f).ok()) return -1;
    std::vector<int> columns;
    for (int c = 0; c < f->schema().num_columns(); ++c) {
      for (const std::string& w : wanted) {
        if (f->schema().column(c).path == w) columns.push_back(c);
      }
    }
    opscope::parquet::ReadOptions options;
    options.threads = threads;
    const opscope::Status st = f->ReadRowGroups(
        columns, options, [](opscope::parquet::RowGroupData&) { return opscope::Status::Ok(); });
    if (!st.ok()) return -1;
    rows += static_cast<double>(f->num_rows());
  }
  return rows;
}

// The fresh memory the import's slices take, alone: `rows` slices of an empty trace allocated by
// the import's own arena (SliceArena::Allocate: reserved, advised, faulted on `threads` threads,
// initialized), with nothing decoded. On a machine where fresh memory is slow (a VM whose host
// backs guest memory anew) this is a floor under the import that no reader of this trace model
// removes.
double FreshSlices(size_t rows, int threads) {
  opscope::Trace trace;
  opscope::import::neuron::SliceArena arena;
  if (!arena.Allocate(rows, &trace, threads)) return -1;
  return arena.data()[rows / 2].ts_ns == 0 ? static_cast<double>(rows) : -1;
}

void Print(const char* label, const ChildRun& run, int threads, double file_mb) {
  if (run.seconds < 0) {
    std::printf("  %-34s failed\n", label);
    return;
  }
  std::printf(
      "  %-34s %6.2f s  %6.1f M rows/s  %5.1f M rows/s per core  (CPU %6.2f s: %5.1f M rows per "
      "CPU-s)  peak RSS %6.0f MB (%.2fx the files)\n",
      label, run.seconds, run.rows / run.seconds / 1e6, run.rows / run.seconds / threads / 1e6,
      run.cpu_s, run.rows / run.cpu_s / 1e6, run.peak_mb, run.peak_mb / file_mb);
}

}  // namespace

int main(int argc, char** argv) {
  long instructions = 10000000, dma = 1000000;
  int runs = 2;
  int import_only = 0, decode_only = 0;
  std::string profile, baseline;
  constexpr const char* kUsage =
      "usage: neuron_bench [--instructions N] [--dma N] [--profile DIR] [--baseline OPSCOPE] "
      "[--runs N]\n       neuron_bench --profile DIR --import-only THREADS\n"
      "       neuron_bench --profile DIR --decode-only THREADS";
  if (opscope::bench::WantsHelp(argc, argv)) return opscope::bench::Usage(kUsage);
  if (argc % 2 == 0) return opscope::bench::Usage(kUsage, argv[argc - 1]);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--instructions") {
      instructions = std::atol(argv[i + 1]);
    } else if (flag == "--dma") {
      dma = std::atol(argv[i + 1]);
    } else if (flag == "--profile") {
      profile = argv[i + 1];
    } else if (flag == "--baseline") {
      baseline = argv[i + 1];
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else if (flag == "--import-only") {
      import_only = std::atoi(argv[i + 1]);
    } else if (flag == "--decode-only") {
      decode_only = std::atoi(argv[i + 1]);
    } else {
      return opscope::bench::Usage(kUsage, argv[i]);
    }
  }
  if (import_only > 0 || decode_only > 0) {  // one run in this process, for a profiler
    const auto start = Clock::now();
    const double rows =
        import_only > 0 ? ImportRows(profile, import_only) : DecodeRows(profile, decode_only);
    std::printf("%.0f rows in %.2f s\n", rows, Since(start));
    return rows < 0 ? 1 : 0;
  }
  const std::string source = OPSCOPE_SOURCE_DIR;
  const bool generate = profile.empty() || !fs::exists(fs::path(profile) / "Metadata.parquet");
  if (generate) {
    if (!Shell("node --version > /dev/null 2>&1")) {
      std::printf("neuron_bench: skipped: node is not installed (it runs the profile's writer)\n");
      return 0;
    }
    for (const std::string folder : {"/bench/neuron", "/tests/import/neuron"}) {
      const std::string d = source + folder;
      if (!fs::exists(d + "/node_modules/parquet-wasm/package.json") &&
          !Shell("cd '" + d + "' && npm ci --no-audit --no-fund > /dev/null 2>&1")) {
        std::fprintf(stderr, "neuron_bench: npm ci failed in %s\n", d.c_str());
        return 1;
      }
    }
    if (profile.empty()) {
      profile = (fs::temp_directory_path() / ("neuron_bench_" + std::to_string(getpid()))).string();
    }
    const auto start = Clock::now();
    if (!Shell("node '" + source + "/bench/neuron/write_profile.mjs' '" +
               OPSCOPE_NEURON_SCHEMA_REFERENCE + "' '" + profile + "' --instructions " +
               std::to_string(instructions) + " --dma " + std::to_string(dma) + " > /dev/null")) {
      std::fprintf(stderr, "neuron_bench: writing %s failed\n", profile.c_str());
      return 1;
    }
    std::printf("wrote %s in %.0f s (parquet-wasm)\n", profile.c_str(), Since(start));
  }
  const double file_mb = static_cast<double>(DirBytes(profile)) / 1e6;
  if (generate) {
    std::printf("profile %s: %.1f MB (%ld instructions, %ld DMA packets as generated)\n",
                profile.c_str(), file_mb, instructions, dma);
  } else {
    std::printf("profile %s: %.1f MB (written before; rows as imported below)\n", profile.c_str(),
                file_mb);
  }

  opscope::bench::WarmPageCache(profile);
  const auto read_start = Clock::now();
  opscope::bench::WarmPageCache(profile);
  const double read_s = Since(read_start);
  std::printf("baseline: reading the files from the page cache: %.2f s (%.0f MB/s)\n", read_s,
              file_mb / read_s);
  constexpr double kTargetRowsPerCore = 20e6;
  for (const int threads : {1, 2}) {
    const ChildRun decode = InChild(profile, runs, [&] { return DecodeRows(profile, threads); });
    const ChildRun import = InChild(profile, runs, [&] { return ImportRows(profile, threads); });
    const ChildRun memory =
        import.rows > 0
            ? InChild(profile, runs,
                      [&] { return FreshSlices(static_cast<size_t>(import.rows), threads); })
            : ChildRun{};
    std::printf("--threads %d\n", threads);
    Print("baseline: Parquet decode alone", decode, threads, file_mb);
    Print("baseline: the slices' memory alone", memory, threads, file_mb);
    Print("opscope import", import, threads, file_mb);
    if (import.seconds > 0) {
      const double per_core = import.rows / import.seconds / threads;
      std::printf("  target >= %.0f M rows/s per core: %s\n", kTargetRowsPerCore / 1e6,
                  per_core >= kTargetRowsPerCore ? "met" : "NOT met");
    }
  }
  opscope::bench::ReportFirstAnswer("Neuron profile " + profile, profile, OPSCOPE_BINARY, baseline,
                                    runs, 10.0);
  if (generate) {
    std::error_code ec;
    fs::remove_all(profile, ec);
  }
  return 0;
}
