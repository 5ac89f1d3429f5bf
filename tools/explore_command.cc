// opscope explore PATH... [--port N] [--host ADDR] [--threads N] [--quiet]: serve traces to the
// browser Explorer.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "tools/commands.h"
#include "tools/job_commands.h"
#include "tools/progress.h"

namespace opscope::tools {
namespace {

constexpr int kDefaultPort = 8765;
std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

// SIGINT / SIGTERM set g_stop from now on. Installed before the server starts, so a signal sent
// as soon as the port is printed stops the server instead of killing the process.
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Returns once g_stop is set (InstallStopHandlers), or, when `exit_after_s` > 0, that many seconds
// after `loaded` turned true: a script's `--exit-after` serves every trace for that long, however
// long the import takes, as when the import came before the server.
void WaitForStopSignal(int exit_after_s, const std::atomic<bool>& loaded) {
  std::optional<std::chrono::steady_clock::time_point> since;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (exit_after_s <= 0) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!since && loaded.load()) since = now;
    if (since && now - *since > std::chrono::seconds(exit_after_s)) return;
  }
}

constexpr int64_t kMaxSyntheticEvents = 20'000'000;  // about 2 GB with its index
constexpr size_t kMinTokenLength = 16;
// SIGTERM / Ctrl-C to exit, at most: requests still running after this are abandoned.
constexpr auto kStopGrace = std::chrono::milliseconds(800);

// Where a trace came from, relative to what the user opened: the file name of a file opened
// directly, or the path inside an opened directory. Never an absolute path the user did not type.
std::string SourceName(const std::string& opened, const std::string& file) {
  namespace fs = std::filesystem;
  if (opened == file) return fs::path(file).filename().string();
  std::error_code ec;
  const fs::path rel = fs::relative(file, opened, ec);
  return ec || rel.empty() ? fs::path(file).filename().string() : rel.string();
}

// What the UI calls a trace: the opened directory's name and the path inside it, or the file name.
std::string DisplayName(const std::string& opened, const std::string& file) {
  namespace fs = std::filesystem;
  if (opened == file) return fs::path(file).filename().string();
  const std::string dir = fs::path(opened).filename().empty()
                              ? fs::path(opened).parent_path().filename().string()
                              : fs::path(opened).filename().string();
  return dir + "/" + SourceName(opened, file);
}

struct ExploreArgs {
  std::vector<std::string> paths;
  int port = -1;  // -1: the default port, or any free one when it is taken
  std::string host = "127.0.0.1";
  std::string token;
  int exit_after_s = 0;
  int64_t synthetic_events = 0;
  int threads = 0;     // --threads: threads importing one trace (0: the cores available)
  bool quiet = false;  // --quiet: no progress bar on stderr
};

// The job's report from the summaries of the traces opened; the Explorer shows its page when
// every trace has its own rank, else the traces open one by one (the job page's URL, printed
// before the traces were read, then opens them, saying why).
void SetJobIfOne(std::vector<RankSummary> summaries, Explorer* explorer) {
  const size_t n = summaries.size();
  const JobReport report = AnalyzeJob(std::move(summaries));
  if (!report.error.empty()) {
    std::printf("opscope explore: not one job (%s); opening the traces one by one\n",
                report.error.c_str());
    explorer->ExpectJob(false, report.error);
    return;
  }
  for (const std::string& w : report.warnings) std::printf("opscope explore: %s\n", w.c_str());
  explorer->SetJob(report);
  std::printf("opened a job: %zu ranks of %d, %zu collectives matched%s\n", report.ranks.size(),
              report.world_size, report.collectives.size(),
              n > report.ranks.size() ? " (partial: see the errors above)" : "");
}

// One trace file to open: the path it was found under, and what importing it gave.
struct Opened {
  std::string path;
  std::string file;
  std::string part;     // a host of a several-host profile (ListTraceParts); "" = the whole file
  int part_rank = -1;   // its index among the file's parts
  size_t slot = 0;      // its index in the Explorer (Explorer::AddLoading)
  RankSummary summary;  // for a job: its summary (the import error when it failed)
  bool ok = false;
};

