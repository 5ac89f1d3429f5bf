// The Explorer's first answer timed end to end (first_answer.h): `opscope explore` started as a
// child, its lanes and first viewport fetched over HTTP.
#include "bench/first_answer.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/page_cache.h"
#include "tests/common/child_process.h"

namespace opscope::bench {
namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// GET `path` until it answers other than 503 (still loading); true on 200.
bool GetWhenReady(httplib::Client& client, const char* path, Clock::time_point until,
                  std::string* error) {
  while (Clock::now() < until) {
    auto res = client.Get(path);
    if (res && res->status == 200) return true;
    if (res && res->status != 503) {
      *error = fmt::format("{}: HTTP {}: {}", path, res->status, res->body.substr(0, 200));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  *error = fmt::format("{}: no answer in time", path);
  return false;
}

}  // namespace

FirstAnswer MeasureFirstAnswer(const std::string& opscope, const std::string& file, int threads) {
  FirstAnswer r;
  std::vector<std::string> args = {opscope, "explore", file, "--port", "0", "--quiet"};
  if (threads >= 0) {
    args.push_back("--threads");
    args.push_back(std::to_string(threads));
  }
  WarmPageCache(file);  // the run reads the file from memory (bench/page_cache.h)
  const auto start = Clock::now();
  testing::ChildProcess child(std::move(args), /*stderr_to_pipe=*/false);
  if (!child.started()) return {-1, 0, fmt::format("cannot run {}", opscope)};
  const auto until = start + std::chrono::seconds(120);
  const int port = child.LocalPort(until);
  r.listen_s = Seconds(start, Clock::now());
  if (port == 0) {
    r.seconds = -1;
    r.error = child.Wait(std::chrono::seconds(1)) == 127 ? fmt::format("cannot run {}", opscope)
                                                         : "no address printed";
  } else {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    if (GetWhenReady(client, "/api/trace/0/lanes", until, &r.error) &&
        GetWhenReady(client, "/api/trace/0/viewport?width=1500", until, &r.error)) {
      r.seconds = Seconds(start, Clock::now());
    } else {
      r.seconds = -1;
    }
  }
  kill(child.pid(), SIGTERM);
  child.Wait(std::chrono::seconds(30));
  return r;
}

void ReportFirstAnswer(const std::string& label, const std::string& file,
                       const std::string& opscope, const std::string& baseline, int runs,
                       double target_s) {
  double load[3] = {0, 0, 0};
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf(
      "first answer, end to end (start `opscope explore` -> lanes + full-range viewport over "
      "HTTP), %s, best of %d, interleaved; load average %.2f:\n",
      label.c_str(), runs, load[0]);
  for (int threads : {1, 2, -1}) {
    double best = 1e9, best_base = 1e9, listen = 0, base_listen = 0;
    std::string error, base_error;
    for (int run = 0; run < runs; ++run) {
      if (!baseline.empty()) {
        const FirstAnswer b = MeasureFirstAnswer(baseline, file, threads);
        if (b.seconds < 0) base_error = b.error;
        if (b.seconds >= 0 && b.seconds < best_base) {
          best_base = b.seconds;
          base_listen = b.listen_s;
        }
      }
      const FirstAnswer a = MeasureFirstAnswer(opscope, file, threads);
      if (a.seconds < 0) error = a.error;
      if (a.seconds >= 0 && a.seconds < best) {
        best = a.seconds;
        listen = a.listen_s;
      }
    }
    const std::string flag = threads < 0 ? "default" : fmt::format("--threads {}", threads);
    if (best >= 1e9) {
      std::printf("  %-12s failed: %s\n", flag.c_str(), error.c_str());
      continue;
    }
    std::printf("  %-12s %.2f s (listening after %.2f s)", flag.c_str(), best, listen);
    if (best_base < 1e9) {
      std::printf("   before %.2f s (listening after %.2f s): %.2fx", best_base, base_listen,
                  best_base / std::max(1e-6, best));
    } else if (!baseline.empty()) {
      std::printf("   before: failed (%s)", base_error.c_str());
    }
    std::printf("   [target < %.1f s: %s]\n", target_s, best < target_s ? "met" : "NOT met");
  }
}

}  // namespace opscope::bench
