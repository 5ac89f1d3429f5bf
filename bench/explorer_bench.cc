// Explorer scale benchmark: a generated Neuron-style trace of 1M events (argv[1] to change),
// written as a Kineto JSON file, then
//   - open: import + index time (what `opscope explore` does before serving),
//   - first paint: open + the first full-range viewport answer,
//   - viewport queries at several zoom levels, in process and over HTTP on loopback,
//   - against a baseline run side by side: the same full-range query without level of detail
//     (every event in range serialised), as a viewer that ships the whole trace would.
// Targets (issue 6): first paint < 2 s, viewport query < 50 ms at any zoom.
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "explorer/synthetic_trace.h"
#include "explorer/trace_index.h"
#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "trace/json_writer.h"

namespace {

using Clock = std::chrono::steady_clock;
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

}  // namespace

int main(int argc, char** argv) {
  const int64_t target = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int width = 1500;
  namespace ex = opscope::explorer;

  auto t0 = Clock::now();
  opscope::Trace generated = ex::MakeSyntheticNeuronTrace({.target_events = target});
  auto t1 = Clock::now();
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("explorer_bench_{}.json", getpid()))
          .string();
  WriteKinetoJson(generated, path);
  const auto json_bytes = std::filesystem::file_size(path);
  std::printf("explorer_bench: generated %zu events in %.0f ms; Kineto JSON %.1f MB\n",
              generated.slices().size(), Ms(t0, t1), json_bytes / 1e6);

  // Open: import + index, as `opscope explore` does.
  auto o0 = Clock::now();
  opscope::Trace trace;
  const opscope::Status st = opscope::ImportTrace(path, &trace);
  auto o1 = Clock::now();
  std::filesystem::remove(path);
  if (!st.ok()) {
    std::fprintf(stderr, "explorer_bench: import failed: %s\n", st.message().c_str());
    return 1;
  }
  const ex::TraceIndex index(trace);
  auto o2 = Clock::now();
  ex::ViewportQuery full;
  full.t0 = index.start_ns();
  full.t1 = index.end_ns();
  full.width_px = width;
  opscope::JsonWriter first;
  index.WriteViewport(full, &first);
  auto o3 = Clock::now();
  std::printf("open: import %.0f ms (%zu events) + index %.0f ms = %.0f ms\n", Ms(o0, o1),
              trace.slices().size(), Ms(o1, o2), Ms(o0, o2));
  std::printf(
      "first paint (open + first full viewport, %zu lanes, %.1f KB): %.0f ms  [target < "
      "2000 ms]\n",
      index.lanes().size(), first.str().size() / 1e3, Ms(o0, o3));

  // Viewport queries at several zoom levels, in process, spread over the trace.
  const int64_t span = index.end_ns() - index.start_ns();
  std::printf("%-12s %10s %10s %10s %12s\n", "zoom", "median ms", "max ms", "items KB",
              "http med ms");
  opscope::ExplorerOptions options;
  opscope::Explorer server(options);
  server.AddTrace("bench", std::move(generated));
  std::string error;
  if (!server.Start(&error)) {
    std::fprintf(stderr, "explorer_bench: %s\n", error.c_str());
    return 1;
  }
  httplib::Client client("127.0.0.1", server.port());
  double worst = 0;
  for (int64_t zoom : {1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL}) {
    const int64_t w = std::max<int64_t>(span / zoom, 100);
    std::vector<double> times, http_times;
    size_t bytes = 0;
    for (int i = 0; i < 15; ++i) {
      const int64_t start = index.start_ns() + (span - w) * i / 15;
      ex::ViewportQuery q;
      q.t0 = start;
      q.t1 = start + w;
      q.width_px = width;
      opscope::JsonWriter out;
      auto a = Clock::now();
      index.WriteViewport(q, &out);
      auto b = Clock::now();
      times.push_back(Ms(a, b));
      bytes = std::max(bytes, out.str().size());
      auto c = Clock::now();
      auto res = client.Get(
          fmt::format("/api/trace/0/viewport?t0={}&t1={}&width={}", q.t0, q.t1, width).c_str());
      auto d = Clock::now();
      if (!res || res->status != 200) {
        std::fprintf(stderr, "explorer_bench: HTTP viewport failed\n");
        return 1;
      }
      http_times.push_back(Ms(c, d));
    }
    std::sort(times.begin(), times.end());
    std::sort(http_times.begin(), http_times.end());
    worst = std::max(worst, http_times.back());
    std::printf("1/%-10lld %10.2f %10.2f %10.1f %12.2f\n", static_cast<long long>(zoom),
                times[times.size() / 2], times.back(), bytes / 1e3,
                http_times[http_times.size() / 2]);
  }
  std::printf("slowest viewport over HTTP: %.2f ms  [target < 50 ms]\n", worst);

  // Baseline side by side: the full range without level of detail.
  auto n0 = Clock::now();
  const size_t naive_bytes = NaiveViewport(trace, full.t0, full.t1);
  auto n1 = Clock::now();
  opscope::JsonWriter lod;
  auto l0 = Clock::now();
  index.WriteViewport(full, &lod);
  auto l1 = Clock::now();
  std::printf(
      "full range: level of detail %.2f ms / %.1f KB vs baseline (every event) %.2f ms / "
      "%.1f KB: %.1fx less time, %.0fx fewer bytes\n",
      Ms(l0, l1), lod.str().size() / 1e3, Ms(n0, n1), naive_bytes / 1e3,
      Ms(n0, n1) / std::max(1e-3, Ms(l0, l1)),
      static_cast<double>(naive_bytes) / std::max<size_t>(1, lod.str().size()));
  std::printf("memory: trace model %.1f MB\n", trace.MemoryBytes() / 1e6);
  server.Stop();
  return 0;
}
