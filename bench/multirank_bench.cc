// A whole job in one process against the same job over `mpirun -n 2`: wall time, MB/s and peak
// RSS per process, with the targets beside the figures.
//
//   multirank_bench                     32 generated ranks x 64 MB in /tmp, removed at the end
//   multirank_bench --keep              keep the generated rank sets for the next run
//   multirank_bench --ranks 8 --mb 16   a quick run
//   multirank_bench --dir DIR           an existing job's rank files instead
//   multirank_bench --no-explore        without the Explorer's first-view timing
//   multirank_bench --repeat N          N interleaved rounds (default 3), the best of each kept
//
// Each run is `opscope report DIR --json --stats` as a user runs it: one process on one core
// (--threads 1, the baseline), mpirun -n 2 --bind-to none (each process on one thread: the default
// divides a host's cores among its processes), the same with OpenMPI's default binding (each
// process bound to one core), and one process on every core (the default without mpirun); the
// figures per process come from --stats (import + summary time, CPU time, peak RSS), the wall
// times and every run's CPU time (all its processes, mpirun's included) from here; mpirun's own
// start-up and exit (`mpirun -n 2 /bin/true`) is timed too, so that the wall clock is given with
// and without it. The runs go in rounds (one of each configuration per round, interleaved, so
// that the VM's speed drifting over minutes shifts every configuration alike), and each
// configuration's figures are those of its fastest run (least wall time): a run can only be slowed
// by other work, never sped up. Every run must print the same JSON. Targets (docs/multi-rank.md):
// >= 400 MB/s per process end to end, peak memory per process <= 0.5x the JSON it imports, 2
// processes >= 1.7x faster than 1; and `opscope explore` on 16 generated ranks x 50 MB: the job
// page's first view (/api/job and the job's first viewport answered) within 3 s.
#include <fmt/format.h>
#include <httplib.h>
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/page_cache.h"
#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/job.h"  // sizeof(CollectiveRecord) in the scaling model
#include "tests/common/child_process.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- Generated ranks: Kineto JSON as torch.profiler writes it for a DDP step ----------------

struct Writer {
  std::string out;
  int64_t ext = 1;
  void Event(const char* cat, std::string_view name, int pid, int tid, int64_t ts_ns,
             int64_t dur_ns, const std::string& args) {
    fmt::format_to(
        std::back_inserter(out),
        "  {{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, "
        "\"ts\": {}.{:03d}, \"dur\": {}.{:03d}, \"args\": {{{}}}}},\n",
        cat, name, pid, tid, ts_ns / 1000, ts_ns % 1000, dur_ns / 1000, dur_ns % 1000, args);
  }
  void Flow(const char* ph, int64_t id, int pid, int tid, int64_t ts_ns) {
    fmt::format_to(std::back_inserter(out),
                   "  {{\"ph\": \"{}\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {}.{:03d}, "
                   "\"cat\": \"ac2g\", \"name\": \"ac2g\"{}}},\n",
                   ph, id, pid, tid, ts_ns / 1000, ts_ns % 1000,
                   ph[0] == 'f' ? ", \"bp\": \"e\"" : "");
  }
};

constexpr const char* kOps[] = {"aten::linear",  "aten::layer_norm", "aten::gelu",
                                "aten::add",     "aten::mul",        "aten::softmax",
                                "aten::dropout", "aten::matmul"};
