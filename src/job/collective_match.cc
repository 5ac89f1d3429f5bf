// Matching collectives across ranks and the figures per instance (see collective_match.h).
#include "job/collective_match.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "job/collective_args.h"

namespace opscope::job {

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

Matched MatchCollectives(const std::vector<const RankSummary*>& ranks) {
  Matched matched;
  for (const RankSummary* r : ranks) {
    for (const CollectiveRecord& c : r->collectives) {
      matched[{c.group, c.seq}].emplace_back(r->rank, &c);
    }
  }
  for (auto& [key, members] : matched) {
    std::sort(members.begin(), members.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return matched;
}

std::vector<ClockFit> FitClocks(const std::vector<const RankSummary*>& ranks, size_t reference,
                                const Matched& matched, bool align) {
  std::vector<ClockFit> fits(ranks.size());
  if (!align || reference >= ranks.size()) return fits;
  const int ref_rank = ranks[reference]->rank;
  std::map<int, size_t> index_of;
  for (size_t i = 0; i < ranks.size(); ++i) index_of[ranks[i]->rank] = i;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs(ranks.size());
  for (const auto& [key, members] : matched) {
    const CollectiveRecord* ref = nullptr;
    for (const auto& [rank, record] : members) {
      if (rank == ref_rank) ref = record;
    }
    if (!ref) continue;
    for (const auto& [rank, record] : members) {
      pairs[index_of[rank]].emplace_back(ref->end_ns, record->end_ns);
    }
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i != reference) fits[i] = FitClock(std::move(pairs[i]));
  }
  return fits;
}

namespace {

// Arrivals closer than this are clock noise (aligned clocks agree to tens of nanoseconds), not a
// rank holding the others back.
constexpr int64_t kMinStragglerSkewNs = 1000;

CollectiveInstance Instance(const InstanceKey& key,
                            const std::vector<std::pair<int, const CollectiveRecord*>>& members,
                            const std::map<int, const ClockFit*>& fit_of_rank) {
  CollectiveInstance in;
  in.group = key.first;
  in.seq = key.second;
  const CollectiveRecord& first = *members.front().second;
  in.name = first.name;
  for (const auto& [rank, r] : members) {
    if (in.dtype.empty() && !r->dtype.empty()) in.dtype = r->dtype;
    if (in.group_size == 0) in.group_size = r->group_size;
    if (in.bytes == 0 && DtypeBytes(r->dtype) > 0 && std::max(r->in_nelems, r->out_nelems) > 0) {
      in.bytes = std::max(r->in_nelems, r->out_nelems) * DtypeBytes(r->dtype);
    }
  }
  if (in.group_size == 0) in.group_size = static_cast<int64_t>(members.size());
  int64_t last_start = std::numeric_limits<int64_t>::min();
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t earliest_end = std::numeric_limits<int64_t>::max();
  for (const auto& [rank, r] : members) {
    const ClockFit* fit = fit_of_rank.at(rank);
    const int64_t start = fit->ToReference(r->start_ns);
    const int64_t end = fit->ToReference(r->end_ns);
    in.ranks.push_back(rank);
    in.start_ns.push_back(start);
    if (start > last_start) {
      last_start = start;
      in.last_rank = rank;
    }
    first_start = std::min(first_start, start);
    earliest_end = std::min(earliest_end, end);
  }
  for (int64_t start : in.start_ns) in.wait_ns.push_back(last_start - start);
  in.skew_ns = last_start - first_start;
  if (in.skew_ns < kMinStragglerSkewNs) in.last_rank = -1;
  in.transfer_ns = earliest_end - last_start;
  if (in.bytes > 0 && in.transfer_ns > 0) {
    in.algbw_gbps = static_cast<double>(in.bytes) / static_cast<double>(in.transfer_ns);
    const double factor = BusBandwidthFactor(CollectiveKind(in.name), in.group_size);
    if (factor >= 0) in.busbw_gbps = in.algbw_gbps * factor;
  }
  return in;
}

}  // namespace

std::vector<CollectiveInstance> ComputeInstances(
    const Matched& matched, const std::map<int, const ClockFit*>& fit_of_rank) {
  std::vector<CollectiveInstance> out;
  out.reserve(matched.size());
  for (const auto& [key, members] : matched) out.push_back(Instance(key, members, fit_of_rank));
  return out;
}

std::vector<CollectiveSummaryRow> SummarizeCollectives(
    const std::vector<CollectiveInstance>& instances) {
  struct Acc {
    std::vector<double> skews;
    double transfer = 0, busbw = 0;
    int64_t busbw_n = 0;
  };
  std::map<std::pair<std::string, int64_t>, Acc> by_kind;
  for (const CollectiveInstance& in : instances) {
    Acc& a = by_kind[{in.name, in.bytes}];
    a.skews.push_back(static_cast<double>(in.skew_ns));
    a.transfer += static_cast<double>(in.transfer_ns);
    if (in.busbw_gbps >= 0) {
      a.busbw += in.busbw_gbps;
      ++a.busbw_n;
    }
  }
  std::vector<CollectiveSummaryRow> rows;
  for (auto& [key, a] : by_kind) {
    CollectiveSummaryRow row;
    row.name = key.first;
    row.bytes = key.second;
    row.count = static_cast<int64_t>(a.skews.size());
    double sum = 0;
    for (double s : a.skews) sum += s;
    row.mean_skew_ns = sum / static_cast<double>(row.count);
    row.max_skew_ns = *std::max_element(a.skews.begin(), a.skews.end());
    row.median_skew_ns = MedianOf(std::move(a.skews));
    row.mean_transfer_ns = a.transfer / static_cast<double>(row.count);
    if (a.busbw_n > 0) row.busbw_gbps = a.busbw / static_cast<double>(a.busbw_n);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.mean_transfer_ns * static_cast<double>(x.count) >
           y.mean_transfer_ns * static_cast<double>(y.count);
  });
  return rows;
}

std::vector<StragglerRow> FindStragglers(const std::vector<CollectiveInstance>& instances,
                                         const Matched& matched,
                                         const std::vector<const RankSummary*>& ranks,
                                         int64_t steps) {
  std::map<int, StragglerRow> rows;
  std::map<int, int64_t> evidence_n;
  for (const RankSummary* r : ranks) rows[r->rank].rank = r->rank;
  size_t i = 0;
  for (const auto& [key, members] : matched) {
    const CollectiveInstance& in = instances[i++];
    if (in.last_rank < 0 || in.ranks.size() < 2) continue;
    StragglerRow& row = rows[in.last_rank];
    int64_t caused = 0;
    for (int64_t w : in.wait_ns) caused += w;
    row.times_last += 1;
    row.wait_caused_ns += caused;
    if (caused > row.worst_wait_ns) {
      row.worst_wait_ns = caused;
      row.worst_group = in.group;
      row.worst_seq = in.seq;
    }
    std::vector<double> before;
    for (const auto& [rank, record] : members) {
      before.push_back(static_cast<double>(record->compute_before_ns));
      if (rank == in.last_rank)
        row.compute_before_ns += static_cast<double>(record->compute_before_ns);
    }
    row.median_compute_before_ns += MedianOf(std::move(before));
    evidence_n[in.last_rank] += 1;
  }
  std::vector<StragglerRow> out;
  for (auto& [rank, row] : rows) {
    if (const int64_t n = evidence_n[rank]; n > 0) {
      row.compute_before_ns /= static_cast<double>(n);
      row.median_compute_before_ns /= static_cast<double>(n);
    }
    row.wait_caused_per_step_ns =
        steps > 0 ? static_cast<double>(row.wait_caused_ns) / static_cast<double>(steps)
                  : std::numeric_limits<double>::quiet_NaN();
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const StragglerRow& a, const StragglerRow& b) {
    return a.wait_caused_ns > b.wait_caused_ns;
  });
  return out;
}

}  // namespace opscope::job
