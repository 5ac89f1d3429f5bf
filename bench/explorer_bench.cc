// Explorer benchmark on a 53 MB-class trace: a generated Neuron-style trace written as a Kineto
// JSON file of about 53 MB (argv[1]: another size in MB), then, as `opscope explore` serves it:
//   - first paint: import + index + the lanes answer + the first full-range viewport, against a
//     baseline run side by side (import + every event in range serialised, as a viewer that
//     ships the whole trace would);
//   - fresh data after an interaction: a zoom or pan at several zoom levels asks for the new
//     viewport and the search marks in it over HTTP on loopback, as the UI does;
//   - the Summary (the report's figures and findings): computed once in the background after the
//     first paint, then served from cache.
// Targets: first paint < 1500 ms; fresh data < 100 ms after any interaction.
// Load (issue 12): 50 keep-alive clients for 30 s on loopback (argv[2]: other seconds) with p99
// under 100 ms, no error and no dropped connection, also while 200 slow clients hold
// connections open.
// First answer end to end (bench/first_answer.h): `opscope explore` started on the generated
// trace (target < 1.5 s, as its first paint), and on `--first-answer FILE` (target < 3 s, for a
// 1 GB trace), until the lanes and the
// full-range viewport are answered over HTTP, with --threads 1, 2 and the default;
// `--baseline BIN` runs another opscope binary side by side, `--first-answer-only` skips the
// rest.
//   explorer_bench [MB] [LOAD_S] [--first-answer FILE] [--baseline BIN] [--first-answer-only]
#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/json_writer.h"
#include "bench/first_answer.h"
#include "explorer/trace_index.h"
#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "opscope/import.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWidth = 1500;  // track width in pixels, as on a laptop screen
double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Writes the trace as Kineto JSON (cpu_op / user_annotation / privateuse1_runtime / kernel /
// instruction events with External id and correlation).
void WriteKinetoJson(const opscope::Trace& t, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::string buf;
  buf.reserve(1 << 22);
  buf +=
      "{\"schemaVersion\": 1, \"deviceProperties\": [], \"displayTimeUnit\": \"ms\", "
      "\"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": [\n";
  bool first = true;
  for (size_t p = 0; p < t.processes().size(); ++p) {
    const auto& proc = t.processes()[p];
    buf += fmt::format(
        "{}{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, "
        "\"args\": {{\"name\": \"{}\"}}}}",
        first ? "" : ",\n", proc.pid, t.Str(proc.name));
    first = false;
    if (proc.is_device) {
      buf += fmt::format(
          ",\n{{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": {}, \"tid\": 0, "
          "\"args\": {{\"labels\": \"{}\"}}}}",
          proc.pid, t.Str(proc.name));
    }
  }
  for (const auto& track : t.tracks()) {
    if (track.kind == opscope::TrackKind::kCounter) continue;
    buf += fmt::format(
        ",\n{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, "
        "\"args\": {{\"name\": \"{}\"}}}}",
        t.processes()[track.process].pid, track.tid, t.Str(track.name));
  }
  for (const auto& s : t.slices()) {
    const auto& track = t.tracks()[s.track];
    buf += fmt::format(
        ",\n{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, "
        "\"tid\": {}, \"ts\": {}.{:03d}, \"dur\": {}.{:03d}, \"args\": {{"
        "\"External id\": {}, \"correlation\": {}}}}}",
        t.Str(s.category), t.Str(s.name), t.processes()[track.process].pid, track.tid,
        s.ts_ns / 1000, static_cast<int>(s.ts_ns % 1000), s.dur_ns / 1000,
        static_cast<int>(s.dur_ns % 1000), s.external_id, s.correlation);
    if (buf.size() > (1 << 22) - 4096) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  buf += "\n], \"traceName\": \"explorer_bench\"}\n";
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

// The baseline: every slice in range serialised, no level of detail.
size_t NaiveViewport(const opscope::Trace& t, int64_t t0, int64_t t1) {
  opscope::JsonWriter w;
  w.BeginArray();
  for (uint32_t i = 0; i < t.slices().size(); ++i) {
    const auto& s = t.slices()[i];
    if (s.ts_ns >= t1 || s.ts_ns + s.dur_ns < t0) continue;
    w.BeginArray();
    w.Int(s.ts_ns);
    w.Int(s.dur_ns);
    w.Int(s.track);
    w.String(t.Str(s.name));
    w.Int(i);
    w.EndArray();
  }
  w.EndArray();
  return w.str().size();
}

// Generates a trace whose Kineto JSON is about `target_mb`, written to `path`.
opscope::Trace Generate(double target_mb, const std::string& path) {
  namespace ex = opscope::explorer;
  // Bytes per event, from a small sample written the same way.
  WriteKinetoJson(opscope::MakeSyntheticNeuronTrace({.target_events = 20000}), path);
  const double per_event = static_cast<double>(std::filesystem::file_size(path)) / 20000;
  const auto events = static_cast<int64_t>(target_mb * 1e6 / per_event);
  auto t0 = Clock::now();
  opscope::Trace generated = opscope::MakeSyntheticNeuronTrace({.target_events = events});
  auto t1 = Clock::now();
  WriteKinetoJson(generated, path);
  std::printf("explorer_bench: generated %zu events in %.0f ms; Kineto JSON %.1f MB\n",
              generated.slices().size(), Ms(t0, t1), std::filesystem::file_size(path) / 1e6);
  return generated;
}

// What `opscope explore` does before the browser draws: import, index, the lanes answer and the
// first full-range viewport. Returns the milliseconds; *index is null when the import failed.
double FirstPaint(const std::string& path, opscope::Trace* trace,
                  const opscope::explorer::TraceIndex** index, double* import_ms) {
  auto o0 = Clock::now();
  const opscope::Status st = opscope::ImportTrace(path, trace);
  auto o1 = Clock::now();
  if (!st.ok()) {
    std::fprintf(stderr, "explorer_bench: import failed: %s\n", st.message().c_str());
    return 0;
  }
  auto* built = new opscope::explorer::TraceIndex(*trace);
  auto o2 = Clock::now();
  opscope::JsonWriter lanes;
  built->WriteLanes(&lanes);
  opscope::explorer::ViewportQuery full;
  full.t0 = built->start_ns();
  full.t1 = built->end_ns();
  full.width_px = kWidth;
  opscope::JsonWriter first;
  built->WriteViewport(full, &first);
  auto o3 = Clock::now();
  std::printf(
      "open: import %.0f ms (%zu events) + index %.0f ms + lanes and first viewport %.0f ms "
      "(%zu lanes, %.1f KB)\n",
      Ms(o0, o1), trace->slices().size(), Ms(o1, o2), Ms(o2, o3), built->lanes().size(),
      (lanes.str().size() + first.str().size()) / 1e3);
  *index = built;
  *import_ms = Ms(o0, o1);
  return Ms(o0, o3);
}

// The baseline's first paint: the same import, then every event of the trace serialised.
double BaselineFirstPaint(const opscope::Trace& trace, const opscope::explorer::TraceIndex& index,
                          double import_ms) {
  auto n0 = Clock::now();
  const size_t bytes = NaiveViewport(trace, index.start_ns(), index.end_ns());
  auto n1 = Clock::now();
  std::printf("baseline: import %.0f ms + every event serialised %.0f ms (%.1f MB)\n", import_ms,
              Ms(n0, n1), bytes / 1e6);
  return import_ms + Ms(n0, n1);
}

// Zooms and pans at seven zoom levels, 15 positions each, with a search active: each asks for
// the viewport and the search marks over HTTP, one after the other (the UI asks for both at
// once, so this is an upper bound). Prints a row per level; returns the slowest, in ms.
double Interactions(httplib::Client& client, const opscope::explorer::TraceIndex& index) {
  const int64_t span = index.end_ns() - index.start_ns();
  std::printf("%-10s %14s %14s %14s %12s\n", "zoom", "viewport ms", "marks ms", "fresh max ms",
              "answer KB");
  double worst = 0;
  for (int64_t zoom : {1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL}) {
    const int64_t w = std::max<int64_t>(span / zoom, 100);
    std::vector<double> view_ms, marks_ms, fresh_ms;
    size_t bytes = 0;
    for (int i = 0; i < 15; ++i) {
      const int64_t start = (span - w) * i / 15;  // API times count from the trace's start
      const std::string range = fmt::format("t0={}&t1={}&width={}", start, start + w, kWidth);
      auto a = Clock::now();
      auto view = client.Get(("/api/trace/0/viewport?" + range).c_str());
      auto b = Clock::now();
      auto marks = client.Get(("/api/trace/0/marks?q=aten%3A%3Amul&" + range).c_str());
      auto c = Clock::now();
      if (!view || view->status != 200 || !marks || marks->status != 200) {
        std::fprintf(stderr, "explorer_bench: HTTP viewport or marks failed\n");
        return 1e9;
      }
      view_ms.push_back(Ms(a, b));
      marks_ms.push_back(Ms(b, c));
      fresh_ms.push_back(Ms(a, c));
      bytes = std::max(bytes, view->body.size() + marks->body.size());
    }
    std::sort(view_ms.begin(), view_ms.end());
    std::sort(marks_ms.begin(), marks_ms.end());
    std::sort(fresh_ms.begin(), fresh_ms.end());
    worst = std::max(worst, fresh_ms.back());
    std::printf("1/%-8lld %14.2f %14.2f %14.2f %12.1f\n", static_cast<long long>(zoom),
                view_ms[view_ms.size() / 2], marks_ms[marks_ms.size() / 2], fresh_ms.back(),
                bytes / 1e3);
  }
  return worst;
}

// The Summary tab: the first answer computes the report and findings (the UI asks for it in the
// background once the timeline is drawn, not on an interaction); later ones come from cache.
bool SummaryCost(httplib::Client& client) {
  auto a = Clock::now();
  auto first = client.Get("/api/trace/0/summary");
  auto b = Clock::now();
  auto again = client.Get("/api/trace/0/summary");
  auto c = Clock::now();
  if (!first || first->status != 200 || !again || again->status != 200) {
    std::fprintf(stderr, "explorer_bench: summary failed\n");
    return false;
  }
  std::printf("summary (report figures + findings): first %.0f ms, then %.2f ms from cache\n",
              Ms(a, b), Ms(b, c));
  return true;
}

struct LoadResult {
  std::vector<double> ms;  // per request, sorted
  int64_t errors = 0;      // no answer (refused, reset, timed out) or not 200
  double Percentile(double p) const {
    if (ms.empty()) return 0;
    return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))];
  }
};

// `clients` keep-alive clients, each sending one request every `interval_ms` (a user panning and
// clicking: viewports at random zooms, slice details, dependency chains) for `seconds`.
LoadResult RunLoad(int port, const opscope::explorer::TraceIndex& index, int clients,
                   double seconds, int interval_ms) {
  std::vector<std::vector<double>> per_client(clients);
  std::atomic<int64_t> errors{0};
  const auto stop = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_read_timeout(10, 0);
      std::mt19937_64 rng(c + 1);
      const int64_t span = index.end_ns() - index.start_ns();
      const auto slices = static_cast<int64_t>(index.trace().slices().size());
      auto next = Clock::now();
      while (Clock::now() < stop) {
        std::string path;
        const int kind = static_cast<int>(rng() % 10);
        if (kind < 7) {
          const int64_t w = std::max<int64_t>(span >> (rng() % 14), 1000);
          // API times count from the trace's start.
          const int64_t t0 = static_cast<int64_t>(rng() % (span - w + 1));
          path = fmt::format("/api/trace/0/viewport?t0={}&t1={}&width=1500", t0, t0 + w);
        } else if (kind < 9) {
          path = fmt::format("/api/trace/0/slice/{}", rng() % slices);
        } else {
          path = fmt::format("/api/trace/0/chain/{}", rng() % slices);
        }
        const auto a = Clock::now();
        auto res = client.Get(path.c_str());
        const auto b = Clock::now();
        if (!res || res->status != 200) ++errors;
        per_client[c].push_back(Ms(a, b));
        next += std::chrono::milliseconds(interval_ms);
        std::this_thread::sleep_until(std::max(next, Clock::now()));
      }
    });
  }
  for (auto& t : threads) t.join();
  LoadResult r;
  for (auto& v : per_client) r.ms.insert(r.ms.end(), v.begin(), v.end());
  std::sort(r.ms.begin(), r.ms.end());
  r.errors = errors;
  return r;
}

