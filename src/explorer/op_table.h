// The op table (key_averages rows of a whole trace or of a time range, computed as `opscope
// report` computes them) and the comparison of two traces (`opscope diff`'s own JSON).
#ifndef OPSCOPE_EXPLORER_OP_TABLE_H_
#define OPSCOPE_EXPLORER_OP_TABLE_H_

#include <cstdint>
#include <vector>

#include "base/json_writer.h"
#include "opscope/trace.h"

namespace opscope::explorer {

// The part of `trace` that overlaps [t0_ns, t1_ns): its slices (with their ids, links and
// shapes), processes and tracks; finalized. Used to aggregate a selection.
Trace SliceTimeRange(const Trace& trace, int64_t t0_ns, int64_t t1_ns);

// {"device":"NEURON","rows":[{"name","input_shapes","count","self_cpu_ns","cpu_total_ns",
//  "self_device_ns","device_total_ns", "search" (a regular expression finding the events of a row
//  that groups several names: ProfilerStep*)}...]} of the whole trace, or of the slices in `subset`
// (sorted slice indices, e.g. TraceIndex::SlicesOverlapping) when given.
void WriteOpTable(const Trace& trace, bool group_by_input_shape, JsonWriter* w,
                  const std::vector<uint32_t>* subset = nullptr);

// Exactly what `opscope diff --json A B` prints (TraceDiff::ToJson).
void WriteDiff(const Trace& a, const Trace& b, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_OP_TABLE_H_
