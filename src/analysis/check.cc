// `opscope check` on two traces: each metric's figure per ProfilerStep# (step time, device busy
// time, each op's direct device time, each kernel's summed time), compared by check_stats.cc, and
// the diff's rows that moved most.
//
// Per-step figures use the report's definitions restricted to a step. Device activity belongs to
// the step in which it was launched: the start of its launcher op (the op the op summary credits),
// else of its runtime call, else its own start. Device busy is the union of the timeline's
// activities of the step; an op's time the sum over its instances of the union of their direct
// activity (OpSummary::direct_device_ns); a kernel's the summed duration of every activity with
// that name (the diff's kernel rows). Without steps one window spans the whole trace, and these
// are exactly the report's and the diff's figures.
#include "opscope/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "opscope/analysis.h"

namespace opscope {
namespace {

struct Window {
  int64_t start_ns = 0, end_ns = 0;
};

// Host ProfilerStep#N annotations, one per N (the first seen), in start order.
std::vector<Window> FindSteps(const Trace& trace) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  std::map<int64_t, Window> by_number;
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kUserAnnotation && s.kind != ActivityKind::kCpuOp) continue;
    const std::string_view name = trace.Str(s.name);
    if (!name.starts_with(kPrefix)) continue;
    int64_t n = 0;
    const char* first = name.data() + kPrefix.size();
    const char* last = name.data() + name.size();
    const auto [ptr, ec] = std::from_chars(first, last, n);
    if (ec != std::errc() || ptr != last || first == last) continue;
    by_number.try_emplace(n, Window{s.ts_ns, s.ts_ns + s.dur_ns});
  }
  std::vector<Window> steps;
  for (const auto& [n, w] : by_number) steps.push_back(w);
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Window& a, const Window& b) { return a.start_ns < b.start_ns; });
  return steps;
}

// The span of every slice: the "step" of a trace without steps.
Window WholeTrace(const Trace& trace) {
  if (trace.slices().empty()) return {};
  Window w{INT64_MAX, INT64_MIN};
  for (const Slice& s : trace.slices()) {
    w.start_ns = std::min(w.start_ns, s.ts_ns);
    w.end_ns = std::max(w.end_ns, s.ts_ns + s.dur_ns);
  }
  return w;
}

