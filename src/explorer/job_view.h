// The Explorer's view of a distributed job: every rank's trace on one aligned time axis, the
// collectives matched across ranks (each member's kernel in its rank's lanes), the stragglers and
// a ranks x steps table, as the JSON of /api/job that ui/job.js draws.
#ifndef OPSCOPE_EXPLORER_JOB_VIEW_H_
#define OPSCOPE_EXPLORER_JOB_VIEW_H_

#include "explorer/job_axis.h"
#include "opscope/job.h"

namespace opscope::explorer {

// Writes the job's view of `axis`'s ranks. The axis is the reference rank's clock
// (RankRow::ToReference), in ns from `origin_ns` (the earliest aligned trace start over the
// ranks, written as a decimal string: an epoch time does not fit a double), so every axis time is
// an exact integer in the browser. The page draws the ranks' lanes from /api/job/viewport (on
// the axis already); each rank also gets its map from its trace's API times (the `ts` of
// /api/trace/N/..., ns since that trace's start: start_ns is 0), for links into its trace:
//   axis_ns ~= axis_at_start_ns + scale x (ts - start_ns)
//
// {"world_size","clocks_aligned","reference_rank","partial","origin_ns","t1",
//  "findings":[...],"warnings":[...],"kinds":[...] (the kind codes of viewport items),
//  "ranks":[{"rank","trace","file","start_ns","axis_at_start_ns","scale","clock_offset_us",
//            "clock_drift_ppm","busy_us","computation_us","exposed_communication_us","overlap_pct",
//            "lanes":[{"id","group","role","title","rows","events"}]}],
//  "collectives":[{"group","seq","name","bytes","skew_ns","transfer_ns","busbw_gbps",
//                  "last_rank","members":[[rank,slice,lane,row,start,end,wait],...]}],
//  "collective_summary":[{"name","bytes","count","mean_skew_ns","median_skew_ns","max_skew_ns",
//                         "mean_transfer_ns","busbw_gbps"}] (as `opscope report` prints it),
//  "stragglers":[{"rank","times_last","wait_caused_us","worst_group","worst_seq",
//                 "worst_wait_us"}],
//  "steps":{"numbers":[...],"ranks":[{"rank","start":[...],"dur":[...],"wait":[...]}]}}
// Member and step times are axis ns (null where a rank has no such step); `wait` is the rank's
// sync wait in each step in ns (JobReport::step_wait); `slice` is -1 when the kernel is not in
// the served trace; `start` and `end` are its kernel's, mapped as the job viewport maps the
// kernel's bar.
// `compact` (/api/job?compact=1, what the job page asks for): each collective's "members" as
// "first_ns" (its first arrival) and "m", one array of 7 numbers a member: rank, slice, lane, row,
// start - first_ns, end - start, wait; about a third fewer bytes and no array per member.
void WriteJobView(const JobReport& report, const JobAxis& axis, JsonWriter* w,
                  bool compact = false);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_JOB_VIEW_H_