constexpr const char* kKernels[] = {
    "ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4>",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"};

// One rank's trace of about `target_bytes`: steps of op -> launch -> kernel, each step ending with
// an all_reduce on the NCCL stream. Rank 5 computes 10% longer (a straggler); every rank's clock
// is offset by up to +-2 ms.
std::string RankTrace(int rank, int ranks, size_t target_bytes) {
  std::mt19937_64 rng(static_cast<uint64_t>(rank) * 7919 + 1);
  Writer w;
  w.out.reserve(target_bytes + (1 << 20));
  w.out += fmt::format(
      "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA "
      "H100\"}}],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": "
      "{}}},\n  \"traceEvents\": [\n",
      rank, ranks);
  const int pid = 1000 + rank, tid = pid;
  int64_t t = 1'000'000'000 + static_cast<int64_t>(rng() % 4'000'000) - 2'000'000;
  const double slow = rank == 5 ? 1.10 : 1.0;
  for (int64_t step = 0; w.out.size() < target_bytes; ++step) {
    const int64_t step_start = t;
    const size_t step_mark = w.out.size();
    for (int i = 0; i < 200; ++i) {
      const int64_t ext = w.ext++, corr = 1'000'000 + ext;
      const int64_t op_dur = 20'000 + static_cast<int64_t>(rng() % 10'000);
      const int64_t k_dur = static_cast<int64_t>((30'000 + rng() % 20'000) * slow);
      w.Event(
          "cpu_op", kOps[i % 8], pid, tid, t, op_dur,
          fmt::format("\"External id\": {}, \"Record function id\": 0, \"Ev Idx\": {}", ext, i));
      w.Event("cuda_runtime", "cudaLaunchKernel", pid, tid, t + 5000, 6000,
              fmt::format("\"External id\": {}, \"cbid\": 211, \"correlation\": {}", ext, corr));
      w.Flow("s", corr, pid, tid, t + 5000);
      w.Event("kernel", kKernels[i % 4], 0, 7, t + 12'000, k_dur,
              fmt::format("\"External id\": {}, \"queued\": 0, \"device\": 0, \"context\": 1, "
                          "\"stream\": 7, \"correlation\": {}, \"registers per thread\": 128, "
                          "\"grid\": [132, 1, 1], \"block\": [256, 1, 1]",
                          ext, corr));
      w.Flow("f", corr, 0, 7, t + 12'000);
      t += k_dur + 2000;
    }
    // The all_reduce: every rank's kernel ends at the same (global) moment.
    const int64_t ext = w.ext++, corr = 1'000'000 + ext;
    const int64_t arrive = t + 15'000;
    const int64_t end = step_start + static_cast<int64_t>(200 * 52'000 * 1.10) + 600'000;
    w.Event("cpu_op", "record_param_comms", pid, tid, t, 10'000,
            fmt::format("\"External id\": {}, \"Collective name\": \"allreduce\", \"dtype\": "
                        "\"Float\", \"In msg nelems\": 4194304, \"Out msg nelems\": 4194304, "
                        "\"Group size\": {}, \"Process Group Name\": \"0\"",
                        ext, ranks));
    w.Event("cuda_runtime", "cudaLaunchKernel", pid, tid, t + 2000, 6000,
            fmt::format("\"External id\": {}, \"cbid\": 211, \"correlation\": {}", ext, corr));
    w.Event("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)", 0, 20,
            arrive, std::max<int64_t>(end - arrive, 1000),
            fmt::format("\"External id\": {}, \"device\": 0, \"stream\": 20, \"correlation\": {}, "
                        "\"Collective name\": \"allreduce\", \"In msg nelems\": 4194304, \"Out msg "
                        "nelems\": 4194304, \"Group size\": {}, \"dtype\": \"Float\", \"Process "
                        "Group Name\": \"0\", \"Process Group Description\": \"default_pg\"",
                        ext, corr, ranks));
    t = std::max(t, end) + 50'000;
    std::string step_event;
    Writer s;
    s.Event("user_annotation", fmt::format("ProfilerStep#{}", step), pid, tid, step_start,
            t - step_start, fmt::format("\"External id\": {}", w.ext++));
    w.out.insert(step_mark, s.out);
  }
  w.out.resize(w.out.size() - 2);  // the last ",\n"
  w.out +=
      "\n  ],\n  \"traceName\": \"generated\",\n  \"baseTimeNanoseconds\": "
      "1700000000000000000\n}\n";
  return w.out;
}

bool Generate(const fs::path& dir, int ranks, size_t bytes) {
  fs::create_directories(dir);
  for (int r = 0; r < ranks; ++r) {
    const fs::path path = dir / fmt::format("rank{}.json", r);
    if (fs::exists(path) && fs::file_size(path) >= bytes) continue;  // kept from a previous run
    std::ofstream(path, std::ios::binary) << RankTrace(r, ranks, bytes);
    if (!fs::exists(path) || fs::file_size(path) < bytes) return false;
  }
  return true;
}

// ---- Running opscope -----------------------------------------------------------------------

struct ProcessFigures {
  double mb = 0, seconds = 0, cpu_seconds = 0, rss_mb = 0;
};
struct RunFigures {
  bool ok = false;
  double wall_s = 0;
  double cpu_s = 0;  // every process of the run, mpirun and its daemons included
  std::string json;
  std::vector<ProcessFigures> processes;
  double analysis_s = 0;
  double analysis_rss_mb = 0;
  double summary_bytes = 0;  // the encoded summaries process 0 gathers
  long long summary_ranks = 0, summary_collectives = 0;
  std::vector<std::string> phases;  // --stats' "seconds since it started" line per MPI process
};

double ChildrenCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

RunFigures RunReport(const std::string& command) {
  RunFigures r;
  const fs::path err = fs::temp_directory_path() / fmt::format("multirank_bench_{}.err", getpid());
  const double cpu_start = ChildrenCpuSeconds();
  const auto start = Clock::now();
  FILE* p = popen((command + " 2>'" + err.string() + "'").c_str(), "r");
  if (!p) return r;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.json.append(buf, n);
  const int status = pclose(p);
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_s = ChildrenCpuSeconds() - cpu_start;
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::ifstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    ProcessFigures f;
    double mbps = 0;
    long long files = 0, index = 0, count = 0;
    if (std::sscanf(line.c_str(),
                    "opscope report: process %lld of %lld: %lld rank files, %lf MB of trace in "
                    "%lf s (%lf MB/s, %lf s CPU), peak RSS %lf MB",
                    &index, &count, &files, &f.mb, &f.seconds, &mbps, &f.cpu_seconds,
                    &f.rss_mb) == 8) {
      r.processes.push_back(f);
    }
    if (const size_t at = line.find("seconds since it started: "); at != std::string::npos) {
      r.phases.push_back(line.substr(std::string("opscope report: ").size()));
    }
    std::sscanf(line.c_str(), "opscope report: job analysis on process 0: %lf s, peak RSS %lf MB",
                &r.analysis_s, &r.analysis_rss_mb);
    std::sscanf(line.c_str(),
                "opscope report: summaries gathered: %lf bytes for %lld ranks and %lld collectives",
                &r.summary_bytes, &r.summary_ranks, &r.summary_collectives);
  }
  if (!r.ok) {
    std::ifstream again(err);
    std::fprintf(stderr, "%s failed:\n%s\n", command.c_str(),
                 std::string(std::istreambuf_iterator<char>(again), {}).c_str());
  }
  fs::remove(err);
  return r;
}

// mpirun's own start-up and exit: `mpirun ... /bin/true`, best of `tries` (wall seconds), or -1.
double LauncherSeconds(const std::string& mpirun, int tries) {
  double best = -1;
  for (int i = 0; i < tries; ++i) {
    const auto start = Clock::now();
    const int status = std::system((mpirun + "/bin/true >/dev/null 2>&1").c_str());
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && (best < 0 || s < best)) best = s;
  }
  return best;
}

