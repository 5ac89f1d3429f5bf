// The device trace of one execution: which engine / DMA lanes to draw over which time range, and
// the legend mapping each External id (the colour key) to the framework op that issued it.
#ifndef OPSCOPE_EXPLORER_DEVICE_VIEW_H_
#define OPSCOPE_EXPLORER_DEVICE_VIEW_H_

#include <cstdint>

#include "explorer/trace_index.h"
#include "trace/json_writer.h"

namespace opscope::explorer {

// `slice` is a device execution, or any event whose chain reaches one (the first is used).
// {"execution":{ref}|null,"t0","t1","lanes":[ids],"ops":[{"ext","name","count"}]}
void WriteDeviceView(const TraceIndex& index, uint32_t slice, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_DEVICE_VIEW_H_
