// HTA's critical-path dependency graph for one rank and one time window
// (hta/analyzers/critical_path_analysis.py, CPGraph). Internal to the analysis library.
//
// Every kept event (a host op or runtime call, a device kernel/memcpy/memset/sync with a
// correlation, launched from the window) gets a start and an end node. Edges, in HTA's order of
// construction (docs/perf-model.md gives each rule with its source):
//   runtime lock   cudaHostAlloc, cudaLaunchKernel and cudaMemcpyAsync share the CUDA runtime's
//                  lock: in time order over every thread, an end node closes the calls open since
//                  the last end (its own start -> end at full duration; any other call's start ->
//                  this end, weight 0) and follows the previous end (weight 0);
//   operator       within a host thread, following the call stack: parent start -> child start,
//                  child end -> next sibling start, last child end -> parent end (weight: the time
//                  between); none between two runtime-lock calls' nodes, which the lock edges
//                  join; a device event's start -> end (its duration);
//   dependency     one top-level host op's end -> the next one's start on the thread (weight 0);
//                  the backward thread joins the forward thread's call stack (one thread each
//                  with ops named like "forward" and "autograd");
//   launch delay   runtime call start -> kernel start, when the kernel was the only one queued on
//                  its stream and started after the previous one ended (weight: the delay);
//   kernel-kernel  previous event's end on the stream -> this one's start otherwise, when it
//                  started less than 1.5 ms after it (the gap);
//   sync           device end -> a blocking host call's end (cudaDeviceSynchronize,
//                  cudaStreamSynchronize, cudaEventSynchronize) and device -> device across
//                  streams (cudaStreamWaitEvent), weight 0.
// A host call on HTA's blocking list (CUDA names only) weighs 0 from its last child's end to its
// own end. As in networkx's DiGraph, a pair of nodes has one edge: a later one replaces it.
#ifndef OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_
#define OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "opscope/perf_analysis.h"
#include "opscope/trace.h"

namespace opscope::analysis {

enum class CpEdgeType : uint8_t { kOperator, kDependency, kLaunchDelay, kKernelKernelDelay, kSync };
// HTA's names: critical_path_operator, critical_path_dependency, ...
std::string_view ToString(CpEdgeType type);

// Why an edge weighs less than the time between its nodes (the critical path's coverage).
enum class CpEdgeOrigin : uint8_t {
  kTimed,        // weighs the time between its nodes
  kTopLevel,     // dependency between consecutive top-level ops of a thread
  kRuntimeLock,  // dependency through the CUDA runtime's lock
  kBlocking,     // the end of a blocking call (its wait), weighed 0
  kSync,         // device -> host or device -> device synchronization
  kCausal,       // a weight-0 launch edge kept for causality (zero_weight_launch_edges)
};

struct CpNode {
  uint32_t slice = kNone;
  bool start = false;
  int64_t ts_ns = 0;
};

struct CpEdge {
  uint32_t from = 0, to = 0;  // node indices
  int64_t weight_ns = 0;
  CpEdgeType type = CpEdgeType::kOperator;
  CpEdgeOrigin origin = CpEdgeOrigin::kTimed;
  // The event an operator or kernel-kernel edge's time belongs to (HTA _attribute_edge): the
  // event being entered, the one being left, or between siblings their parent; kNone otherwise.
  uint32_t attributed = kNone;
};

struct CpGraph {
  std::vector<CpNode> nodes;
  std::vector<CpEdge> edges;
  // Per slice: its start node (its end node is the next), kNone for slices without nodes.
  std::vector<uint32_t> start_node;
  // Host tracks whose call stacks were walked (the backward thread's is walked with the forward
  // thread's and not listed).
  std::vector<uint32_t> host_tracks;
  // HTA clips weights: an edge whose time ran backwards by 1 us or more weighs 0 (counted here);
  // a smaller negative weight (clock rounding) stays, as in HTA.
  int64_t negative_weights = 0;
  bool has_cuda_sync = false;  // the trace records device synchronization events (cuda_sync)
};

struct CpGraphOptions {
  int64_t start_ns = 0, end_ns = 0;  // the window
  // HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE: also a weight-0 launch edge for kernels that
  // got a kernel-kernel edge, so no kernel starts before its launch in simulations.
  bool zero_weight_launch_edges = false;
};

CpGraph BuildCriticalPathGraph(const Trace& trace, const CpGraphOptions& options);

// critical_path_coverage.cc: fills cp->coverage from the path (edge indices into g, in order);
// cp's window and length must be set.
void MeasureCoverage(const Trace& trace, const CpGraph& g, const std::vector<uint32_t>& path,
                     CriticalPath* cp);
// Adds to cp->coverage.notes what the trace lacks for the analysis (cuda_sync events).
void NoteWhatTheTraceLacks(const Trace& trace, const CpGraph& g, CriticalPath* cp);

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_GRAPH_H_
