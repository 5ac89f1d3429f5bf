// Per-op device time (TraceLens ops_summary), kernel summary and launch statistics.
#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/device_activity.h"
#include "base/json_writer.h"
#include "base/parallel_for.h"
#include "base/saturating.h"
#include "opscope/analysis.h"

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

namespace {

// Buckets of op instances ComputeOpSummary sorts and sweeps side by side, at most.
constexpr size_t kMaxCreditBuckets = 64;

// Credits of one range of slices' device activity, bucketed by op instance: bucket b holds the
// credits of the ops in op_ranges[b], so each bucket can be sorted and visited on its own.
struct CreditPart {
  std::vector<std::vector<Credit>> direct, subtree;  // per bucket
  uint64_t unattributed = 0;
};

// The bucket of op instance `op` among `bounds` (each bucket's first op; ascending, from 0).
size_t BucketOf(const std::vector<uint32_t>& bounds, uint32_t op) {
  return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), op) - bounds.begin()) -
         1;
}

CreditPart ScanCredits(const Trace& trace, std::pair<uint32_t, uint32_t> range,
                       const std::vector<uint32_t>& bounds, bool with_subtree) {
  const auto& slices = trace.slices();
  CreditPart part;
  part.direct.resize(bounds.size());
  if (with_subtree) part.subtree.resize(bounds.size());
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    const uint32_t launcher = analysis::LauncherOf(trace, i);
    if (launcher == kNone) {
      ++part.unattributed;
      continue;
    }
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    part.direct[BucketOf(bounds, launcher)].push_back({launcher, iv});
    if (!with_subtree) continue;
    for (uint32_t p = launcher; p != kNone; p = slices[p].parent) {
      part.subtree[BucketOf(bounds, p)].push_back({p, iv});
    }
  }
  return part;
}

// One op instance's direct activity: how many, the union's length, and its subtree's union.
struct OpCredit {
  uint32_t op;
  int64_t count;
  int64_t direct_ns;
  int64_t subtree_ns;
};

// The op instances of one bucket with direct activity, in increasing op order.
std::vector<OpCredit> VisitBucket(std::vector<CreditPart>& parts, size_t b, bool with_subtree) {
  auto gather = [&](std::vector<std::vector<Credit>> CreditPart::*member) {
    if (parts.size() == 1) return std::move((parts.front().*member)[b]);
    std::vector<Credit> all;
    for (CreditPart& p : parts) {
      std::vector<Credit>& mine = (p.*member)[b];
      all.insert(all.end(), mine.begin(), mine.end());
      std::vector<Credit>().swap(mine);
    }
    return all;
  };
  std::vector<std::pair<uint32_t, int64_t>> subtree_ns;
  if (with_subtree) {
    std::vector<Credit> subtree = gather(&CreditPart::subtree);
    ForEachOp(&subtree, [&](uint32_t op, int64_t, int64_t union_ns) {
      subtree_ns.emplace_back(op, union_ns);
    });
  }
  std::vector<Credit> direct = gather(&CreditPart::direct);
  std::vector<OpCredit> out;
  size_t in_subtree = 0;
  // Every launcher is in `subtree` too (its own activity), in the same bucket.
  ForEachOp(&direct, [&](uint32_t op, int64_t count, int64_t union_ns) {
    int64_t sub = 0;
    if (with_subtree) {
      while (subtree_ns[in_subtree].first != op) ++in_subtree;
      sub = subtree_ns[in_subtree].second;
    }
    out.push_back({op, count, union_ns, sub});
  });
  return out;
}

}  // namespace

// Device activity is credited to op instances in parallel over ranges of slices, into buckets by
// op instance; each bucket is sorted and swept on its own, and the buckets are read in op order,
// which is the order one sorted sweep over every credit visits them: the rows are the same for
// every thread count.
OpSummary ComputeOpSummary(const Trace& trace, bool with_subtree, int threads) {
  const auto& slices = trace.slices();
  const auto n = static_cast<uint32_t>(slices.size());
  const size_t parts_wanted = analysis::AnalysisParts(threads);
  const auto ranges = internal::SplitRange(n, parts_wanted);
  // Buckets of op instances: as many as the parts, up to kMaxCreditBuckets, so the parts' bucket
  // lists grow with the thread count, not with its square.
  std::vector<uint32_t> bounds;
  for (const auto& [begin, end] :
       internal::SplitRange(n, std::min(ranges.size(), kMaxCreditBuckets))) {
    bounds.push_back(begin);
  }
  if (bounds.empty()) bounds.push_back(0);
  std::vector<CreditPart> parts(ranges.size());
  internal::ParallelFor(threads, ranges.size(), [&](size_t i) {
    parts[i] = ScanCredits(trace, ranges[i], bounds, with_subtree);
  });
  std::vector<std::vector<OpCredit>> buckets(parts.empty() ? 0 : bounds.size());
  internal::ParallelFor(threads, buckets.size(),
                        [&](size_t b) { buckets[b] = VisitBucket(parts, b, with_subtree); });
  OpSummary summary;
  for (const CreditPart& p : parts) summary.unattributed_activities += p.unattributed;
  std::map<std::string_view, OpDeviceTime> by_name;
  for (const std::vector<OpCredit>& bucket : buckets) {
    for (const OpCredit& c : bucket) {
      OpDeviceTime& row = by_name[trace.Str(slices[c.op].name)];
      row.count += 1;
      row.direct_activities += c.count;
      row.direct_device_ns = internal::SatAdd(row.direct_device_ns, c.direct_ns);
      if (with_subtree)
        row.subtree_device_ns = internal::SatAdd(row.subtree_device_ns, c.subtree_ns);
    }
  }
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

namespace {

// A kernel summary group: (launcher op name, kernel name, stream); 0 = no launcher.
struct KernelKey {
  StringId parent;
  StringId kernel;
  int64_t stream;
  bool operator<(const KernelKey& o) const {
    return std::tie(parent, kernel, stream) < std::tie(o.parent, o.kernel, o.stream);
  }
};
using KernelGroups = std::map<KernelKey, KernelStats>;

KernelGroups ScanKernels(const Trace& trace, std::pair<uint32_t, uint32_t> range) {
  const auto& slices = trace.slices();
  const auto& tracks = trace.tracks();
  KernelGroups groups;
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = slices[i];
    if (s.kind != ActivityKind::kKernel) continue;
    const uint32_t launcher = analysis::LauncherOf(trace, i);
    const int64_t stream = s.track < tracks.size() ? tracks[s.track].tid : 0;
    KernelStats& k = groups[{launcher == kNone ? 0 : slices[launcher].name, s.name, stream}];
    if (k.count == 0) {
      k.min_ns = s.dur_ns;
      k.max_ns = s.dur_ns;
    }
    k.count += 1;
    k.sum_ns = internal::SatAdd(k.sum_ns, s.dur_ns);
    k.min_ns = std::min(k.min_ns, s.dur_ns);
    k.max_ns = std::max(k.max_ns, s.dur_ns);
  }
  return groups;
}

}  // namespace