// Opens `n` connections that send a request head one header line at a time and never finish.
std::vector<int> OpenSlowClients(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd);
      continue;
    }
    const char head[] = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    send(fd, head, sizeof(head) - 1, MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  return fds;
}

void PrintLoad(const char* what, const LoadResult& r, double seconds, const LoadResult* base) {
  const double p99 = r.Percentile(0.99);
  const bool met = p99 < 100 && r.errors == 0;
  std::printf("%-44s %7zu req (%.0f/s)  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  errors %lld",
              what, r.ms.size(), r.ms.size() / seconds, r.Percentile(0.5), p99,
              r.ms.empty() ? 0.0 : r.ms.back(), static_cast<long long>(r.errors));
  if (base == nullptr) {
    std::printf("\n");
    return;
  }
  std::printf("  [target p99 < 100 ms, 0 errors: %s; p99 %.1fx the single-client baseline's]\n",
              met ? "met" : "NOT met", p99 / std::max(1e-3, base->Percentile(0.99)));
}

}  // namespace

struct BenchArgs {
  std::vector<std::string> positional;
  std::string first_answer_file;  // --first-answer
  std::string baseline;           // --baseline: another opscope binary
  bool first_answer_only = false;
  int exit_code = -1;  // >= 0: exit with it (--help, or a bad argument)
};

