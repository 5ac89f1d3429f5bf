// What the Explorer's Summary says about a trace in plain language, built on the `opscope report`
// figures (computed by the report's own code, so the two never disagree) and on two structures
// the report does not look for: host op calls that each take several device executions, and a
// sequence of top-level ops repeated back to back (an un-annotated layer called in a loop).
#ifndef OPSCOPE_EXPLORER_FINDINGS_H_
#define OPSCOPE_EXPLORER_FINDINGS_H_

#include <string>
#include <vector>

#include "explorer/trace_index.h"
#include "opscope/analysis.h"

namespace opscope::explorer {

// Host op calls (cpu_op or user_annotation, by name) that take several device executions each:
// fusing each call into one execution would remove the device idle time between them. Times ns.
struct FusionCandidate {
  std::string name;
  int64_t calls = 0;       // instances that launched timeline activity
  int64_t executions = 0;  // timeline activities launched in them; each counted once per name
  int64_t busy_ns = 0;     // sum over calls of the union of their activities
  int64_t idle_ns = 0;     // sum over calls of (last end - first start - busy)
  // Ops nested in these calls that do exactly the same work (aten::conv2d -> aten::convolution
  // -> aten::_convolution): one finding, named by the outermost.
  std::vector<std::string> nested;
};

// Names whose calls take 2 to 64 executions each, most idle time first. An activity counts for
// a name once, in the outermost call of that name around it (a module's nested calls of itself
// do not count it again), so a name's executions never exceed the trace's activities. Names
// with identical figures are the same calls seen through wrappers: the outermost is listed, the
// others in its `nested`.
std::vector<FusionCandidate> FindFusionCandidates(const Trace& trace,
                                                  const std::vector<AttributedActivity>& acts);

// Top-level ops (cpu_op / user_annotation not inside another; step annotations such as
// "ProfilerStep#3" are containers, never elements) that launched timeline activity, in time
// order; `repeats` consecutive exact copies of `names`.
struct Repetition {
  std::vector<std::string> names;  // one period; empty when nothing repeats
  int64_t repeats = 0;
  int64_t executions = 0, busy_ns = 0, idle_ns = 0;  // totals over the copies
};

// The period (2..64 ops with at least two distinct names) whose run of consecutive copies
// covers the most ops, with at least 3 copies; shorter periods win ties.
Repetition FindRepetition(const Trace& trace, const std::vector<AttributedActivity>& acts);

// The findings, in order of importance; every figure they cite is a field of `report`, `gaps`,
// `fusion` or `repetition` (or, for the DMA share, of the index's engine lanes).
std::vector<std::string> Findings(const TraceIndex& index, const Report& report,
                                  const IdleGaps& gaps, const std::vector<FusionCandidate>& fusion,
                                  const Repetition& repetition);

// "12.345 us", "1.500 ms", "830 ns".
std::string FormatNs(double ns);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_FINDINGS_H_
