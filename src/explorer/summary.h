// GET /api/trace/N/summary: the `opscope report --json` figures of a trace (computed by the
// report's own code, so the Explorer and the CLI always agree), the device idle gaps, host calls
// that take several device executions, a repeated op sequence, and plain-language findings that
// cite only those figures.
#ifndef OPSCOPE_EXPLORER_SUMMARY_H_
#define OPSCOPE_EXPLORER_SUMMARY_H_

#include <string>

#include "base/json_writer.h"
#include "explorer/trace_index.h"

namespace opscope::explorer {

// {"figures": <exactly `opscope report --json`>, "gaps":{"count","total_ns","max_ns","mean_ns",
//  "largest":[{"ts","dur","before":{ref},"after":{ref}}]}, "fusion_candidates":[{"name","calls",
//  "executions","busy_ns","idle_ns"}], "repetition":{"names","repeats","executions","busy_ns",
//  "idle_ns"}|null, "findings":["..."]}. Times in ns. Costs one report of the trace. `file` is
// the trace's source file, the report's "file".
void WriteSummary(const TraceIndex& index, JsonWriter* w, const std::string& file = "");

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_SUMMARY_H_