constexpr const char* kUsage =
    "usage: explorer_bench [MB] [LOAD_S] [--first-answer FILE] [--baseline BIN] "
    "[--first-answer-only]\n"
    "  MB                   size of the generated trace (default 53)\n"
    "  LOAD_S               seconds of the load test (default 30)\n"
    "  --first-answer FILE  also time `opscope explore FILE` to its first answer (target < 3 s)\n"
    "  --baseline BIN       another opscope binary, timed side by side\n"
    "  --first-answer-only  only the first answers\n";

// A positional argument must be a positive number: "--help" or a misspelt flag read as a size of
// 0 MB ran the whole bench on an empty trace.
bool IsPositiveNumber(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && v > 0;
}

BenchArgs ParseArgs(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--first-answer" && i + 1 < argc) {
      a.first_answer_file = argv[++i];
    } else if (arg == "--baseline" && i + 1 < argc) {
      a.baseline = argv[++i];
    } else if (arg == "--first-answer-only") {
      a.first_answer_only = true;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      a.exit_code = 0;
      return a;
    } else if (IsPositiveNumber(arg) && a.positional.size() < 2) {
      a.positional.push_back(arg);
    } else {
      std::fprintf(stderr, "explorer_bench: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      a.exit_code = 2;
      return a;
    }
  }
  return a;
}

