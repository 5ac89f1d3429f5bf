// Collectives matched across ranks, clocks aligned, and the tables built from the instances.
#ifndef OPSCOPE_SRC_JOB_COLLECTIVE_MATCH_H_
#define OPSCOPE_SRC_JOB_COLLECTIVE_MATCH_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "job/clock_alignment.h"
#include "opscope/job.h"

namespace opscope::job {

// One collective instance before its figures: each present rank's record, ascending rank.
using InstanceKey = std::pair<std::string, int64_t>;  // (group, seq)
using Matched = std::map<InstanceKey, std::vector<std::pair<int, const CollectiveRecord*>>>;

// Groups every rank's records by (group, seq). `ranks` must outlive the result.
Matched MatchCollectives(const std::vector<const RankSummary*>& ranks);

// One clock fit per entry of `ranks` (same order), against `reference` (an index into `ranks`),
// from the end times of the instances both ranks took part in. Identity fits when !align.
std::vector<ClockFit> FitClocks(const std::vector<const RankSummary*>& ranks, size_t reference,
                                const Matched& matched, bool align);

// Skew, waits, transfer time and bandwidths of every instance, on aligned clocks. `fit_of_rank`
// maps a rank to its fit.
std::vector<CollectiveInstance> ComputeInstances(const Matched& matched,
                                                 const std::map<int, const ClockFit*>& fit_of_rank);

// Per (name, bytes): count, skew statistics, mean transfer time, mean bus bandwidth; sorted by
// total transfer time, descending.
std::vector<CollectiveSummaryRow> SummarizeCollectives(
    const std::vector<CollectiveInstance>& instances);

// Per rank: times it arrived last and the wait it caused, with its computation before those
// collectives against the median rank's; sorted by wait caused, descending.
std::vector<StragglerRow> FindStragglers(const std::vector<CollectiveInstance>& instances,
                                         const Matched& matched,
                                         const std::vector<const RankSummary*>& ranks,
                                         int64_t steps);

double MedianOf(std::vector<double> values);

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_COLLECTIVE_MATCH_H_
