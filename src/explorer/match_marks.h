// Where the events matching a search lie in one viewport, merged to about one mark per pixel and
// row, so the timeline can highlight every match (not only the first page of search results).
#ifndef OPSCOPE_EXPLORER_MATCH_MARKS_H_
#define OPSCOPE_EXPLORER_MATCH_MARKS_H_

#include <vector>

#include "base/json_writer.h"
#include "explorer/trace_index.h"

namespace opscope::explorer {

// `filter` says which slices match (names and kinds). Writes
// {"t0","t1","matches":N,"lanes":[{"lane","items":[[ts,dur,row,count],...]}]}: for each drawn
// lane with a match in [q.t0, q.t1), marks in time order per row; matches closer than a pixel
// merge into one mark whose count says how many it holds. `matches` counts the matches in range.
// Cost: one pass over the events in range of the queried lanes, no allocation per event.
void WriteMatchMarks(const TraceIndex& index, const SliceFilter& filter, const ViewportQuery& q,
                     JsonWriter* w);
// The same for the slices set in `slices` (a bitmap over slice indices), e.g. a critical path's.
void WriteSliceMarks(const TraceIndex& index, const std::vector<bool>& slices,
                     const ViewportQuery& q, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_MATCH_MARKS_H_
