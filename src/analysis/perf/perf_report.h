// The `opscope report --perf` sections: the performance model with its roofline, the idle-time
// breakdown and the critical path, as text tables and as the report's JSON keys (perf_model,
// ops_by_category, ops_unique_args, short_kernels, device_spec, idle_breakdown, critical_path).
// Internal to the analysis library; report.cc calls these.
#ifndef OPSCOPE_ANALYSIS_PERF_PERF_REPORT_H_
#define OPSCOPE_ANALYSIS_PERF_PERF_REPORT_H_

#include <string>

#include "base/json_writer.h"
#include "opscope/analysis.h"
#include "opscope/perf_analysis.h"

namespace opscope::analysis {

// Appends the text sections. Never throws: an unusable device spec leaves the roofline out and
// is named in the section (ValidateReportOptions rejects it up front).
void AppendPerfSections(const Trace& trace, const ReportOptions& options, std::string* out);
// Writes the JSON keys into the open report object (an unusable device spec: "device_spec_error").
void WritePerfJson(const Trace& trace, const ReportOptions& options, JsonWriter* w);

// Pieces, for the Explorer and tests.
void WritePerfModelJson(const PerfModel& pm, int rows, JsonWriter* w);  // keys, open object
void AppendIdleBreakdown(const IdleBreakdown& idle, std::string* out);
void AppendCriticalPath(const CriticalPath& cp, int rows, std::string* out);
void WriteIdleBreakdownJson(const IdleBreakdown& idle, JsonWriter* w);  // one array

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_PERF_REPORT_H_