// The job's time: the slowest process's share, then process 0's analysis.
double JobSeconds(const RunFigures& r) {
  double slowest = 0;
  for (const ProcessFigures& p : r.processes) slowest = std::max(slowest, p.seconds);
  return slowest + r.analysis_s;
}

const char* Met(bool ok) { return ok ? "met" : "NOT met"; }

// The host's load average (1, 5, 15 minutes) as /proc/loadavg gives it: wall-clock rates on a
// shared machine are read against it (the CPU-time rates depend on it least).
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(in >> a >> b >> c)) return "unknown";
  return fmt::format("{:.2f} {:.2f} {:.2f}", a, b, c);
}

// docs/multi-rank.md's scaling model: 1,024 ranks x 1 GB of trace each over K processes, from
// this run's figures. A rank's collectives (and so its summary) grow with its trace's size; a
// process holds one trace at a time; the analysis on process 0 is linear in the collectives.
void PrintScalingModel(const RunFigures& one, const RunFigures& two, double job_mb) {
  if (one.summary_ranks <= 0) return;
  const double ranks = static_cast<double>(one.summary_ranks);
  constexpr double kRanks = 1024, kRankMb = 1000;
  const double rank_mb = job_mb / ranks;
  const double grow = kRankMb / rank_mb;  // per-rank figures from rank_mb to 1 GB
  double mbps = 1e30, rss_per_mb = 0;
  for (const RunFigures* r : {&one, &two}) {
    for (const ProcessFigures& p : r->processes) {
      mbps = std::min(mbps, p.mb / std::max(p.seconds, 1e-9));
      rss_per_mb = std::max(rss_per_mb, p.rss_mb / rank_mb);  // one trace at a time
    }
  }
  const double gathered_mb = one.summary_bytes / ranks * grow * kRanks / 1e6;
  const double collectives = static_cast<double>(one.summary_collectives) / ranks * grow * kRanks;
  // Decoded on process 0: the record plus its kernel name, which is longer than the inline buffer.
  const double decoded_mb = collectives * (sizeof(opscope::CollectiveRecord) + 128) / 1e6;
  const double analysis_s =
      one.analysis_s * collectives / std::max(1.0, static_cast<double>(one.summary_collectives));
  std::printf(
      "\nscaling model, 1,024 ranks x 1 GB (from this run: %.0f MB/s per process, peak RSS "
      "%.3f x the trace in import, %.0f bytes of summary per rank of %.0f MB):\n",
      mbps, rss_per_mb, one.summary_bytes / ranks, rank_mb);
  std::printf(
      "  per process: peak memory at most ~%.0f MB (one 1 GB trace at a time; this run's "
      "peak RSS per MB of one trace, the binary's own included)\n",
      rss_per_mb * kRankMb);
  std::printf(
      "  gathered on process 0: %.0f MB of summaries (%.2g collectives), ~%.0f MB decoded, "
      "analysis ~%.1f s\n",
      gathered_mb, collectives, decoded_mb, analysis_s);
  for (const double k : {64.0, 256.0, 1024.0}) {
    const double per_process = std::ceil(kRanks / k) * kRankMb / mbps;
    std::printf(
        "  K = %4.0f processes: %3.0f rank files each, import %.0f s + analysis %.1f s = "
        "%.0f s\n",
        k, std::ceil(kRanks / k), per_process, analysis_s, per_process + analysis_s);
  }
}

