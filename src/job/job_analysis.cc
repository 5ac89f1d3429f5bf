// AnalyzeJob: rank checks, per-rank timeline, matched collectives, stragglers, ops across ranks.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "job/collective_match.h"
#include "opscope/job.h"

namespace opscope {
namespace {

// "3, 5, 9-12": ranks as compact ranges.
std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j > i + 1 ? fmt::format("{}-{}", ranks[i], ranks[j])
                     : (j == i + 1 ? fmt::format("{}, {}", ranks[i], ranks[j])
                                   : std::to_string(ranks[i]));
    i = j + 1;
  }
  return out;
}

// Duplicate and unknown ranks are fatal; failed imports make the job partial; world sizes and
// gaps are warnings. Fills report->error / errors / warnings / world_size.
void CheckRanks(const std::vector<RankSummary>& all, JobReport* report) {
  std::map<int, const RankSummary*> by_rank;
  for (const RankSummary& r : all) {
    if (r.rank < 0) {
      if (!r.error.empty()) continue;  // reported as an import error below
      report->error = fmt::format(
          "{}: cannot tell which rank this trace is: it has no distributedInfo.rank and no "
          "rank N in its name (name files rank-0.json, rank-1.json, ...)",
          r.file);
      report->error_file = r.file;
      return;
    }
    auto [it, added] = by_rank.emplace(r.rank, &r);
    if (!added) {
      report->error = fmt::format("rank {} is claimed by two traces: {} and {}", r.rank,
                                  RankFileName(it->second->file, it->second->part),
                                  RankFileName(r.file, r.part));
      report->error_file = r.file;
      return;
    }
  }
  for (const RankSummary& r : all) {
    if (r.error.empty()) continue;
    report->partial = true;
    report->errors.push_back(
        Status::InvalidInput(r.error, r.error_offset, RankFileName(r.file, r.part)));
  }
  std::map<int, std::vector<int>> ranks_by_world;
  for (const auto& [rank, r] : by_rank) {
    if (r->world_size > 0) ranks_by_world[r->world_size].push_back(rank);
  }
  int world = by_rank.empty() ? 0 : by_rank.rbegin()->first + 1;
  if (!ranks_by_world.empty()) {
    size_t best = 0;
    for (const auto& [size, ranks] : ranks_by_world) {
      if (ranks.size() > best) {
        best = ranks.size();
        world = size;
      }
    }
  }
  if (ranks_by_world.size() > 1) {
    std::string text;
    for (const auto& [size, ranks] : ranks_by_world) {
      text += fmt::format("{}{} (rank{} {})", text.empty() ? "" : ", ", size,
                          ranks.size() == 1 ? "" : "s", RankList(ranks));
    }
    report->warnings.push_back(
        fmt::format("the traces disagree on the world size: {}; using {}", text, world));
  }
  report->world_size = world;
  std::vector<int> missing;
  for (int r = 0; r < world; ++r) {
    if (!by_rank.count(r)) missing.push_back(r);
  }
  if (!missing.empty()) {
    report->warnings.push_back(
        fmt::format("rank{} {} missing (world size {}): the job is "
                    "analysed without {}",
                    missing.size() == 1 ? "" : "s", RankList(missing), world,
                    missing.size() == 1 ? "it" : "them"));
  }
  std::vector<int> extra;
  for (const auto& [rank, r] : by_rank) {
    if (rank >= world) extra.push_back(rank);
  }
  if (!extra.empty()) {
    report->warnings.push_back(fmt::format("rank{} {} beyond the world size {}",
                                           extra.size() == 1 ? "" : "s", RankList(extra), world));
  }
  for (const auto& [rank, r] : by_rank) {
    if (r->skipped_events > 0) {
      report->warnings.push_back(fmt::format("rank {} ({}): {} events skipped while importing",
                                             rank, RankFileName(r->file, r->part),
                                             r->skipped_events));
    }
  }
}

