// The Explorer's summary view: device busy/idle, top ops by device time, the gaps between device
// executions, and plain-language findings computed from the trace (e.g. how many device
// executions one call of an op takes and how much idle time fusing them would remove).
#ifndef OPSCOPE_EXPLORER_SUMMARY_H_
#define OPSCOPE_EXPLORER_SUMMARY_H_

#include <string>

#include "explorer/trace_index.h"
#include "trace/json_writer.h"

namespace opscope::explorer {

// {"timeline":{...},"top_ops":[...],"gaps":{...},"multi_execution_ops":[...],"findings":[...]}
void WriteSummary(const TraceIndex& index, JsonWriter* w);

// "12.345 us", "1.500 ms", "830 ns".
std::string FormatNs(double ns);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_SUMMARY_H_