// Union length of intervals (sorted here).
int64_t UnionNs(std::vector<std::pair<int64_t, int64_t>>* intervals) {
  std::sort(intervals->begin(), intervals->end());
  int64_t total = 0, cur_start = 0, cur_end = INT64_MIN;
  for (const auto& [start, end] : *intervals) {
    if (start > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

// Every figure of one side, per window.
struct SideFigures {
  std::vector<Window> windows;
  std::vector<int64_t> step_ns, device_ns;
  std::map<std::string, std::vector<int64_t>> op_ns, kernel_ns;
};

class WindowIndex {
 public:
  explicit WindowIndex(const std::vector<Window>& w) : windows_(w) {}
  // The window holding `ts`, or -1.
  int Find(int64_t ts) const {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), ts,
                               [](int64_t t, const Window& w) { return t < w.start_ns; });
    if (it == windows_.begin()) return -1;
    --it;
    return ts <= it->end_ns ? static_cast<int>(it - windows_.begin()) : -1;
  }

 private:
  const std::vector<Window>& windows_;
};

// The time that places a device activity in a window (see the file comment).
int64_t LaunchTime(const Trace& trace, uint32_t slice, uint32_t launcher) {
  const auto& slices = trace.slices();
  if (launcher != kNone) return slices[launcher].ts_ns;
  const DeviceLink& link = trace.Link(slice);
  if (link.runtime != kNone) return slices[link.runtime].ts_ns;
  return slices[slice].ts_ns;
}

SideFigures Figures(const Trace& trace, std::vector<Window> windows) {
  SideFigures f;
  f.windows = std::move(windows);
  const size_t n = f.windows.size();
  const WindowIndex index(f.windows);
  for (const Window& w : f.windows) f.step_ns.push_back(w.end_ns - w.start_ns);
  const auto& slices = trace.slices();
  std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(n);
  // Launcher instance -> its direct activity intervals (the op summary's union per instance).
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> per_launcher;
  std::map<uint32_t, uint32_t> launcher_of;  // timeline activity -> launcher
  for (const AttributedActivity& a : TimelineActivities(trace)) {
    const Slice& s = slices[a.slice];
    launcher_of[a.slice] = a.launcher;
    const int w = index.Find(LaunchTime(trace, a.slice, a.launcher));
    if (w < 0) continue;
    busy[w].push_back({s.ts_ns, s.ts_ns + s.dur_ns});
    if (a.launcher != kNone) per_launcher[a.launcher].push_back({s.ts_ns, s.ts_ns + s.dur_ns});
  }
  for (auto& intervals : busy) f.device_ns.push_back(UnionNs(&intervals));
  for (auto& [launcher, intervals] : per_launcher) {
    const int w = index.Find(slices[launcher].ts_ns);
    auto& row = f.op_ns[std::string(trace.Str(slices[launcher].name))];
    row.resize(n, 0);
    row[w] += UnionNs(&intervals);
  }
  for (uint32_t i = 0; i < slices.size(); ++i) {  // every activity, linked or not (the diff's)
    const Slice& s = slices[i];
    if (s.kind != ActivityKind::kKernel && s.kind != ActivityKind::kMemcpy &&
        s.kind != ActivityKind::kMemset) {
      continue;
    }
    const auto it = launcher_of.find(i);
    const int w = index.Find(LaunchTime(trace, i, it == launcher_of.end() ? kNone : it->second));
    if (w < 0) continue;
    auto& row = f.kernel_ns[std::string(trace.Str(s.name))];
    row.resize(n, 0);
    row[w] += s.dur_ns;
  }
  return f;
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t total = 0;
  for (int64_t x : v) total += x;
  return total;
}

// step, device, and the ops and kernels on both sides holding min_share_pct of device busy time.
std::vector<CheckMetric> DefaultMetrics(const SideFigures& a, const SideFigures& b,
                                        const CheckOptions& options) {
  std::vector<CheckMetric> out = {{CheckMetric::Kind::kStep, ""}, {CheckMetric::Kind::kDevice, ""}};
  const double floor_a = options.min_share_pct / 100 * static_cast<double>(Sum(a.device_ns));
  const double floor_b = options.min_share_pct / 100 * static_cast<double>(Sum(b.device_ns));
  const auto add = [&](CheckMetric::Kind kind, const auto& rows_a, const auto& rows_b) {
    for (const auto& [name, values] : rows_a) {
      const auto other = rows_b.find(name);
      if (other == rows_b.end()) continue;
      const int64_t ta = Sum(values), tb = Sum(other->second);
      if (ta <= 0 || tb <= 0) continue;
      if (static_cast<double>(ta) >= floor_a || static_cast<double>(tb) >= floor_b) {
        out.push_back({kind, name});
      }
    }
  };
  add(CheckMetric::Kind::kOp, a.op_ns, b.op_ns);
  add(CheckMetric::Kind::kKernel, a.kernel_ns, b.kernel_ns);
  return out;
}

// The per-window samples of one metric; false when a named op or kernel is on neither side.
std::vector<int64_t> Samples(const SideFigures& f, const CheckMetric& m, bool* found) {
  switch (m.kind) {
    case CheckMetric::Kind::kStep:
      *found = true;
      return f.step_ns;
    case CheckMetric::Kind::kDevice:
      *found = true;
      return f.device_ns;
    case CheckMetric::Kind::kOp:
    case CheckMetric::Kind::kKernel: {
      const auto& rows = m.kind == CheckMetric::Kind::kOp ? f.op_ns : f.kernel_ns;
      const auto it = rows.find(m.name);
      if (it == rows.end()) return std::vector<int64_t>(f.windows.size(), 0);
      *found = true;
      return it->second;
    }
  }
  return {};
}

// The diff's op and kernel rows by impact: the op's direct device time where either side has
// some, else its host time (the diff's own impact rule); kernels by summed time.
std::vector<MovedRow> MovedRows(const TraceDiff& diff, int rows) {
  std::vector<MovedRow> out;
  for (const OpDiff& d : diff.rows) {
    const bool device = d.device_ns_a != 0 || d.device_ns_b != 0;
    out.push_back({"op", d.name, std::string(ToString(d.change)),
                   device ? d.device_ns_a : d.cpu_ns_a, device ? d.device_ns_b : d.cpu_ns_b});
  }
  for (const KernelDiff& k : diff.kernels) {
    out.push_back({"kernel", k.name, std::string(ToString(k.change)), k.total_ns_a, k.total_ns_b});
  }
  std::stable_sort(out.begin(), out.end(), [](const MovedRow& x, const MovedRow& y) {
    return x.impact_ns() > y.impact_ns();
  });
  if (rows >= 0 && out.size() > static_cast<size_t>(rows)) out.resize(rows);
  return out;
}

// Drops the leading `skip` windows; notes what was taken.
std::vector<Window> Skipped(std::vector<Window> steps, int skip) {
  if (skip <= 0) return steps;
  const size_t k = std::min(steps.size(), static_cast<size_t>(skip));
  steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(k));
  return steps;
}

}  // namespace