RankRow MakeRankRow(const RankSummary& r, const job::ClockFit& fit) {
  RankRow row;
  row.rank = r.rank;
  row.file = r.file;
  row.part = r.part;
  row.timeline = r.timeline;
  row.overlap_pct = r.overlap_comm_ns > 0 ? std::round(10000.0 * static_cast<double>(r.overlap_ns) /
                                                       static_cast<double>(r.overlap_comm_ns)) /
                                                100.0
                                          : std::numeric_limits<double>::quiet_NaN();
  row.clock_offset_ns = fit.offset_ns;
  row.clock_drift_ppm = fit.drift * 1e6;
  row.clock_origin_ns = fit.origin_ns;
  row.clock_points = fit.points;
  return row;
}

std::vector<OpAcrossRanks> OpsAcrossRanks(const std::vector<const RankSummary*>& ranks) {
  std::map<std::string_view, std::vector<std::pair<int64_t, int>>> by_op;
  for (const RankSummary* r : ranks) {
    for (const RankOpTime& op : r->ops) by_op[op.name].emplace_back(op.device_ns, r->rank);
  }
  std::vector<OpAcrossRanks> out;
  for (auto& [name, values] : by_op) {
    OpAcrossRanks row;
    row.name = std::string(name);
    row.ranks = static_cast<int>(values.size());
    std::vector<double> ns;
    row.min_ns = std::numeric_limits<int64_t>::max();
    for (const auto& [v, rank] : values) {
      ns.push_back(static_cast<double>(v));
      row.min_ns = std::min(row.min_ns, v);
      if (v > row.max_ns || row.max_rank < 0) {
        row.max_ns = v;
        row.max_rank = rank;
      }
    }
    row.median_ns = job::MedianOf(std::move(ns));
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpAcrossRanks& a, const OpAcrossRanks& b) {
    return a.max_ns > b.max_ns;
  });
  return out;
}

// Ranks x steps of sync wait (StepWaitRow). `instances` are in `matched`'s order, and each
// instance's ranks in its members' order.
void ComputeStepWait(const std::vector<CollectiveInstance>& instances, const job::Matched& matched,
                     const std::vector<const RankSummary*>& ranks, JobReport* report) {
  std::set<int64_t> numbers;
  for (const RankSummary* r : ranks) {
    for (const StepRecord& s : r->steps) numbers.insert(s.step);
  }
  report->step_numbers.assign(numbers.begin(), numbers.end());
  if (numbers.empty()) return;
  // Each rank's (its own start, its wait) at every instance it took part in.
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> waits;
  auto instance = instances.begin();
  for (const auto& [key, members] : matched) {
    for (size_t i = 0; i < members.size(); ++i) {
      waits[members[i].first].emplace_back(members[i].second->start_ns, instance->wait_ns[i]);
    }
    ++instance;
  }
  for (const RankSummary* r : ranks) {
    if (r->steps.empty()) continue;
    StepWaitRow row;
    row.rank = r->rank;
    row.wait_ns.assign(numbers.size(), -1);
    std::vector<std::pair<int64_t, int64_t>>& mine = waits[r->rank];
    std::sort(mine.begin(), mine.end());
    for (const StepRecord& s : r->steps) {
      const auto column = static_cast<size_t>(
          std::lower_bound(report->step_numbers.begin(), report->step_numbers.end(), s.step) -
          report->step_numbers.begin());
      int64_t sum = 0;
      for (auto it = std::lower_bound(mine.begin(), mine.end(),
                                      std::pair{s.start_ns, std::numeric_limits<int64_t>::min()});
           it != mine.end() && it->first < s.end_ns; ++it) {
        sum += it->second;
      }
      // A step number seen twice on one rank (restarted numbering) adds up.
      row.wait_ns[column] = std::max<int64_t>(row.wait_ns[column], 0) + sum;
    }
    report->step_wait.push_back(std::move(row));
  }
}

std::string Us(double ns) { return fmt::format("{:.1f} us", ns / 1e3); }

