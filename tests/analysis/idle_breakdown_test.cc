// The idle-time breakdown against HTA's definition (get_idle_time_breakdown), computed here
// independently from each fixture's raw JSON: per stream, events sorted by start, each gap to the
// previous event's end is host wait when the event's runtime call started after that end, kernel
// wait when under 30 us, else other. And one hand-made trace with one gap of each kind. HTA's own
// outputs are compared in hta_reference_test.cc.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"
#include "tests/analysis/fixture_traces.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

struct Expected {
  int64_t host_ns = 0, kernel_ns = 0, other_ns = 0;
  int64_t host = 0, kernel = 0, other = 0;
};

// A JSON number of microseconds ("1712195495505543.2") as integer nanoseconds, from its text
// (a double cannot hold these timestamps to the nanosecond).
int64_t MicrosToNs(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  int64_t whole = 0, frac = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '.'; ++i) whole = whole * 10 + (text[i] - '0');
  int digits = 0;
  if (i < text.size()) {
    for (++i; i < text.size() && digits < 3; ++i, ++digits) frac = frac * 10 + (text[i] - '0');
  }
  for (; digits < 3; ++digits) frac *= 10;
  const int64_t ns = whole * 1000 + frac;
  return negative ? -ns : ns;
}

// HTA's definition straight from the JSON: device events with a "stream" arg, by (pid, stream);
// an event whose correlation names no runtime call joins with the file's first complete event.
std::map<std::pair<int64_t, int64_t>, Expected> FromJson(const std::string& text) {
  struct Ev {
    int64_t ts, end, corr;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Ev>> streams;
  std::unordered_map<int64_t, int64_t> runtime_ts;
  std::optional<int64_t> first_ts;
  simdjson::ondemand::parser parser;
  const simdjson::padded_string json(text);
  simdjson::ondemand::document doc = parser.iterate(json);
  for (simdjson::ondemand::object e : doc["traceEvents"].get_array()) {
    std::string_view ph, cat, ts, dur;
    int64_t pid = 0, tid = 0, corr = 0, stream = -1;
    bool ids = true;
    for (simdjson::ondemand::field f : e) {
      const std::string_view key = f.unescaped_key().value();
      simdjson::ondemand::value v = f.value();
      if (key == "ph") {
        ph = v.get_string().value();
      } else if (key == "cat") {
        cat = v.get_string().value();
      } else if (key == "ts") {
        ts = v.raw_json_token();
      } else if (key == "dur") {
        dur = v.raw_json_token();
      } else if (key == "pid") {
        ids &= v.get_int64().get(pid) == simdjson::SUCCESS;
      } else if (key == "tid") {
        ids &= v.get_int64().get(tid) == simdjson::SUCCESS;
      } else if (key == "args") {
        for (simdjson::ondemand::field a : v.get_object()) {
          const std::string_view k = a.unescaped_key().value();
          if (k == "correlation" && a.value().get_int64().get(corr)) corr = 0;
          if (k == "stream" && a.value().get_int64().get(stream)) stream = -1;
        }
      }
    }
    if (ph != "X" || ts.empty() || dur.empty() || !ids) continue;
    const int64_t t = MicrosToNs(ts), d = MicrosToNs(dur);
    if (!first_ts) first_ts = t;
    if (cat.ends_with("runtime") || cat.ends_with("driver")) {
      if (corr != 0) runtime_ts.emplace(corr, t);
      continue;
    }
    // HTA's kernel categories (no cuda_sync); Inductor's triton cpu_ops carry a "stream" arg
    // too.
    if (stream == -1 || !(cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
                          cat == "mtia_ccp_events")) {
      continue;
    }
    streams[{pid, stream}].push_back({t, t + d, corr});
  }
  std::map<std::pair<int64_t, int64_t>, Expected> out;
  for (auto& [key, evs] : streams) {
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.ts < b.ts; });
    Expected& x = out[key];
    for (size_t k = 1; k < evs.size(); ++k) {
      const int64_t interval = evs[k].ts - evs[k - 1].end;
      auto rt = runtime_ts.find(evs[k].corr);
      const int64_t launched = rt != runtime_ts.end() ? rt->second : first_ts.value_or(0);
      if (evs[k].corr != 0 && launched > evs[k - 1].end) {
        x.host_ns += interval;
        ++x.host;
      } else if (interval < 30'000) {  // HTA's 30, in the trace's microseconds
        x.kernel_ns += interval;
        ++x.kernel;
      } else {
        x.other_ns += interval;
        ++x.other;
      }
    }
  }
  return out;
}