// ---- opscope explore on a job: the time to the job page's first view ----------------------

struct ExploreFigures {
  bool ok = false;
  double server_s = 0;      // until the job page's URL is printed (it listens before importing)
  double first_view_s = 0;  // until /api/job and the job's first viewport have answered
  size_t ranks = 0;
};

// The job page's first viewport as job.js asks for it: the whole aligned axis, every rank's
// device-stream lanes (the "hardware" group) in one request (/api/job/viewport: job lane ids are
// the rank's position << 20 | its lane), 1290 pixels wide.
std::string FirstViewportPath(simdjson::dom::element job) {
  std::string lanes;
  size_t position = 0;
  for (simdjson::dom::element rank : job["ranks"].get_array()) {
    for (simdjson::dom::element lane : rank["lanes"].get_array()) {
      if (std::string_view(lane["group"].get_string().value_unsafe()) != "hardware") continue;
      const int64_t id = lane["id"].get_int64().value_unsafe();
      lanes += (lanes.empty() ? "" : ",") + std::to_string((int64_t(position) << 20) | id);
    }
    ++position;
  }
  return fmt::format("/api/job/viewport?t0=0&t1={}&width=1290&lanes={}",
                     job["t1"].get_int64().value_unsafe(), lanes);
}

// GET `path` as the page does: again every 5 ms while the server answers 503 (the traces are still
// loading: it listens before it imports), until `until`. Null when it never answered.
httplib::Result GetWhenLoaded(httplib::Client& client, const std::string& path,
                              Clock::time_point until) {
  while (true) {
    httplib::Result res = client.Get(path);
    if (!res || res->status != 503 || Clock::now() >= until) return res;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Starts `opscope explore DIR --port 0` and times what a user waits for: from the start until
// the job page's URL is printed (the server listens before it imports), and until /api/job and
// the job's first viewport (every rank's lanes in one answer) have answered, each asked again while
// the server says the job is still loading. Stops the server (SIGTERM).
ExploreFigures TimeExplore(const std::string& dir) {
  ExploreFigures f;
  const auto start = Clock::now();
  const auto until = start + std::chrono::seconds(120);
  opscope::testing::ChildProcess child({OPSCOPE_BINARY, "explore", dir, "--port", "0"},
                                       /*stderr_to_pipe=*/false);
  if (!child.started()) return f;
  child.ReadUntil(
      [](const std::string& out) {
        const size_t at = out.find("job.html");
        return at != std::string::npos && out.find('\n', at) != std::string::npos;
      },
      until);
  const std::string& out = child.output();
  const size_t page = out.find("job.html");
  const size_t url = page == std::string::npos ? page : out.rfind("http://127.0.0.1:", page);
  const int port = url == std::string::npos ? -1 : std::atoi(out.c_str() + url + 17);
  f.server_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (port > 0) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    auto job = GetWhenLoaded(client, "/api/job", until);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (job && job->status == 200 && parser.parse(job->body).get(doc) == simdjson::SUCCESS) {
      auto view = GetWhenLoaded(client, FirstViewportPath(doc), until);
      const bool ok = view && view->status == 200;
      f.first_view_s = std::chrono::duration<double>(Clock::now() - start).count();
      f.ranks = doc["ranks"].get_array().size();
      f.ok = ok && f.ranks > 0;
    }
  }
  kill(child.pid(), SIGTERM);
  child.Wait(std::chrono::seconds(30));
  return f;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The baseline, side by side: ImportTrace alone on the same files, in this process on one thread
// (MB/s of CPU time). The job pipeline cannot beat it; the gap is what the per-rank summaries cost.
double ImportAloneMbPerCpuSecond(const std::string& dir, int max_files) {
  double mb = 0, cpu = 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || n++ >= max_files) continue;
    opscope::Trace trace;
    opscope::ImportOptions options;
    options.threads = 1;  // as the one-core job imports
    const double start = CpuSeconds();
    if (!opscope::ImportTrace(e.path().string(), &trace, nullptr, options).ok()) continue;
    cpu += CpuSeconds() - start;
    mb += static_cast<double>(e.file_size()) / 1e6;
  }
  return cpu > 0 ? mb / cpu : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int ranks = 32;
  int mb = 64;
  std::string dir;
  bool keep = false;
  bool explore = true;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      ranks = std::atoi(argv[++i]);
    else if (a == "--mb" && i + 1 < argc)
      mb = std::atoi(argv[++i]);
    else if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--keep")
      keep = true;
    else if (a == "--no-explore")
      explore = false;
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else {
      const bool help = a == "--help" || a == "-h";
      std::fprintf(help ? stdout : stderr,
                   "usage: multirank_bench [--ranks N] [--mb MB] [--dir DIR] [--keep] "
                   "[--no-explore] [--repeat N]\n");
      return help ? 0 : 2;
    }
  }
  if (ranks < 1 || mb < 1 || repeat < 1) {
    std::fprintf(stderr, "multirank_bench: --ranks, --mb and --repeat take a positive number\n");
    return 2;
  }
  if (std::error_code ec; !dir.empty() && !fs::is_directory(dir, ec)) {
    std::fprintf(stderr, "multirank_bench: --dir %s: not a directory of rank files\n", dir.c_str());
    return 2;
  }
  const bool generated = dir.empty();
  if (generated) {
    dir = (fs::temp_directory_path() / fmt::format("opscope_multirank_bench_{}x{}", ranks, mb))
              .string();
    const auto t0 = Clock::now();
    if (!Generate(dir, ranks, static_cast<size_t>(mb) << 20)) {
      std::fprintf(stderr, "multirank_bench: cannot write the generated ranks to %s\n",
                   dir.c_str());
      return 1;
    }
    std::printf("generated %d ranks x %d MB in %s (%.1f s; %s)\n", ranks, mb, dir.c_str(),
                std::chrono::duration<double>(Clock::now() - t0).count(),
                keep ? "kept for the next run" : "removed at the end; --keep keeps it");
  }
  // The Explorer's target is on 16 ranks x 50 MB: its own generated job (with --dir, none).
  std::string explore_dir;
  double explore_mb = 0;
  if (generated && explore) {
    explore_dir = (fs::temp_directory_path() / "opscope_multirank_bench_16x50").string();
    if (!Generate(explore_dir, 16, size_t{50} << 20)) {
      std::fprintf(stderr, "multirank_bench: cannot write the generated ranks to %s\n",
                   explore_dir.c_str());
      return 1;
    }
    for (const auto& e : fs::directory_iterator(explore_dir)) {
      explore_mb += static_cast<double>(e.file_size()) / 1e6;
    }
  }
  // The generated rank sets (~3 GB) are removed at the end, whatever happens, unless --keep.
  struct RemoveGenerated {
    std::vector<std::string> dirs;
    ~RemoveGenerated() {
      std::error_code ignored;
      for (const std::string& d : dirs) {
        if (!d.empty()) fs::remove_all(d, ignored);
      }
    }
  } remove_generated;
  if (!keep && generated) remove_generated.dirs = {dir, explore_dir};
  double total_mb = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total_mb += static_cast<double>(e.file_size()) / 1e6;
  }
  const std::string report = fmt::format("'{}' report '{}' --json --stats", OPSCOPE_BINARY, dir);
  // Unbound, as docs/multi-rank.md advises on a host whose cores other work shares: OpenMPI binds
  // each of 2 processes to one core by default, and a bound process cannot move off a core that
  // other work keeps busy. The default binding is measured too, for comparison.
  const std::string mpirun_bound = fmt::format("{} --oversubscribe{} -n 2 ", OPSCOPE_MPIEXEC,
                                               geteuid() == 0 ? " --allow-run-as-root" : "");
  const std::string mpirun = mpirun_bound + "--bind-to none ";
  std::printf("job: %s, %.1f MB of JSON; %u cores, load average %s at the start\n", dir.c_str(),
              total_mb, std::thread::hardware_concurrency(), LoadAverage().c_str());
  // A first run warms the page cache, so that the measured runs read the files from memory.
  RunReport(report);
  const double launch_s = LauncherSeconds(mpirun, 3);
  const double launch_bound_s = LauncherSeconds(mpirun_bound, 3);
  RunFigures one, two, two_bound, all_cores;  // the fastest run of each
  bool same = true;                           // every run printed the same JSON
  std::string first_json;
  for (int round = 0; round < repeat; ++round) {
    const std::pair<RunFigures*, std::string> runs[] = {{&one, report + " --threads 1"},
                                                        {&two, mpirun + report},
                                                        {&two_bound, mpirun_bound + report},
                                                        {&all_cores, report}};
    for (const auto& [best, command] : runs) {
      opscope::bench::WarmPageCache(dir);  // every run reads the ranks from memory
      RunFigures r = RunReport(command);
      const size_t processes = best == &two || best == &two_bound ? 2 : 1;
      if (!r.ok || r.processes.size() != processes) {
        std::fprintf(stderr, "multirank_bench: a run failed (is opscope built with MPI?)\n");
        return 1;
      }
      if (first_json.empty()) first_json = r.json;
      same = same && r.json == first_json;
      if (!best->ok || r.wall_s < best->wall_s) *best = std::move(r);
    }
  }
  if (launch_s < 0 || launch_bound_s < 0) {
    std::fprintf(stderr, "multirank_bench: mpirun -n 2 /bin/true failed\n");
    return 1;
  }
  std::printf("each configuration: the fastest of %d interleaved runs (least wall time)\n", repeat);
  std::printf("load average after the runs: %s\n", LoadAverage().c_str());
  std::printf(
      "mpirun's own start-up and exit (mpirun -n 2 /bin/true, best of 3): %.2f s unbound, "
      "%.2f s bound\n",
      launch_s, launch_bound_s);
  std::printf("\n%-14s %8s %8s %8s %8s %8s %11s %12s %11s %14s\n", "run", "wall s", "-launch",
              "CPU s", "job s", "process", "MB imported", "MB/s (wall)", "MB/s (CPU)",
              "peak RSS MB");
  double max_rss_ratio = 0;
  auto rows = [&](const char* name, const RunFigures& r, double launch) {
    for (size_t p = 0; p < r.processes.size(); ++p) {
      const ProcessFigures& f = r.processes[p];
      max_rss_ratio = std::max(max_rss_ratio, f.rss_mb / std::max(f.mb, 1e-9));
      std::printf(
          "%-14s %8.2f %8.2f %8.2f %8.2f %8zu %11.1f %12.0f %11.0f %14.1f  (%.3fx its JSON)\n",
          p == 0 ? name : "", r.wall_s, r.wall_s - launch, r.cpu_s, JobSeconds(r), p, f.mb,
          f.mb / std::max(f.seconds, 1e-9), f.mb / std::max(f.cpu_seconds, 1e-9), f.rss_mb,
          f.rss_mb / f.mb);
    }
  };
  rows("1 process x1", one, 0);
  rows("mpirun -n 2", two, launch_s);
  rows("-n 2 bound", two_bound, launch_bound_s);
  rows("1 process xN", all_cores, 0);
  for (const RunFigures* r : {&two, &two_bound}) {
    for (const std::string& line : r->phases) {
      std::printf("  %s %s\n", r == &two ? "unbound" : "bound  ", line.c_str());
    }
  }
  std::printf(
      "  (wall s: from start to exit; -launch: without mpirun's start-up and exit; CPU s: every "
      "process of the run, mpirun's included; job s: the slowest process's import + summary, then "
      "the analysis; MB/s per process: its import + summary)\n");
  const double import_alone = ImportAloneMbPerCpuSecond(dir, 4);
  std::printf(
      "\nbaseline: ImportTrace alone on the same files in this process: %.0f MB/s of CPU "
      "time; the one-process job runs at %.0f MB/s of CPU time (%.0f%% of it)\n",
      import_alone, one.processes[0].mb / std::max(one.processes[0].cpu_seconds, 1e-9),
      100.0 * one.processes[0].mb / std::max(one.processes[0].cpu_seconds, 1e-9) /
          std::max(import_alone, 1e-9));
  std::printf("\ntargets (the baseline is `1 process x1` of this run):\n");
  std::printf("  >= 400 MB/s per process end to end (import + summary, wall):\n");
  auto per_process = [](const char* name, const RunFigures& r) {
    for (size_t p = 0; p < r.processes.size(); ++p) {
      const ProcessFigures& f = r.processes[p];
      const double mbps = f.mb / std::max(f.seconds, 1e-9);
      std::printf("    %-13s process %zu: %4.0f MB/s (%4.0f MB/s of CPU time)  %s\n", name, p, mbps,
                  f.mb / std::max(f.cpu_seconds, 1e-9), Met(mbps >= 400));
    }
  };
  per_process("1 process x1", one);
  per_process("mpirun -n 2", two);
  per_process("-n 2 bound", two_bound);
  std::printf("  peak memory per process <= 0.5x the JSON it imports: worst %.3fx  %s\n",
              max_rss_ratio, Met(max_rss_ratio <= 0.5));
  std::printf("  2 processes >= 1.7x faster than 1:\n");
  auto speedup = [](const char* what, double base, double run) {
    const double x = base / std::max(run, 1e-9);
    std::printf("    %-52s %5.2fx  %s\n", what, x, Met(x >= 1.7));
  };
  speedup("job (import + analysis), unbound", JobSeconds(one), JobSeconds(two));
  speedup("job (import + analysis), bound", JobSeconds(one), JobSeconds(two_bound));
  speedup("wall without mpirun's start-up and exit, unbound", one.wall_s, two.wall_s - launch_s);
  speedup("wall without mpirun's start-up and exit, bound", one.wall_s,
          two_bound.wall_s - launch_bound_s);
  speedup("wall with mpirun's start-up and exit, unbound", one.wall_s, two.wall_s);
  speedup("wall with mpirun's start-up and exit, bound", one.wall_s, two_bound.wall_s);
  std::printf(
      "  (one process on all %u cores: %.2fx the one-core process on the job; mpirun -n 2 is "
      "%.2fx it)\n",
      std::thread::hardware_concurrency(), JobSeconds(one) / JobSeconds(all_cores),
      JobSeconds(all_cores) / JobSeconds(two));
  std::printf("  report identical in all %d runs: %s\n", 4 * repeat, same ? "yes" : "NO");
  PrintScalingModel(one, two, total_mb);
  if (!explore_dir.empty()) {
    TimeExplore(explore_dir);  // warms the page cache
    ExploreFigures e;          // the fastest first view of `repeat` runs
    for (int i = 0; i < repeat; ++i) {
      opscope::bench::WarmPageCache(explore_dir);
      const ExploreFigures r = TimeExplore(explore_dir);
      if (!e.ok || (r.ok && r.first_view_s < e.first_view_s)) e = r;
    }
    std::printf(
        "\nopscope explore %s (%zu ranks, %.0f MB of JSON): job page URL after %.2f s, first "
        "view (/api/job and the job's first viewport) after %.2f s\n",
        explore_dir.c_str(), e.ranks, explore_mb, e.server_s, e.first_view_s);
    std::printf("  16 ranks x 50 MB: first view <= 3 s (best of %d): %.2f s  %s\n", repeat,
                e.first_view_s,
                e.ok ? Met(e.first_view_s <= 3.0) : "NOT met (the server did not answer)");
  }
  return same ? 0 : 1;
}