// Imports (and for a job summarises) every file and hands each to the Explorer as soon as it is
// imported (finalized, indexed and published there), printing a line per file. One file: on
// `threads` threads (0: the cores available), a bar of bytes read on stderr. Several: as many at
// once as there are cores (a job's ranks are independent traces), each on its share of the cores
// unless `threads` is given, a bar of files done. Each entry is written by one thread only.
void ImportAll(std::vector<Opened>* opened, bool job, int threads, bool quiet, Explorer* explorer) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t pool_size = std::min<size_t>(opened->size(), cores);
  ImportOptions options;
  // A named pipe is served as it is written, however long its writer takes: the page shows the
  // loading state meanwhile, and SIGTERM stops the server.
  options.pipe_writer_wait_ms = 0;
  options.threads = threads > 0 || pool_size <= 1
                        ? threads
                        : static_cast<int>(std::max<size_t>(1, cores / pool_size));
  const bool one = opened->size() == 1;
  ProgressBar progress(
      one ? "import " + std::filesystem::path(opened->front().file).filename().string()
          : "import " + std::string(job ? "rank files" : "traces"),
      quiet);
  std::function<void(uint64_t, uint64_t)> bar = one ? progress.Callback() : nullptr;
  std::mutex mu;  // guards the bar of files done and stdout
  size_t files_done = 0;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < opened->size();) {
      Opened& o = (*opened)[i];
      const auto t0 = std::chrono::steady_clock::now();
      ImportOptions file_options = options;
      file_options.part = o.part;
      file_options.progress = [&bar, explorer, slot = o.slot](uint64_t read, uint64_t total) {
        explorer->ReportProgress(slot, read, total);
        if (bar) bar(read, total);
      };
      explorer->ReportProgress(o.slot, 0, 0);  // importing from now on
      Trace trace;
      ImportStats stats;
      const Status status = ImportTrace(o.file, &trace, &stats, file_options);
      o.ok = status.ok();
      if (job) {
        std::error_code size_error;
        const uint64_t bytes = std::filesystem::file_size(o.file, size_error);
        const RankFile rank_file{o.file, size_error ? 0 : bytes,
                                 o.part.empty() ? RankFromPath(o.file) : o.part_rank, o.part};
        if (o.ok) {
          o.summary = SummarizeRank(trace, rank_file);
        } else {  // the job reports it and says it is partial
          o.summary.file = o.file;
          o.summary.part = o.part;
          o.summary.file_bytes = rank_file.bytes;
          o.summary.rank = rank_file.name_rank;
          o.summary.error = status.message();
          o.summary.error_offset = status.offset();
        }
      }
      const size_t events = trace.slices().size();
      if (o.ok) {
        explorer->CompleteTrace(o.slot, std::move(trace), options.threads);
      } else {
        explorer->FailTrace(o.slot, status);
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu);
      if (o.ok) {
        std::printf("opened %s: %zu events in %.2f s%s\n", RankFileName(o.file, o.part).c_str(),
                    events, seconds,
                    stats.skipped ? " (some events skipped, see the trace header)" : "");
      } else {
        std::fprintf(stderr, "opscope explore: %s: %s (skipped)\n",
                     RankFileName(o.file, o.part).c_str(), status.message().c_str());
      }
      std::fflush(stdout);
      if (!one) progress.UpdateCount(++files_done, opened->size(), job ? "rank files" : "traces");
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < pool_size; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  progress.Done();
}

