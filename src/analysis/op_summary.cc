// Per-op device time (TraceLens ops_summary), kernel summary and launch statistics.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "analysis/device_activity.h"
#include "opscope/analysis.h"
#include "trace/json_writer.h"
#include "trace/saturating.h"

namespace opscope {

using analysis::Interval;

namespace {

// One device activity's interval, credited to one op instance (a slice index).
struct Credit {
  uint32_t op;
  Interval iv;
};

// Sorts `credits` by op instance, then by start, and calls visit(op, activities, union_ns) once
// per op instance, in increasing op order: the number of its intervals and the length of their
// union (MergeIntervals + Length, done in the one sorted sweep). Flat pairs sorted once cost one
// allocation, where a hash map of vectors cost one per op instance.
template <typename Visit>
void ForEachOp(std::vector<Credit>* credits, Visit visit) {
  std::sort(credits->begin(), credits->end(), [](const Credit& a, const Credit& b) {
    if (a.op != b.op) return a.op < b.op;
    if (a.iv.begin != b.iv.begin) return a.iv.begin < b.iv.begin;
    return a.iv.end < b.iv.end;
  });
  const std::vector<Credit>& c = *credits;
  for (size_t i = 0; i < c.size();) {
    const uint32_t op = c[i].op;
    const size_t first = i;
    Interval merged = c[i].iv;
    int64_t total = 0;
    for (++i; i < c.size() && c[i].op == op; ++i) {
      if (c[i].iv.begin <= merged.end) {
        merged.end = std::max(merged.end, c[i].iv.end);
      } else {
        total += merged.end - merged.begin;
        merged = c[i].iv;
      }
    }
    visit(op, static_cast<int64_t>(i - first), total + (merged.end - merged.begin));
  }
}

}  // namespace

OpSummary ComputeOpSummary(const Trace& trace, bool with_subtree) {
  const auto& slices = trace.slices();
  const auto n = static_cast<uint32_t>(slices.size());
  // Device activity per launcher instance (direct) and per enclosing op instance (subtree).
  std::vector<Credit> direct, subtree;
  size_t activities = 0;
  for (const Slice& s : slices) activities += analysis::IsTimelineActivity(s.kind) ? 1 : 0;
  direct.reserve(activities);
  if (with_subtree) subtree.reserve(2 * activities);  // an op and its parent, at least
  OpSummary summary;
  for (uint32_t i = 0; i < n; ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    const uint32_t launcher = analysis::LauncherOf(trace, i);
    if (launcher == kNone) {
      ++summary.unattributed_activities;
      continue;
    }
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    direct.push_back({launcher, iv});
    if (!with_subtree) continue;
    for (uint32_t p = launcher; p != kNone; p = slices[p].parent) subtree.push_back({p, iv});
  }
  // Every launcher is in `subtree` too (its own activity): its subtree time, in launcher order.
  std::vector<std::pair<uint32_t, int64_t>> subtree_ns;
  ForEachOp(&subtree,
            [&](uint32_t op, int64_t, int64_t union_ns) { subtree_ns.emplace_back(op, union_ns); });
  std::map<std::string_view, OpDeviceTime> by_name;
  size_t in_subtree = 0;
  ForEachOp(&direct, [&](uint32_t op, int64_t count, int64_t union_ns) {
    OpDeviceTime& row = by_name[trace.Str(slices[op].name)];
    row.count += 1;
    row.direct_activities += count;
    row.direct_device_ns = internal::SatAdd(row.direct_device_ns, union_ns);
    if (!with_subtree) return;
    while (subtree_ns[in_subtree].first != op) ++in_subtree;
    row.subtree_device_ns = internal::SatAdd(row.subtree_device_ns, subtree_ns[in_subtree].second);
  });
  for (const Slice& s : slices) {
    if (s.kind != ActivityKind::kCpuOp) continue;
    auto it = by_name.find(trace.Str(s.name));
    if (it != by_name.end()) it->second.calls += 1;
  }
  for (auto& [name, row] : by_name) {
    row.name = std::string(name);
    summary.total_direct_device_ns =
        internal::SatAdd(summary.total_direct_device_ns, row.direct_device_ns);
    summary.rows.push_back(std::move(row));
  }
  std::sort(summary.rows.begin(), summary.rows.end(),
            [](const OpDeviceTime& a, const OpDeviceTime& b) {
              if (a.direct_device_ns != b.direct_device_ns) {
                return a.direct_device_ns > b.direct_device_ns;
              }
              return a.name < b.name;
            });
  return summary;
}

std::string OpSummary::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("total_direct_device_ns");
  w.Int(total_direct_device_ns);
  w.Key("unattributed_activities");
  w.Int(static_cast<int64_t>(unattributed_activities));
  w.Key("rows");
  w.BeginArray();
  for (const OpDeviceTime& r : rows) {
    w.BeginObject();
    w.Key("name");
    w.String(r.name);
    w.Key("count");
    w.Int(r.count);
    w.Key("calls");
    w.Int(r.calls);
    w.Key("direct_device_ns");
    w.Int(r.direct_device_ns);
    w.Key("subtree_device_ns");
    w.Int(r.subtree_device_ns);
    w.Key("direct_activities");
    w.Int(r.direct_activities);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

KernelSummary ComputeKernelSummary(const Trace& trace) {
  const auto& slices = trace.slices();
  const auto& tracks = trace.tracks();
  struct Key {
    StringId parent;  // 0 = none
    StringId kernel;
    int64_t stream;
    bool operator<(const Key& o) const {
      return std::tie(parent, kernel, stream) < std::tie(o.parent, o.kernel, o.stream);
    }
  };
  std::map<Key, KernelStats> groups;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (s.kind != ActivityKind::kKernel) continue;
    const uint32_t launcher = analysis::LauncherOf(trace, i);
    const int64_t stream = s.track < tracks.size() ? tracks[s.track].tid : 0;
    Key key{launcher == kNone ? 0 : slices[launcher].name, s.name, stream};
    KernelStats& k = groups[key];
    if (k.count == 0) {
      k.min_ns = s.dur_ns;
      k.max_ns = s.dur_ns;
    }
    k.count += 1;
    k.sum_ns = internal::SatAdd(k.sum_ns, s.dur_ns);
    k.min_ns = std::min(k.min_ns, s.dur_ns);
    k.max_ns = std::max(k.max_ns, s.dur_ns);
  }
  KernelSummary summary;
  for (auto& [key, stats] : groups) {
    stats.parent_op = std::string(trace.Str(key.parent));
    stats.kernel = std::string(trace.Str(key.kernel));
    stats.stream = key.stream;
    summary.total_ns = internal::SatAdd(summary.total_ns, stats.sum_ns);
    summary.rows.push_back(std::move(stats));
  }
  std::stable_sort(summary.rows.begin(), summary.rows.end(),
                   [](const KernelStats& a, const KernelStats& b) { return a.sum_ns > b.sum_ns; });
  return summary;
}

std::string KernelSummary::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("total_ns");
  w.Int(total_ns);
  w.Key("rows");
  w.BeginArray();
  for (const KernelStats& k : rows) {
    w.BeginObject();
    w.Key("parent_op");
    w.String(k.parent_op);
    w.Key("kernel");
    w.String(k.kernel);
    w.Key("stream");
    w.Int(k.stream);
    w.Key("count");
    w.Int(k.count);
    w.Key("sum_ns");
    w.Int(k.sum_ns);
    w.Key("mean_ns");
    w.Double(k.mean_ns());
    w.Key("min_ns");
    w.Int(k.min_ns);
    w.Key("max_ns");
    w.Int(k.max_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

namespace {

// numpy.percentile(values, 100 * q) with its default method ("linear"); `sorted` is ascending and
// not empty.
double Percentile(const std::vector<int64_t>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const size_t lo = static_cast<size_t>(h);
  if (lo + 1 >= sorted.size()) return static_cast<double>(sorted.back());
  const double below = static_cast<double>(sorted[lo]);
  return below + (h - static_cast<double>(lo)) * (static_cast<double>(sorted[lo + 1]) - below);
}

DurationStats Summarize(std::vector<int64_t>* values) {
  DurationStats d;
  if (values->empty()) return d;
  std::sort(values->begin(), values->end());
  d.count = static_cast<int64_t>(values->size());
  for (int64_t v : *values) d.sum_ns = internal::SatAdd(d.sum_ns, v);
  d.min_ns = values->front();
  d.max_ns = values->back();
  d.p50_ns = Percentile(*values, 0.50);
  d.p99_ns = Percentile(*values, 0.99);
  return d;
}

void WriteStats(JsonWriter* w, const DurationStats& d) {
  w->BeginObject();
  w->Key("count");
  w->Int(d.count);
  w->Key("sum_ns");
  w->Int(d.sum_ns);
  w->Key("mean_ns");
  w->Double(d.mean_ns());
  w->Key("min_ns");
  w->Int(d.min_ns);
  w->Key("max_ns");
  w->Int(d.max_ns);
  w->Key("p50_ns");
  w->Double(d.p50_ns);
  w->Key("p99_ns");
  w->Double(d.p99_ns);
  w->EndObject();
}

}  // namespace

LaunchStatistics ComputeLaunchStatistics(const Trace& trace) {
  const auto& slices = trace.slices();
  LaunchStatistics out;
  std::vector<uint8_t> runtime_seen(slices.size(), 0);
  std::map<std::string_view, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_name;
  std::vector<int64_t> all_dur, all_delay;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    const uint32_t rt = trace.Link(i).runtime;
    if (rt == kNone) {
      ++out.unlinked_activities;
      continue;
    }
    const Slice& call = slices[rt];
    auto& [durs, delays] = by_name[trace.Str(call.name)];
    const int64_t delay = s.ts_ns - call.ts_ns;
    delays.push_back(delay);
    all_delay.push_back(delay);
    if (!runtime_seen[rt]) {
      runtime_seen[rt] = 1;
      durs.push_back(call.dur_ns);
      all_dur.push_back(call.dur_ns);
    }
  }
  out.duration = Summarize(&all_dur);
  out.launch_delay = Summarize(&all_delay);
  for (auto& [name, values] : by_name) {
    RuntimeCallStats r;
    r.name = std::string(name);
    r.duration = Summarize(&values.first);
    r.launch_delay = Summarize(&values.second);
    out.by_name.push_back(std::move(r));
  }
  std::sort(out.by_name.begin(), out.by_name.end(),
            [](const RuntimeCallStats& a, const RuntimeCallStats& b) {
              return a.duration.sum_ns > b.duration.sum_ns;
            });
  return out;
}

std::string LaunchStatistics::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("percentile_method");
  w.String("linear interpolation between order statistics (numpy.percentile default)");
  w.Key("duration");
  WriteStats(&w, duration);
  w.Key("launch_delay");
  WriteStats(&w, launch_delay);
  w.Key("unlinked_activities");
  w.Int(static_cast<int64_t>(unlinked_activities));
  w.Key("by_name");
  w.BeginArray();
  for (const RuntimeCallStats& r : by_name) {
    w.BeginObject();
    w.Key("name");
    w.String(r.name);
    w.Key("duration");
    WriteStats(&w, r.duration);
    w.Key("launch_delay");
    WriteStats(&w, r.launch_delay);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
