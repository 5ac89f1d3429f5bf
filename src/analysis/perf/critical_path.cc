// The critical path of one step (HTA critical_path_analysis for one rank): the step's window, the
// dependency graph (critical_path_graph.cc), the longest weighted path through it
// (networkx.dag_longest_path, which HTA calls) and its breakdown by what bounds each edge (HTA
// bound_by). See perf_analysis.h.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analysis/device_activity.h"
#include "analysis/perf/critical_path_graph.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

using analysis::CpEdge;
using analysis::CpEdgeType;
using analysis::CpGraph;

bool OnHost(const Trace& trace, const Slice& s) {
  if (s.track >= trace.tracks().size()) return false;
  const Track& t = trace.tracks()[s.track];
  return t.kind == TrackKind::kThread &&
         !(t.process < trace.processes().size() && trace.processes()[t.process].is_device);
}

// The window of the instance-th host slice whose name contains `annotation` (by start time);
// the whole trace for an empty annotation or when the default "ProfilerStep" matches nothing.
bool ChooseWindow(const Trace& trace, const CriticalPathOptions& o, CriticalPath* cp) {
  const auto& slices = trace.slices();
  std::vector<uint32_t> steps;
  if (!o.annotation.empty()) {
    for (uint32_t i = 0; i < slices.size(); ++i) {
      if (OnHost(trace, slices[i]) &&
          trace.Str(slices[i].name).find(o.annotation) != std::string_view::npos) {
        steps.push_back(i);
      }
    }
  }
  if (steps.empty()) {
    if (!o.annotation.empty() && o.annotation != CriticalPathOptions().annotation) {
      cp->error = "no slice named like '" + o.annotation + "' to take the step from";
      return false;
    }
    cp->annotation = "";  // the whole trace
    cp->start_ns = INT64_MAX;
    cp->end_ns = INT64_MIN;
    for (const Slice& s : slices) {
      cp->start_ns = std::min(cp->start_ns, s.ts_ns);
      cp->end_ns = std::max(cp->end_ns, s.ts_ns + s.dur_ns);
    }
    if (slices.empty()) cp->start_ns = cp->end_ns = 0;
    return true;
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
  if (o.instance < 0 || static_cast<size_t>(o.instance) >= steps.size()) {
    cp->error = fmt::format("step instance {} asked, {} slices named like '{}'", o.instance,
                            steps.size(), o.annotation);
    return false;
  }
  const Slice& step = slices[steps[static_cast<size_t>(o.instance)]];
  cp->annotation = std::string(trace.Str(step.name));
  cp->start_ns = step.ts_ns;
  cp->end_ns = step.ts_ns + step.dur_ns;
  return true;
}

// networkx.dag_longest_path: nodes in topological generations (Kahn, starting from the nodes
// without predecessors in time order), each node's best predecessor the first one giving the
// longest distance, the path ending at the first node of greatest distance. Returns the path's
// edge indices, or nullopt when the graph has a cycle.
std::optional<std::vector<uint32_t>> LongestPath(const CpGraph& g, int64_t* length) {
  const auto n = static_cast<uint32_t>(g.nodes.size());
  // Edges by source and by destination, in insertion order (CSR).
  std::vector<uint32_t> out_begin(n + 1, 0), in_begin(n + 1, 0);
  for (const CpEdge& e : g.edges) {
    ++out_begin[e.from + 1];
    ++in_begin[e.to + 1];
  }
  for (uint32_t v = 0; v < n; ++v) {
    out_begin[v + 1] += out_begin[v];
    in_begin[v + 1] += in_begin[v];
  }
  std::vector<uint32_t> out(g.edges.size()), in(g.edges.size());
  {
    std::vector<uint32_t> o(out_begin.begin(), out_begin.end() - 1);
    std::vector<uint32_t> i(in_begin.begin(), in_begin.end() - 1);
    for (uint32_t e = 0; e < g.edges.size(); ++e) {
      out[o[g.edges[e].from]++] = e;
      in[i[g.edges[e].to]++] = e;
    }
  }
  std::vector<uint32_t> order(n);
  for (uint32_t v = 0; v < n; ++v) order[v] = v;
  // HTA numbers its nodes by time, then by event (in file order; by slice here).
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const analysis::CpNode& x = g.nodes[a];
    const analysis::CpNode& y = g.nodes[b];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    if (x.slice != y.slice) return x.slice < y.slice;
    return x.start && !y.start;
  });
  std::vector<uint32_t> indegree(n), topo;
  topo.reserve(n);
  for (uint32_t v : order) {
    indegree[v] = in_begin[v + 1] - in_begin[v];
    if (indegree[v] == 0) topo.push_back(v);
  }
  // Generations in turn: `topo` grows as nodes become free, in the order they do.
  for (size_t k = 0; k < topo.size(); ++k) {
    const uint32_t v = topo[k];
    for (uint32_t j = out_begin[v]; j < out_begin[v + 1]; ++j) {
      const uint32_t to = g.edges[out[j]].to;
      if (--indegree[to] == 0) topo.push_back(to);
    }
  }
  if (topo.size() != n) return std::nullopt;
  std::vector<int64_t> dist(n, 0);
  std::vector<int64_t> best(n, -1);  // best incoming edge
  for (uint32_t v : topo) {
    for (uint32_t j = in_begin[v]; j < in_begin[v + 1]; ++j) {
      const CpEdge& e = g.edges[in[j]];
      const int64_t d = dist[e.from] + e.weight_ns;
      if (best[v] < 0 || d > dist[v]) {
        dist[v] = d;
        best[v] = in[j];
      }
    }
    // A best predecessor at a negative distance (edges with small negative weights) starts the
    // path afresh at v, as networkx does.
    if (best[v] >= 0 && dist[v] < 0) {
      dist[v] = 0;
      best[v] = -1;
    }
  }
  std::vector<uint32_t> path;
  if (topo.empty()) return path;
  uint32_t end = topo.front();
  for (uint32_t v : topo) {
    if (dist[v] > dist[end]) end = v;
  }
  *length = dist[end];
  for (int64_t e = best[end]; e >= 0; e = best[g.edges[static_cast<size_t>(e)].from]) {
    path.push_back(static_cast<uint32_t>(e));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// HTA bound_by for a path edge.
std::string_view BoundBy(const Trace& trace, const CpGraph& g, const CpEdge& e) {
  switch (e.type) {
    case CpEdgeType::kKernelKernelDelay:
      return "gpu_kernel_kernel_overhead";
    case CpEdgeType::kLaunchDelay:
      return "gpu_kernel_launch_overhead";
    case CpEdgeType::kDependency:
    case CpEdgeType::kSync:
      return "";
    case CpEdgeType::kOperator:
      break;
  }
  const uint32_t ev = e.attributed != kNone ? e.attributed : g.nodes[e.from].slice;
  const Slice& s = trace.slices()[ev];
  if (OnHost(trace, s)) return "cpu_bound";
  if (analysis::IsCommunication(trace.Str(s.name))) return "gpu_communication_bound";
  return "gpu_compute_bound";
}

void Summarize(const Trace& trace, const CpGraph& g, const std::vector<uint32_t>& path,
               CriticalPath* cp) {
  const auto& slices = trace.slices();
  std::unordered_map<uint32_t, size_t> event_index;
  for (uint32_t ei : path) {
    const CpEdge& e = g.edges[ei];
    const analysis::CpNode& from = g.nodes[e.from];
    const analysis::CpNode& to = g.nodes[e.to];
    cp->path.push_back({from.slice, to.slice, from.start, to.start,
                        std::string(analysis::ToString(e.type)), e.weight_ns});
    const std::string_view bound = BoundBy(trace, g, e);
    if (bound == "gpu_kernel_kernel_overhead") cp->idle_ns += e.weight_ns;
    if (bound == "gpu_kernel_launch_overhead") cp->launch_overhead_ns += e.weight_ns;
    if (bound == "cpu_bound") cp->host_ops_ns += e.weight_ns;
    if (bound == "gpu_communication_bound") cp->communication_ns += e.weight_ns;
    if (bound == "gpu_compute_bound") cp->device_compute_ns += e.weight_ns;
    // Weight-0 edges (dependencies between top-level ops) name no time of an event.
    if (e.attributed == kNone || e.weight_ns == 0) continue;
    auto [it, fresh] = event_index.try_emplace(e.attributed, cp->events.size());
    if (fresh) {
      const Slice& s = slices[e.attributed];
      cp->events.push_back(
          {e.attributed, std::string(trace.Str(s.name)), std::string(bound), s.ts_ns, s.dur_ns, 0});
    }
    cp->events[it->second].on_path_ns += e.weight_ns;
  }
  std::stable_sort(cp->events.begin(), cp->events.end(),
                   [](const auto& a, const auto& b) { return a.on_path_ns > b.on_path_ns; });
}

}  // namespace