// The opscope binary of this build: beside the bench directory.
std::string OpscopeBinary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path().parent_path() / "opscope").string();
}

// First answers of `opscope explore`: the file given, else (and also, unless only that is asked)
// the generated one.
void FirstAnswers(const BenchArgs& args, const std::string& generated_path, double generated_mb) {
  const std::string opscope = OpscopeBinary();
  if (!args.first_answer_only || args.first_answer_file.empty()) {
    // The generated trace's target is its first paint's (in process, below): 1.5 s.
    opscope::bench::ReportFirstAnswer(fmt::format("generated trace, {:.0f} MB", generated_mb),
                                      generated_path, opscope, args.baseline, 3, 1.5);
  }
  if (!args.first_answer_file.empty()) {
    std::error_code ec;
    const double mb = std::filesystem::file_size(args.first_answer_file, ec) / 1e6;
    opscope::bench::ReportFirstAnswer(
        fmt::format("{} ({:.0f} MB)",
                    std::filesystem::path(args.first_answer_file).filename().string(), mb),
        args.first_answer_file, opscope, args.baseline, 2, 3.0);
  }
}

int main(int argc, char** argv) {
  const BenchArgs args = ParseArgs(argc, argv);
  if (args.exit_code >= 0) return args.exit_code;
  const double target_mb = !args.positional.empty() ? std::atof(args.positional[0].c_str()) : 53.0;
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("explorer_bench_{}.json", getpid()))
          .string();
  if (args.first_answer_only && !args.first_answer_file.empty()) {
    FirstAnswers(args, path, 0);
    return 0;
  }
  opscope::Trace generated = Generate(target_mb, path);
  FirstAnswers(args, path, std::filesystem::file_size(path) / 1e6);
  if (args.first_answer_only) {
    std::filesystem::remove(path);
    return 0;
  }
  opscope::Trace trace;
  const opscope::explorer::TraceIndex* index = nullptr;
  double import_ms = 0;
  const double paint_ms = FirstPaint(path, &trace, &index, &import_ms);
  std::filesystem::remove(path);
  if (index == nullptr) return 1;
  const double baseline_ms = BaselineFirstPaint(trace, *index, import_ms);
  std::printf(
      "first paint: %.0f ms vs baseline (every event shipped) %.0f ms: %.1fx  [target < "
      "1500 ms: %s]\n",
      paint_ms, baseline_ms, baseline_ms / std::max(1e-3, paint_ms),
      paint_ms < 1500 ? "met" : "NOT met");
  opscope::Explorer server(opscope::ExplorerOptions{});
  server.AddTrace("bench", std::move(generated));
  if (const opscope::Status st = server.Start(); !st.ok()) {
    std::fprintf(stderr, "explorer_bench: %s\n", st.message().c_str());
    return 1;
  }
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60, 0);
  const double worst = Interactions(client, *index);
  std::printf("fresh data after an interaction, slowest: %.2f ms  [target < 100 ms: %s]\n", worst,
              worst < 100 ? "met" : "NOT met");
  if (!SummaryCost(client)) return 1;
  std::printf("memory: trace model %.1f MB\n", trace.MemoryBytes() / 1e6);
  // Load: 50 keep-alive clients at 20 requests/s each, against one client alone (the baseline,
  // measured the same way just before), then again while 200 slow clients hold connections.
  const double load_s = args.positional.size() > 1 ? std::atof(args.positional[1].c_str()) : 30.0;
  std::printf("load: %d keep-alive clients x %.0f s, one request per client every %d ms:\n", 50,
              load_s, 50);
  const LoadResult base = RunLoad(server.port(), *index, 1, std::min(load_s, 5.0), 50);
  PrintLoad("1 client (baseline)", base, std::min(load_s, 5.0), nullptr);
  const LoadResult load = RunLoad(server.port(), *index, 50, load_s, 50);
  PrintLoad("50 clients", load, load_s, &base);
  std::vector<int> slow = OpenSlowClients(server.port(), 200);
  const LoadResult slowloris = RunLoad(server.port(), *index, 50, std::min(load_s, 10.0), 50);
  PrintLoad(fmt::format("50 clients + {} slow-header connections", slow.size()).c_str(), slowloris,
            std::min(load_s, 10.0), &base);
  for (int fd : slow) close(fd);
  server.Stop();
  delete index;
  return 0;
}