TEST(IdleBreakdown, MatchesHtasDefinitionOnEveryFixtureWithDeviceStreams) {
  int checked_streams = 0;
  testing::ForEachFixtureTrace([&](const fs::path& path, const Trace& trace) {
    const IdleBreakdown idle = ComputeIdleBreakdown(trace);
    const auto expected = FromJson(testing::ReadMaybeGzip(path));
    EXPECT_EQ(idle.streams.size(), expected.size());
    for (const StreamIdle& s : idle.streams) {
      auto it = expected.find({s.device, s.stream});
      ASSERT_NE(it, expected.end()) << "stream " << s.device << "/" << s.stream;
      const Expected& x = it->second;
      EXPECT_EQ(s.host_wait_intervals, x.host) << s.stream;
      EXPECT_EQ(s.kernel_wait_intervals, x.kernel) << s.stream;
      EXPECT_EQ(s.other_intervals, x.other) << s.stream;
      EXPECT_EQ(s.host_wait_ns, x.host_ns) << s.stream;
      EXPECT_EQ(s.kernel_wait_ns, x.kernel_ns) << s.stream;
      EXPECT_EQ(s.other_ns, x.other_ns) << s.stream;
      ++checked_streams;
    }
  });
  EXPECT_GE(checked_streams, 10);
}

// Five kernels on one stream: B's runtime call starts after A ends (host wait 10 us), C follows
// B 20 ns later and D follows C 29 us later with their calls long issued (kernel wait: under HTA's
// 30, which it compares with the trace's microseconds), E comes 30 us after D (other).
TEST(IdleBreakdown, OneGapOfEachKind) {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0,
     "dur": 1, "args": {"correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 15,
     "dur": 1, "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 16,
     "dur": 1, "args": {"correlation": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 17,
     "dur": 1, "args": {"correlation": 4}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 18,
     "dur": 1, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "A", "pid": 0, "tid": 7, "ts": 2, "dur": 8,
     "args": {"correlation": 1, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "B", "pid": 0, "tid": 7, "ts": 20, "dur": 10,
     "args": {"correlation": 2, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "C", "pid": 0, "tid": 7, "ts": 30.02, "dur": 10,
     "args": {"correlation": 3, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "D", "pid": 0, "tid": 7, "ts": 69.02, "dur": 1,
     "args": {"correlation": 4, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "E", "pid": 0, "tid": 7, "ts": 100.02, "dur": 1,
     "args": {"correlation": 5, "stream": 7}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 102,
     "dur": 1, "args": {"correlation": 6, "stream": 7}}]})";
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(json, &trace).ok());
  const IdleBreakdown idle = ComputeIdleBreakdown(trace);
  EXPECT_EQ(idle.consecutive_kernel_delay_us, 30);
  ASSERT_EQ(idle.streams.size(), 1u);  // the sync event is no stream event of HTA's
  const StreamIdle& s = idle.streams[0];
  EXPECT_EQ(s.stream, 7);
  EXPECT_EQ(s.host_wait_ns, 10000);
  EXPECT_EQ(s.host_wait_intervals, 1);
  EXPECT_EQ(s.kernel_wait_ns, 20 + 29000);
  EXPECT_EQ(s.kernel_wait_intervals, 2);
  EXPECT_EQ(s.other_ns, 30000);
  EXPECT_EQ(s.other_intervals, 1);
  // The threshold is an option: at 20 us the 29 us gap is other, at 31 us the 30 us one is
  // kernel wait.
  const StreamIdle at20 =
      ComputeIdleBreakdown(trace, {.consecutive_kernel_delay_us = 20}).streams[0];
  EXPECT_EQ(at20.kernel_wait_intervals, 1);
  EXPECT_EQ(at20.other_ns, 59000);
  EXPECT_EQ(
      ComputeIdleBreakdown(trace, {.consecutive_kernel_delay_us = 31}).streams[0].other_intervals,
      0);
}

}  // namespace
}  // namespace opscope