CriticalPath ComputeCriticalPath(const Trace& trace, const CriticalPathOptions& options) {
  CriticalPath cp;
  if (!ChooseWindow(trace, options, &cp)) return cp;
  analysis::CpGraphOptions go;
  go.start_ns = cp.start_ns;
  go.end_ns = cp.end_ns;
  go.zero_weight_launch_edges = options.zero_weight_launch_edges;
  const CpGraph g = analysis::BuildCriticalPathGraph(trace, go);
  cp.coverage.step_ns = cp.end_ns - cp.start_ns;
  analysis::NoteWhatTheTraceLacks(trace, g, &cp);
  cp.nodes = static_cast<int64_t>(g.nodes.size());
  cp.edges = static_cast<int64_t>(g.edges.size());
  cp.distinct_edges = cp.edges;  // the graph keeps one edge per pair of nodes
  if (g.nodes.empty()) {
    cp.error = "no host ops, runtime calls or device activity in the step";
    return cp;
  }
  int64_t length = 0;
  const auto path = LongestPath(g, &length);
  if (!path) {
    cp.error = "the dependency graph has a cycle (events out of order in the trace)";
    return cp;
  }
  cp.ok = true;
  cp.length_ns = length;
  Summarize(trace, g, *path, &cp);
  analysis::MeasureCoverage(trace, g, *path, &cp);
  return cp;
}

}  // namespace opscope
