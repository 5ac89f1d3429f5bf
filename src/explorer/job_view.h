// The Explorer's view of a distributed job: every rank's trace on one aligned time axis, the
// collectives matched across ranks (each member's kernel in its rank's lanes), the stragglers and
// a ranks x steps table, as the JSON of /api/job that ui/job.js draws.
#ifndef OPSCOPE_EXPLORER_JOB_VIEW_H_
#define OPSCOPE_EXPLORER_JOB_VIEW_H_

#include <cstddef>
#include <vector>

#include "explorer/trace_index.h"
#include "opscope/job.h"
#include "trace/json_writer.h"

namespace opscope::explorer {

// One rank of the job and the trace the Explorer serves for it.
struct JobRankTrace {
  int rank = -1;
  size_t trace = 0;                   // the trace's index in the Explorer (/api/trace/N/...)
  const TraceIndex* index = nullptr;  // that trace's index; outlives the call
};

// Writes the job's view. The axis is the reference rank's clock (RankRow::ToReference), in ns
// from `origin_ns` (the earliest aligned trace start over the ranks, written as a decimal string:
// an epoch time does not fit a double), so every axis time is an exact integer in the browser.
// Each rank gets a linear map from its trace's API times (the `ts` of /api/trace/N/viewport, ns
// since that trace's start: start_ns is 0):
//   axis_ns = axis_at_start_ns + scale x (ts - start_ns)
// so the UI asks each rank's viewport for its own time range and draws it on the common axis.
//
// {"world_size","clocks_aligned","reference_rank","partial","origin_ns","t1",
//  "findings":[...],"warnings":[...],
//  "ranks":[{"rank","trace","file","start_ns","axis_at_start_ns","scale","clock_offset_us",
//            "clock_drift_ppm","busy_us","computation_us","exposed_communication_us","overlap_pct",
//            "lanes":[{"id","group","title","rows"}]}],
//  "collectives":[{"group","seq","name","bytes","skew_ns","transfer_ns","busbw_gbps",
//                  "last_rank","members":[[rank,slice,lane,row,start,end,wait],...]}],
//  "stragglers":[{"rank","times_last","wait_caused_us","worst_group","worst_seq",
//                 "worst_wait_us"}],
//  "steps":{"numbers":[...],"ranks":[{"rank","start":[...],"dur":[...],"wait":[...]}]}}
// Member and step times are axis ns (null where a rank has no such step); `wait` is the rank's
// sync wait in each step in ns (JobReport::step_wait); `slice` is -1 when the kernel is not in
// the served trace.
void WriteJobView(const JobReport& report, const std::vector<JobRankTrace>& ranks, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_JOB_VIEW_H_