// Every trace file under the paths given (a path that cannot be read is said and skipped), a
// profile of several hosts as one trace per host (ListTraceParts), each added to the Explorer as a
// trace still loading. `*job`: the traces are one distributed job: several of them, found in
// folders only (no file named on its own) or in profiles of several hosts.
std::vector<Opened> FindOpened(const std::vector<std::string>& paths, Explorer* explorer,
                               bool* job) {
  std::vector<Opened> opened;
  bool single_file = false;
  for (const std::string& path : paths) {
    std::vector<std::string> files;
    if (const Status found = FindTraces(path, &files); !found.ok()) {
      std::fprintf(stderr, "opscope explore: %s\n", found.message().c_str());
      continue;
    }
    const bool folder = std::filesystem::is_directory(path);
    for (std::string& file : files) {
      std::vector<std::string> parts;
      if (!ListTraceParts(file, &parts).ok()) parts.clear();  // its import says what is wrong
      single_file |= !folder && parts.empty();
      std::error_code size_error;
      const uint64_t bytes = std::filesystem::file_size(file, size_error);
      for (size_t i = 0; i < std::max<size_t>(parts.size(), 1); ++i) {
        Opened& o = opened.emplace_back();
        o.path = path;
        o.file = file;
        if (!parts.empty()) {
          o.part = parts[i];
          o.part_rank = static_cast<int>(i);
        }
        o.slot = explorer->AddLoading(RankFileName(DisplayName(o.path, o.file), o.part),
                                      RankFileName(SourceName(o.path, o.file), o.part),
                                      size_error ? 0 : bytes / std::max<size_t>(parts.size(), 1));
      }
    }
  }
  *job = !single_file && opened.size() > 1;
  return opened;
}

// Loads everything the Explorer was told to expect, while it serves: the files (then, for a job,
// its report) and the synthetic trace. Says when nothing could be opened.
void LoadAll(std::vector<Opened>* opened, bool job, const ExploreArgs& args, size_t synthetic_slot,
             Explorer* explorer) {
  if (!opened->empty()) ImportAll(opened, job, args.threads, args.quiet, explorer);
  if (job) {
    std::vector<RankSummary> summaries;
    for (Opened& o : *opened) summaries.push_back(std::move(o.summary));
    SetJobIfOne(std::move(summaries), explorer);
  }
  size_t ok = 0;
  for (const Opened& o : *opened) ok += o.ok ? 1 : 0;
  if (args.synthetic_events > 0) {
    explorer->ReportProgress(synthetic_slot, 0, 0);
    SyntheticTraceOptions synthetic;
    synthetic.target_events = args.synthetic_events;
    Trace trace = MakeSyntheticNeuronTrace(synthetic);
    std::printf("generated a synthetic Neuron-style trace: %zu events\n", trace.slices().size());
    explorer->CompleteTrace(synthetic_slot, std::move(trace), args.threads);
    ++ok;
  }
  if (ok == 0) {
    std::fprintf(stderr,
                 "opscope explore: no trace could be opened (the Explorer's page says why)\n");
  }
  std::fflush(stdout);
}

// The address an `ssh -L` forward reaches the server at from this host: the one it listens on,
// bracketed when IPv6 ("[::1]"), the loopback of its family for a wildcard.
std::string ForwardTarget(const std::string& host) {
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::" || host == "[::]") return "[::1]";
  if (host.find(':') != std::string::npos && host.front() != '[') return "[" + host + "]";
  return host;
}

// Prints where the Explorer serves (and how to reach it from elsewhere).
void PrintAccess(const Explorer& server, const ExploreArgs& args, bool has_job) {
  const int port = server.port();
  if (args.port < 0 && port != kDefaultPort) {
    std::printf("opscope explore: port %d is in use; serving on port %d instead\n", kDefaultPort,
                port);
  }
  if (has_job) {
    std::string url = server.Url();
    url.insert(std::min(url.find('?'), url.size()), "job.html");
    std::printf("opscope explore: the job's aligned timeline at %s\n", url.c_str());
  }
  std::printf("opscope explore: serving %zu trace%s at %s\n", server.num_traces(),
              server.num_traces() == 1 ? "" : "s", server.Url().c_str());
  char hostname[256] = "this-host";
  gethostname(hostname, sizeof(hostname) - 1);
  const std::string target = ForwardTarget(args.host);
  if (IsLoopbackHost(args.host)) {
    std::printf("from a laptop: ssh -L %d:%s:%d %s   then open http://127.0.0.1:%d/\n", port,
                target.c_str(), port, hostname, port);
  } else {
    std::printf("access token: %s (required on every request; the URL above carries it)\n",
                server.token().c_str());
    if (args.host == "0.0.0.0" || args.host == "::") {
      std::printf("on the network: http://%s:%d/?token=%s\n", hostname, port,
                  server.token().c_str());
    }
    std::printf(
        "from a laptop: ssh -L %d:%s:%d %s   then open "
        "http://127.0.0.1:%d/?token=%s\n",
        port, target.c_str(), port, hostname, port, server.token().c_str());
  }
  std::printf("press Ctrl-C to stop\n");
  std::fflush(stdout);
}

