// Splitting a finalized trace's slices into ranges of whole tracks, for analyses that run their
// per-track passes on several threads (internal::ParallelFor) and merge the ranges in order.
#ifndef OPSCOPE_TRACE_TRACK_RANGES_H_
#define OPSCOPE_TRACE_TRACK_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "opscope/trace.h"

namespace opscope::internal {

// Ranges of a finalized trace's slices covering them in order, at most `parts`, each made of
// whole tracks (it starts at a track's first slice; a track is never split, so a long track makes
// a long range; slices without a track come last, in the last range).
std::vector<std::pair<uint32_t, uint32_t>> TrackRanges(const Trace& trace, size_t parts);

}  // namespace opscope::internal

#endif  // OPSCOPE_TRACE_TRACK_RANGES_H_
