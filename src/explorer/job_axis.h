// JobAxis: the job page's one time axis over every rank's trace (the reference rank's clock after
// clock alignment, in ns from the job's origin), and the viewport of several ranks' lanes on it
// (/api/job/viewport). Each rank's times are mapped exactly as /api/job maps its collectives
// (RankRow::ToReference, integer ns), so a collective's outline lands on its kernel's bar at any
// zoom, and the page gets every rank in one answer instead of one request per rank.
//
// Thread safety: immutable once made; the indexes it points to are published and outlive it.
#ifndef OPSCOPE_EXPLORER_JOB_AXIS_H_
#define OPSCOPE_EXPLORER_JOB_AXIS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/json_writer.h"
#include "explorer/trace_index.h"
#include "opscope/job.h"

namespace opscope::explorer {

// One rank of the job and the trace the Explorer serves for it.
struct JobRankTrace {
  int rank = -1;
  size_t trace = 0;                   // the trace's index in the Explorer (/api/trace/N/...)
  const TraceIndex* index = nullptr;  // that trace's index; outlives the call
};

// The job viewport's lane ids: a rank's position in JobAxis::ranks times 2^20, plus the lane's id
// in its trace (a trace has at most 100,000 lanes).
inline constexpr int kJobLaneBits = 20;

struct JobAxis {
  struct Rank {
    RankRow row;                        // its clock fit
    size_t trace = 0;                   // its trace's index in the Explorer
    const TraceIndex* index = nullptr;  // published; outlives the axis
    int64_t base_ns = 0;                // the trace's base time: its epoch ns = base_ns + ts
  };
  std::vector<Rank> ranks;  // ranks with a row, a summary and a served trace, ascending
  int64_t origin_ns = 0;    // axis 0 on the reference clock: the earliest aligned trace start
  int64_t end_ns = 1;       // the latest aligned trace end, on the axis (at least 1)

  // A trace time of rank `r` (its position in `ranks`) on the axis.
  int64_t ToAxis(size_t r, int64_t ts_ns) const;
  // The trace times of rank `r` that axis times [a0, a1] cover (rounding allowed for).
  std::pair<int64_t, int64_t> TraceRange(size_t r, int64_t a0, int64_t a1) const;
};

// The axis of `report`'s ranks that have a row, an unfailed summary and a served trace.
JobAxis MakeJobAxis(const JobReport& report, const std::vector<JobRankTrace>& ranks);

// The viewport of `lanes` (job lane ids, kJobLaneBits) over axis times [t0, t1], `width_px`
// wide: {"t0","t1","ns_per_px","lanes":[{"lane","items":[...]}],"counters":[],"memory":[],
// "strings":[...]} as TraceIndex::WriteViewport writes it, with item times and durations on the
// axis and lane ids the job's; `compact`: items as [ts,dur,row,name,id,count] only
// (ViewportQuery::compact); `flat`: each lane's items in one array (ViewportQuery::flat). Lane
// ids naming no rank or lane are skipped.
void WriteJobViewport(const JobAxis& axis, int64_t t0, int64_t t1, int width_px,
                      const std::vector<uint32_t>& lanes, bool compact, bool flat, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_JOB_AXIS_H_
