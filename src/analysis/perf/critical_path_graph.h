// HTA's critical-path dependency graph for one rank and one time window
// (hta/analyzers/critical_path_analysis.py, CPGraph). Internal to the analysis library.
//
// Every kept event (a host op or runtime call, a device kernel/memcpy/memset launched from the
// window) gets a start and an end node. Edges:
//   operator       within a host thread, following the call stack: parent start -> child start,
//                  child end -> next sibling start, last child end -> parent end (weight: the time
//                  between); a device event's start -> end (its duration);
//   dependency     one top-level host op's end -> the next one's start on the thread (weight 0);
//   launch delay   runtime call start -> kernel start, when the kernel was the only one queued on
//                  its stream and started after the previous one ended (weight: the delay);
//   kernel-kernel  previous event's end on the stream -> this one's start otherwise (the gap);
//   sync           device end -> a blocking host call's end (cudaDeviceSynchronize,
//                  cudaStreamSynchronize, cudaEventSynchronize) and device -> device across
//                  streams (cudaStreamWaitEvent), weight 0.
// Blocking calls' own spans weigh 0 (their time is waiting, which the sync edge accounts for).
#ifndef OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_
#define OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "opscope/trace.h"

namespace opscope::analysis {

enum class CpEdgeType : uint8_t { kOperator, kDependency, kLaunchDelay, kKernelKernelDelay, kSync };
// HTA's names: critical_path_operator, critical_path_dependency, ...
std::string_view ToString(CpEdgeType type);

struct CpNode {
  uint32_t slice = kNone;
  bool start = false;
  int64_t ts_ns = 0;
};

struct CpEdge {
  uint32_t from = 0, to = 0;  // node indices
  int64_t weight_ns = 0;
  CpEdgeType type = CpEdgeType::kOperator;
  // The event an operator or kernel-kernel edge's time belongs to (HTA _attribute_edge): the
  // event being entered, the one being left, or between siblings their parent; kNone otherwise.
  uint32_t attributed = kNone;
};

struct CpGraph {
  std::vector<CpNode> nodes;
  std::vector<CpEdge> edges;
  // Per slice: its start node (its end node is the next), kNone for slices without nodes.
  std::vector<uint32_t> start_node;
  int64_t negative_weights = 0;  // edges whose time ran backwards, weighed 0 (HTA does the same)
};

struct CpGraphOptions {
  int64_t start_ns = 0, end_ns = 0;  // the window
  // HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE: also a weight-0 launch edge for kernels that
  // got a kernel-kernel edge, so no kernel starts before its launch in simulations.
  bool zero_weight_launch_edges = false;
};

CpGraph BuildCriticalPathGraph(const Trace& trace, const CpGraphOptions& options);

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_