// Starts serving first, then loads the traces while the page shows their progress; the access
// lines are printed as soon as the server listens.
int RunExplore(const ExploreArgs& args) {
  ExplorerOptions options;
  options.host = args.host;
  options.token = args.token;
  options.compare = args.paths.size() + (args.synthetic_events > 0 ? 1 : 0) > 1;
  options.port = args.port >= 0 ? args.port : kDefaultPort;
  options.fallback_to_any_port = args.port < 0;
  Explorer explorer(options);
  bool job = false;
  std::vector<Opened> opened = FindOpened(args.paths, &explorer, &job);
  const size_t synthetic_slot =
      args.synthetic_events > 0 ? explorer.AddLoading("synthetic") : size_t{0};
  if (explorer.num_traces() == 0) {
    std::fprintf(stderr, "opscope explore: no trace could be opened\n");
    return 1;
  }
  if (job) explorer.ExpectJob();
  // Each import's temporaries (read buffers, staging) serve the next file instead of being
  // returned to the kernel and faulted in again: a fifth fewer page faults on 16 ranks x 50 MB.
  if (opened.size() > 1) KeepFreedMemoryForTheNextTrace();
  InstallStopHandlers();
  if (const Status started = explorer.Start(); !started.ok()) {
    std::fprintf(stderr, "opscope explore: %s\n", started.message().c_str());
    return 1;
  }
  PrintAccess(explorer, args, job);
  std::atomic<bool> loaded{false};
  std::thread loader([&] {
    LoadAll(&opened, job, args, synthetic_slot, &explorer);
    loaded = true;
  });
  WaitForStopSignal(args.exit_after_s, loaded);
  const bool all_done = explorer.Stop(kStopGrace);
  std::printf("opscope explore: stopped\n");
  std::fflush(stdout);
  // Requests that did not return within the grace period, and an import still running, are
  // abandoned with the process rather than waited for (the Explorer's destructor would wait).
  if (!all_done || !loaded) std::_Exit(0);
  loader.join();
  return 0;
}

}  // namespace

void AddExploreCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "explore",
      "Open traces or profile directories in the browser Explorer (several paths: "
      "a comparison)");
  auto args = std::make_shared<ExploreArgs>();
  cmd->add_option("paths", args->paths, "trace files (.json, .json.gz) or profile directories");
  cmd->add_option("--port", args->port,
                  "port to serve on: an error if it is taken; 0 = any free port (default 8765, "
                  "or any free port when 8765 is taken)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", args->host,
                  "address to bind (default 127.0.0.1; any other address requires the access "
                  "token printed at start)");
  cmd->add_option("--token", args->token,
                  "use this access token (at least 16 characters) instead of a generated one")
      ->check(CLI::Validator(
          [](std::string& token) {
            return token.size() >= kMinTokenLength
                       ? std::string()
                       : "the access token must have at least 16 characters (omit --token to "
                         "have one generated)";
          },
          "TOKEN (16+ characters)"));
  cmd->add_option("--synthetic", args->synthetic_events,
                  "also serve a generated Neuron-style trace of about this many events "
                  "(1 to 20000000)")
      ->check(CLI::Range(int64_t{1}, kMaxSyntheticEvents));
  cmd->add_option("--exit-after", args->exit_after_s,
                  "stop this many seconds after every trace has loaded (for scripts)");
  cmd->add_option("--threads", args->threads,
                  "threads that import one trace (default: the cores available; a directory's "
                  "traces import side by side, sharing them; at most 256 are used)")
      ->transform(ThreadCountValidator());
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (none is drawn off a terminal)");
  cmd->callback([args, exit_code] {
    if (args->paths.empty() && args->synthetic_events <= 0) {
      std::fprintf(stderr, "opscope explore: give a trace file or profile directory to open\n");
      *exit_code = 2;
      return;
    }
    *exit_code = RunExplore(*args);
  });
}

}  // namespace opscope::tools