CheckResult CheckTraces(const Trace& baseline, const Trace& candidate,
                        const CheckOptions& options) {
  CheckResult r;
  r.options = options;
  std::vector<Window> steps_a = FindSteps(baseline), steps_b = FindSteps(candidate);
  const bool stepped = !steps_a.empty() && !steps_b.empty();
  if (stepped) {
    if (options.skip_steps > 0) {
      r.notes.push_back(fmt::format("the first {} steps of each side skipped", options.skip_steps));
    }
    steps_a = Skipped(std::move(steps_a), options.skip_steps);
    steps_b = Skipped(std::move(steps_b), options.skip_steps);
    r.steps_baseline = static_cast<int64_t>(steps_a.size());
    r.steps_candidate = static_cast<int64_t>(steps_b.size());
  } else {
    r.notes.push_back(steps_a.empty() && steps_b.empty()
                          ? "no ProfilerStep# in either trace: the whole trace is one step"
                          : fmt::format("no ProfilerStep# in the {}: the whole traces are compared",
                                        steps_a.empty() ? "baseline" : "candidate"));
    steps_a = {WholeTrace(baseline)};
    steps_b = {WholeTrace(candidate)};
  }
  const int64_t count_a = static_cast<int64_t>(steps_a.size());
  const int64_t count_b = static_cast<int64_t>(steps_b.size());
  if (std::min(count_a, count_b) < std::max(options.min_steps, 1)) {
    return CheckFailed(
        fmt::format("{} steps in the baseline and {} in the candidate{}; "
                    "--min-steps {} needs at least {} on each side",
                    count_a, count_b, options.skip_steps > 0 ? " after skipping" : "",
                    options.min_steps, std::max(options.min_steps, 1)));
  }
  const SideFigures a = Figures(baseline, std::move(steps_a));
  const SideFigures b = Figures(candidate, std::move(steps_b));
  const std::vector<CheckMetric> metrics =
      options.metrics.empty() ? DefaultMetrics(a, b, options) : options.metrics;
  for (const CheckMetric& metric : metrics) {
    bool found = false;
    std::vector<int64_t> samples_a = Samples(a, metric, &found);
    std::vector<int64_t> samples_b = Samples(b, metric, &found);
    if (!found) {
      return CheckFailed(fmt::format("metric {}: no {} of that name in either trace",
                                     metric.ToString(),
                                     metric.kind == CheckMetric::Kind::kOp ? "op" : "kernel"));
    }
    r.metrics.push_back(
        CompareSamples(metric, std::move(samples_a), std::move(samples_b), options));
  }
  const TraceDiff diff = DiffTraces(baseline, candidate);
  r.moved = MovedRows(diff, options.rows);
  r.diff_json = diff.ToJson();
  DecideVerdict(&r);
  return r;
}

}  // namespace opscope
