// `opscope check` on two jobs (CheckJobs, job.h): the step time as the slowest rank's per step
// number, device busy time and each op's device time as the busiest rank's, and the rows of the
// job diff that moved most (ranks, collectives by name and size, ops across ranks).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "opscope/check.h"
#include "opscope/job.h"

namespace opscope {
namespace {

// Step number -> the slowest rank's duration of that step, ascending step number.
std::map<int64_t, int64_t> SlowestRankSteps(const JobReport& job) {
  std::map<int64_t, int64_t> out;
  for (const RankSummary& s : job.summaries) {
    for (const StepRecord& step : s.steps) {
      int64_t& slot = out[step.step];
      slot = std::max(slot, step.end_ns - step.start_ns);
    }
  }
  return out;
}

std::vector<int64_t> StepSamples(const JobReport& job, int skip) {
  std::vector<int64_t> out;
  for (const auto& [number, ns] : SlowestRankSteps(job)) out.push_back(ns);
  const size_t k = std::min(out.size(), static_cast<size_t>(std::max(skip, 0)));
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k));
  return out;
}

int64_t BusiestRank(const JobReport& job) {
  int64_t busy = 0;
  for (const RankRow& r : job.ranks) busy = std::max(busy, r.timeline.busy_ns);
  return busy;
}

// Op name -> the busiest rank's direct device time.
std::map<std::string, int64_t> OpMax(const JobReport& job) {
  std::map<std::string, int64_t> out;
  for (const OpAcrossRanks& op : job.ops) out[op.name] = op.max_ns;
  return out;
}

std::vector<MovedRow> MovedRows(const JobReport& a, const JobReport& b, int rows) {
  std::vector<MovedRow> out;
  const auto add = [&](const char* kind, const std::string& name, bool in_a, bool in_b, int64_t va,
                       int64_t vb) {
    if (in_a && in_b && va == vb) return;
    out.push_back({kind, name, !in_a ? "added" : !in_b ? "removed" : "changed", va, vb});
  };
  std::map<int, std::pair<const RankRow*, const RankRow*>> ranks;
  for (const RankRow& r : a.ranks) ranks[r.rank].first = &r;
  for (const RankRow& r : b.ranks) ranks[r.rank].second = &r;
  for (const auto& [rank, p] : ranks) {
    add("rank", fmt::format("rank {} busy", rank), p.first, p.second,
        p.first ? p.first->timeline.busy_ns : 0, p.second ? p.second->timeline.busy_ns : 0);
  }
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> collectives;
  std::map<std::pair<std::string, int64_t>, int> present;  // bit 1: in a, bit 2: in b
  for (const auto& [job, bit] : {std::pair{&a, 1}, std::pair{&b, 2}}) {
    for (const CollectiveSummaryRow& c : job->collective_summary) {
      auto& v = collectives[{c.name, c.bytes}];
      (bit == 1 ? v.first : v.second) =
          static_cast<int64_t>(c.mean_transfer_ns * static_cast<double>(c.count));
      present[{c.name, c.bytes}] |= bit;
    }
  }
  for (const auto& [key, v] : collectives) {
    const int bits = present[key];
    add("collective", fmt::format("{} {} bytes (transfer)", key.first, key.second), bits & 1,
        bits & 2, v.first, v.second);
  }
  const std::map<std::string, int64_t> ops_a = OpMax(a), ops_b = OpMax(b);
  std::map<std::string, std::pair<const int64_t*, const int64_t*>> ops;
  for (const auto& [name, ns] : ops_a) ops[name].first = &ns;
  for (const auto& [name, ns] : ops_b) ops[name].second = &ns;
  for (const auto& [name, p] : ops) {
    add("op", name, p.first, p.second, p.first ? *p.first : 0, p.second ? *p.second : 0);
  }
  std::stable_sort(out.begin(), out.end(), [](const MovedRow& x, const MovedRow& y) {
    return x.impact_ns() > y.impact_ns();
  });
  if (rows >= 0 && out.size() > static_cast<size_t>(rows)) out.resize(rows);
  return out;
}

}  // namespace

