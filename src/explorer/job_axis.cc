// The job's aligned axis and its viewport over several ranks (see job_axis.h).
#include "explorer/job_axis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/saturating.h"

namespace opscope::explorer {

int64_t JobAxis::ToAxis(size_t r, int64_t ts_ns) const {
  const Rank& k = ranks[r];
  return internal::SatSub(k.row.ToReference(internal::SatAdd(k.base_ns, ts_ns)), origin_ns);
}

// RankRow::ToReference inverted: rank = origin + offset + (reference - origin) x (1 + drift),
// widened by 2 ns for the rounding of either way.
std::pair<int64_t, int64_t> JobAxis::TraceRange(size_t r, int64_t a0, int64_t a1) const {
  const Rank& k = ranks[r];
  const RankRow& row = k.row;
  const double drift = row.clock_drift_ppm / 1e6;
  auto to_trace = [&](int64_t a) {
    const int64_t reference = internal::SatAdd(a, origin_ns);
    int64_t rank_ns = 0;
    if (drift == 0) {
      rank_ns = internal::SatAdd(reference, std::llround(row.clock_offset_ns));
    } else {
      const double rel = static_cast<double>(internal::SatSub(reference, row.clock_origin_ns));
      rank_ns = internal::SatAdd(row.clock_origin_ns,
                                 std::llround(row.clock_offset_ns + rel * (1.0 + drift)));
    }
    return internal::SatSub(rank_ns, k.base_ns);
  };
  return {internal::SatSub(to_trace(a0), 2), internal::SatAdd(to_trace(a1), 2)};
}

JobAxis MakeJobAxis(const JobReport& report, const std::vector<JobRankTrace>& ranks) {
  std::map<int, JobAxis::Rank> by_rank;
  for (const JobRankTrace& t : ranks) {
    const auto row = std::find_if(report.ranks.begin(), report.ranks.end(),
                                  [&](const RankRow& r) { return r.rank == t.rank; });
    const bool summarised =
        std::any_of(report.summaries.begin(), report.summaries.end(),
                    [&](const RankSummary& s) { return s.rank == t.rank && s.error.empty(); });
    if (row == report.ranks.end() || !summarised) continue;
    by_rank[t.rank] = {*row, t.trace, t.index, t.index->trace().metadata().base_time_ns};
  }
  JobAxis axis;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (auto& [rank, k] : by_rank) {
    first = std::min(first, k.row.ToReference(k.base_ns + k.index->start_ns()));
    last = std::max(last, k.row.ToReference(k.base_ns + k.index->end_ns()));
    axis.ranks.push_back(std::move(k));
  }
  if (axis.ranks.empty()) first = last = 0;
  axis.origin_ns = first;
  axis.end_ns = std::max<int64_t>(internal::SatSub(last, first), 1);
  return axis;
}

void WriteJobViewport(const JobAxis& axis, int64_t t0, int64_t t1, int width_px,
                      const std::vector<uint32_t>& lanes, bool compact, bool flat, JsonWriter* w) {
  std::map<size_t, std::vector<uint32_t>> by_rank;  // rank position -> its lanes, in order
  for (uint32_t id : lanes) {
    const size_t r = id >> kJobLaneBits;
    if (r < axis.ranks.size()) by_rank[r].push_back(id & ((1u << kJobLaneBits) - 1));
  }
  ViewportNames names;
  w->BeginObject();
  w->Field("t0", t0);
  w->Field("t1", t1);
  w->Field("ns_per_px", std::max(1e-3, static_cast<double>(t1 - t0) / std::max(1, width_px)));
  if (flat) w->Field("stride", compact ? 6 : 9);
  w->Key("lanes");
  w->BeginArray();
  for (auto& [r, ids] : by_rank) {
    const auto [from, to] = axis.TraceRange(r, t0, t1);
    ViewportQuery q;
    q.t0 = from;
    q.t1 = std::max(to, from + 1);
    q.width_px = width_px;
    q.lanes = std::move(ids);
    q.lane_base = static_cast<uint32_t>(r << kJobLaneBits);
    q.compact = compact;
    q.flat = flat;
    q.to_output = [&axis, r = r](int64_t ts) { return axis.ToAxis(r, ts); };
    axis.ranks[r].index->WriteSliceLanes(q, static_cast<uint32_t>(r), &names, w);
  }
  w->EndArray();
  w->Key("counters");
  w->BeginArray();
  w->EndArray();
  w->Key("memory");
  w->BeginArray();
  w->EndArray();
  names.Write(w);
  w->EndObject();
}

}  // namespace opscope::explorer
