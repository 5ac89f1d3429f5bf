// The Device tab's view of a selection. Two modes, by what the trace records:
//   - "engines" (Neuron DEVICE mode): one execution's engine and DMA queue lanes over its time,
//     each lane's utilisation, the launch before the first instruction and the
//     completion after the last, and the legend mapping each External id (the colour key) to the
//     framework op that issued the instructions;
//   - "streams" (CUDA, ROCm, MTIA, ...: no instruction lanes): the kernels of the selection on the
//     streams of their device, over the span from the first to the last, with each stream's
//     utilisation in that span.
#ifndef OPSCOPE_EXPLORER_DEVICE_VIEW_H_
#define OPSCOPE_EXPLORER_DEVICE_VIEW_H_

#include <cstdint>

#include "base/json_writer.h"
#include "explorer/trace_index.h"

namespace opscope::explorer {

// `slice` is a device execution, or any event whose chain reaches one. Writes
// {"mode":"engines"|"streams"|"none","execution":{ref}|null,"executions":N,"t0","t1",
//  "lanes":[ids],"utilization":[{"lane","busy_ns","events"}],"launch":{t0,t1}|null,
//  "completion":{t0,t1}|null,"phases":[{"name","dur"}],"ops":[{"ext","name","count"}] (engines
//  only)}; times in ns.
void WriteDeviceView(const TraceIndex& index, uint32_t slice, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_DEVICE_VIEW_H_