CheckResult CheckJobs(const JobReport& baseline, const JobReport& candidate,
                      const CheckOptions& options) {
  CheckResult r;
  r.options = options;
  for (const CheckMetric& m : options.metrics) {
    if (m.kind == CheckMetric::Kind::kKernel) {
      return CheckFailed(
          fmt::format("metric {}: kernel metrics need single traces (a job's rank summaries "
                      "keep ops, not kernels); compare one rank's traces, or use op:NAME",
                      m.ToString()));
    }
  }
  std::vector<int64_t> steps_a = StepSamples(baseline, options.skip_steps);
  std::vector<int64_t> steps_b = StepSamples(candidate, options.skip_steps);
  if (steps_a.empty() || steps_b.empty()) {
    r.notes.push_back("a job without ProfilerStep# on some side: step is the slowest rank's total");
    steps_a.assign(1, 0);
    steps_b.assign(1, 0);
    for (const RankRow& row : baseline.ranks)
      steps_a[0] = std::max(steps_a[0], row.timeline.total_ns);
    for (const RankRow& row : candidate.ranks) {
      steps_b[0] = std::max(steps_b[0], row.timeline.total_ns);
    }
  } else {
    r.steps_baseline = static_cast<int64_t>(steps_a.size());
    r.steps_candidate = static_cast<int64_t>(steps_b.size());
    r.notes.push_back("step: the slowest rank's time of each step number");
    if (options.skip_steps > 0) {
      r.notes.push_back(fmt::format("the first {} steps of each side skipped", options.skip_steps));
    }
  }
  const size_t fewest = std::min(steps_a.size(), steps_b.size());
  if (fewest < static_cast<size_t>(std::max(options.min_steps, 1))) {
    return CheckFailed(
        fmt::format("{} steps in the baseline job and {} in the candidate; "
                    "--min-steps {} needs at least that many on each side",
                    steps_a.size(), steps_b.size(), options.min_steps));
  }
  r.notes.push_back("device and ops: the busiest rank's whole-job figure (one value per side)");
  const std::map<std::string, int64_t> ops_a = OpMax(baseline), ops_b = OpMax(candidate);
  std::vector<CheckMetric> metrics = options.metrics;
  if (metrics.empty()) {
    metrics = {{CheckMetric::Kind::kStep, ""}, {CheckMetric::Kind::kDevice, ""}};
    const double floor_a = options.min_share_pct / 100 * static_cast<double>(BusiestRank(baseline));
    for (const auto& [name, ns] : ops_a) {
      const auto other = ops_b.find(name);
      if (other != ops_b.end() && ns > 0 && other->second > 0 &&
          static_cast<double>(std::max(ns, other->second)) >= floor_a) {
        metrics.push_back({CheckMetric::Kind::kOp, name});
      }
    }
  }
  for (const CheckMetric& m : metrics) {
    std::vector<int64_t> a, b;
    if (m.kind == CheckMetric::Kind::kStep) {
      a = steps_a;
      b = steps_b;
    } else if (m.kind == CheckMetric::Kind::kDevice) {
      a = {BusiestRank(baseline)};
      b = {BusiestRank(candidate)};
    } else {
      const auto x = ops_a.find(m.name), y = ops_b.find(m.name);
      if (x == ops_a.end() && y == ops_b.end()) {
        return CheckFailed(
            fmt::format("metric {}: no op of that name in either job", m.ToString()));
      }
      a = {x == ops_a.end() ? 0 : x->second};
      b = {y == ops_b.end() ? 0 : y->second};
    }
    r.metrics.push_back(CompareSamples(m, std::move(a), std::move(b), options));
  }
  r.moved = MovedRows(baseline, candidate, options.rows);
  r.diff_json = JobDiffJson(baseline, candidate);
  DecideVerdict(&r);
  return r;
}

}  // namespace opscope