void AddFindings(JobReport* report) {
  if (!report->stragglers.empty() && report->stragglers.front().wait_caused_ns > 0) {
    const StragglerRow& s = report->stragglers.front();
    std::string text = fmt::format(
        "rank {} is the top straggler: it arrived last at {} collective{} and made the other "
        "ranks wait {} in all",
        s.rank, s.times_last, s.times_last == 1 ? "" : "s",
        Us(static_cast<double>(s.wait_caused_ns)));
    if (std::isfinite(s.wait_caused_per_step_ns)) {
      text += fmt::format(" ({} per step)", Us(s.wait_caused_per_step_ns));
    }
    text += fmt::format(
        "; its computation before those collectives averaged {} against {} on the median rank; "
        "worst at {} seq {} ({} of waiting)",
        Us(s.compute_before_ns), Us(s.median_compute_before_ns), s.worst_group, s.worst_seq,
        Us(static_cast<double>(s.worst_wait_ns)));
    report->findings.push_back(std::move(text));
  }
  double worst_offset = 0;
  int worst_rank = -1;
  for (const RankRow& r : report->ranks) {
    if (std::fabs(r.clock_offset_ns) > std::fabs(worst_offset)) {
      worst_offset = r.clock_offset_ns;
      worst_rank = r.rank;
    }
  }
  if (report->clocks_aligned && std::fabs(worst_offset) >= 1e6) {
    report->findings.push_back(fmt::format(
        "clocks disagree: rank {}'s clock is {} off rank {}'s; skew is computed on aligned "
        "clocks (--no-clock-align turns this off)",
        worst_rank, Us(worst_offset), report->reference_rank));
  }
}

}  // namespace

int64_t RankRow::ToReference(int64_t rank_ns) const {
  job::ClockFit fit;
  fit.origin_ns = clock_origin_ns;
  fit.offset_ns = clock_offset_ns;
  fit.drift = clock_drift_ppm / 1e6;
  return fit.ToReference(rank_ns);
}

JobReport AnalyzeJob(std::vector<RankSummary> all, const JobOptions& options) {
  JobReport report;
  std::sort(all.begin(), all.end(), [](const RankSummary& a, const RankSummary& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.file != b.file ? a.file < b.file : a.part < b.part;
  });
  CheckRanks(all, &report);
  if (!report.error.empty()) return report;
  std::vector<const RankSummary*> ranks;
  std::map<std::string, int> device_types;
  for (const RankSummary& r : all) {
    if (!r.error.empty()) continue;
    ranks.push_back(&r);
    if (!r.device_type.empty()) device_types[r.device_type] += 1;
    report.steps = std::max<int64_t>(report.steps, static_cast<int64_t>(r.steps.size()));
  }
  for (const auto& [type, n] : device_types) {
    if (report.device_type.empty() || n > device_types[report.device_type]) {
      report.device_type = type;
    }
  }
  const job::Matched matched = job::MatchCollectives(ranks);
  size_t reference = 0;
  while (reference < ranks.size() && ranks[reference]->collectives.empty()) ++reference;
  report.clocks_aligned = options.align_clocks && reference < ranks.size();
  if (reference < ranks.size()) report.reference_rank = ranks[reference]->rank;
  const std::vector<job::ClockFit> fits =
      job::FitClocks(ranks, reference, matched, options.align_clocks);
  std::map<int, const job::ClockFit*> fit_of_rank;
  for (size_t i = 0; i < ranks.size(); ++i) {
    fit_of_rank[ranks[i]->rank] = &fits[i];
    report.ranks.push_back(MakeRankRow(*ranks[i], fits[i]));
  }
  report.collectives = job::ComputeInstances(matched, fit_of_rank);
  report.collective_summary = job::SummarizeCollectives(report.collectives);
  report.stragglers = job::FindStragglers(report.collectives, matched, ranks, report.steps);
  ComputeStepWait(report.collectives, matched, ranks, &report);
  report.ops = OpsAcrossRanks(ranks);
  AddFindings(&report);
  report.summaries = std::move(all);
  return report;
}

}  // namespace opscope