// Ranges of slices are grouped in parallel and their groups merged in slice order: counts,
// minima and maxima do not depend on the split, and a group's sum adds the same durations in
// the same order.
KernelSummary ComputeKernelSummary(const Trace& trace, int threads) {
  const auto ranges = internal::SplitRange(static_cast<uint32_t>(trace.slices().size()),
                                           analysis::AnalysisParts(threads));
  std::vector<KernelGroups> parts(ranges.size());
  internal::ParallelFor(threads, ranges.size(),
                        [&](size_t i) { parts[i] = ScanKernels(trace, ranges[i]); });
  KernelGroups groups;
  for (KernelGroups& part : parts) {
    if (groups.empty()) {
      groups = std::move(part);
      continue;
    }
    for (auto& [key, stats] : part) {
      auto [it, inserted] = groups.try_emplace(key, stats);
      if (inserted) continue;
      KernelStats& k = it->second;
      k.count += stats.count;
      k.sum_ns = internal::SatAdd(k.sum_ns, stats.sum_ns);
      k.min_ns = std::min(k.min_ns, stats.min_ns);
      k.max_ns = std::max(k.max_ns, stats.max_ns);
    }
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

namespace {

// One range of slices' linked device activity: per runtime call name, the launch delays and the
// runtime calls in activity order (a call that launched several activities appears once per
// activity; the merge keeps its first).
struct LaunchPart {
  struct ByName {
    std::vector<int64_t> delays;
    std::vector<uint32_t> calls;
  };
  std::map<std::string_view, ByName> by_name;
  std::vector<int64_t> delays;
  uint64_t unlinked = 0;
};

LaunchPart ScanLaunches(const Trace& trace, std::pair<uint32_t, uint32_t> range) {
  const auto& slices = trace.slices();
  LaunchPart part;
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    const uint32_t rt = trace.Link(i).runtime;
    if (rt == kNone) {
      ++part.unlinked;
      continue;
    }
    const Slice& call = slices[rt];
    LaunchPart::ByName& named = part.by_name[trace.Str(call.name)];
    const int64_t delay = s.ts_ns - call.ts_ns;
    named.delays.push_back(delay);
    named.calls.push_back(rt);
    part.delays.push_back(delay);
  }
  return part;
}

}  // namespace

// Ranges of slices are scanned in parallel; the merge takes each runtime call's duration once, at
// its first activity in slice order, and every statistic is over sorted values, so the figures
// are the same for every split. The summaries (a sort each) run in parallel too.
LaunchStatistics ComputeLaunchStatistics(const Trace& trace, int threads) {
  const auto& slices = trace.slices();
  const auto ranges =
      internal::SplitRange(static_cast<uint32_t>(slices.size()), analysis::AnalysisParts(threads));
  std::vector<LaunchPart> parts(ranges.size());
  internal::ParallelFor(threads, ranges.size(),
                        [&](size_t i) { parts[i] = ScanLaunches(trace, ranges[i]); });
  LaunchStatistics out;
  std::vector<uint8_t> runtime_seen(slices.size(), 0);
  std::map<std::string_view, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_name;
  std::vector<int64_t> all_dur, all_delay;
  for (LaunchPart& part : parts) {
    out.unlinked_activities += part.unlinked;
    all_delay.insert(all_delay.end(), part.delays.begin(), part.delays.end());
    for (auto& [name, named] : part.by_name) {
      auto& [durs, delays] = by_name[name];
      delays.insert(delays.end(), named.delays.begin(), named.delays.end());
      for (uint32_t rt : named.calls) {
        if (runtime_seen[rt]) continue;
        runtime_seen[rt] = 1;
        durs.push_back(slices[rt].dur_ns);
        all_dur.push_back(slices[rt].dur_ns);
      }
    }
  }
  parts.clear();
  out.by_name.resize(by_name.size());
  std::vector<std::pair<std::vector<int64_t>*, DurationStats*>> jobs = {
      {&all_dur, &out.duration}, {&all_delay, &out.launch_delay}};
  size_t r = 0;
  for (auto& [name, values] : by_name) {
    out.by_name[r].name = std::string(name);
    jobs.emplace_back(&values.first, &out.by_name[r].duration);
    jobs.emplace_back(&values.second, &out.by_name[r].launch_delay);
    ++r;
  }
  internal::ParallelFor(threads, jobs.size(),
                        [&](size_t j) { *jobs[j].second = Summarize(jobs[j].first); });
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
