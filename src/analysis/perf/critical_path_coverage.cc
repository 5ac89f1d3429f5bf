// The critical path's coverage of its step (CriticalPathCoverage in perf_analysis.h): where the
// path's weighted length falls short of the step and why. Every edge of the path spans the time
// between its nodes; an edge HTA weighs less than that (a dependency between top-level ops, a
// runtime-lock dependency, a blocking call's end, a sync edge) leaves the difference to its cause.
// Before the path's first node and after its last one, the time during which host threads with no
// link to the path were busy goes to threads_not_connected; the rest to before/after the path.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analysis/device_activity.h"
#include "analysis/perf/critical_path_graph.h"

namespace opscope::analysis {
namespace {

using Gap = CriticalPathCoverage::Gap;

// Union-find over the graph's nodes: which nodes an undirected walk from the path can reach.
class Components {
 public:
  explicit Components(const CpGraph& g) : parent_(g.nodes.size()) {
    std::iota(parent_.begin(), parent_.end(), 0);
    for (const CpEdge& e : g.edges) Join(e.from, e.to);
  }
  uint32_t Find(uint32_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }

 private:
  void Join(uint32_t a, uint32_t b) { parent_[Find(a)] = Find(b); }
  std::vector<uint32_t> parent_;
};

// Busy intervals, sorted and merged, of the host tracks none of whose nodes the path's component
// reaches; `*threads` counts those tracks.
std::vector<std::pair<int64_t, int64_t>> UnconnectedBusy(const Trace& trace, const CpGraph& g,
                                                         uint32_t path_node, int64_t* threads) {
  Components comp(g);
  const uint32_t root = comp.Find(path_node);
  std::vector<int8_t> connected(trace.tracks().size(), -1);  // -1: no nodes
  for (uint32_t v = 0; v < g.nodes.size(); v += 2) {
    const uint32_t track = trace.slices()[g.nodes[v].slice].track;
    if (track >= connected.size()) continue;
    if (connected[track] < 0) connected[track] = 0;
    if (comp.Find(v) == root) connected[track] = 1;
  }
  std::vector<std::pair<int64_t, int64_t>> busy;
  *threads = 0;
  for (uint32_t t : g.host_tracks) {
    if (connected[t] != 0) continue;
    ++*threads;
    for (uint32_t v = 0; v < g.nodes.size(); v += 2) {
      if (trace.slices()[g.nodes[v].slice].track == t) {
        busy.emplace_back(g.nodes[v].ts_ns, g.nodes[v + 1].ts_ns);
      }
    }
  }
  std::sort(busy.begin(), busy.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& b : busy) {
    if (!merged.empty() && b.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, b.second);
    } else {
      merged.push_back(b);
    }
  }
  return merged;
}

// Splits [from, to) into the parts covered by `busy` (as thread_not_connected gaps) and the rest
// (as `cause` gaps); returns the covered time.
int64_t SplitByBusy(int64_t from, int64_t to, const std::vector<std::pair<int64_t, int64_t>>& busy,
                    const char* cause, std::vector<Gap>* gaps) {
  int64_t covered = 0, at = from;
  for (const auto& [b0, b1] : busy) {
    const int64_t s = std::max(b0, from), e = std::min(b1, to);
    if (s >= e) continue;
    if (s > at) gaps->push_back({at, s, cause});
    gaps->push_back({s, e, "thread_not_connected"});
    covered += e - s;
    at = e;
  }
  if (to > at) gaps->push_back({at, to, cause});
  return covered;
}

}  // namespace

void NoteWhatTheTraceLacks(const Trace& trace, const CpGraph& g, CriticalPath* cp) {
  if (g.has_cuda_sync) return;
  bool device = false;
  for (const Slice& s : trace.slices()) {
    if (IsTimelineActivity(s.kind)) {
      device = true;
      break;
    }
  }
  if (!device) return;
  cp->coverage.notes.push_back(
      "the trace has no device synchronization events (cuda_sync): the host's waits for the "
      "device (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, "
      "cudaStreamWaitEvent) have no edge from the device, so the path cannot cross them and they "
      "count as sync waits or host gaps; PyTorch 2.1+ records them (pytorch/pytorch#105187)");
}

void MeasureCoverage(const Trace& trace, const CpGraph& g, const std::vector<uint32_t>& path,
                     CriticalPath* cp) {
  CriticalPathCoverage& c = cp->coverage;
  c.step_ns = cp->end_ns - cp->start_ns;
  c.path_ns = cp->length_ns;
  c.total_ns = c.step_ns;
  if (path.empty()) {
    c.before_path_ns = c.step_ns;
    if (c.step_ns > 0) c.gaps.push_back({cp->start_ns, cp->end_ns, "before_path"});
    return;
  }
  const int64_t first = g.nodes[g.edges[path.front()].from].ts_ns;
  const int64_t last = g.nodes[g.edges[path.back()].to].ts_ns;
  const int64_t span_start = std::min(cp->start_ns, first);
  const int64_t span_end = std::max(cp->end_ns, last);
  c.total_ns = span_end - span_start;
  c.outside_step_ns = c.total_ns - c.step_ns;
  std::vector<Gap> inner;
  for (uint32_t ei : path) {
    const CpEdge& e = g.edges[ei];
    const int64_t from = g.nodes[e.from].ts_ns, to = g.nodes[e.to].ts_ns;
    const int64_t rest = (to - from) - e.weight_ns;
    if (rest == 0) continue;
    int64_t* bucket = nullptr;
    const char* cause = "";
    switch (e.origin) {
      case CpEdgeOrigin::kTopLevel:
        bucket = &c.host_gaps_ns, cause = "host_gap";
        break;
      case CpEdgeOrigin::kRuntimeLock:
        bucket = &c.runtime_lock_ns, cause = "runtime_lock";
        break;
      case CpEdgeOrigin::kBlocking:
      case CpEdgeOrigin::kSync:
      case CpEdgeOrigin::kCausal:
        bucket = &c.sync_waits_ns, cause = "sync_wait";
        break;
      case CpEdgeOrigin::kTimed:
        break;
    }
    if (bucket == nullptr || rest < 0) {
      c.out_of_order_ns += rest;
      continue;
    }
    *bucket += rest;
    inner.push_back({to - rest, to, cause});
  }
  const auto busy = UnconnectedBusy(trace, g, g.edges[path.front()].from, &c.threads_not_connected);
  std::vector<Gap> before, after;
  c.threads_not_connected_ns += SplitByBusy(span_start, first, busy, "before_path", &before);
  c.threads_not_connected_ns += SplitByBusy(last, span_end, busy, "after_path", &after);
  for (const Gap& gap : before)
    c.before_path_ns += gap.cause == "before_path" ? gap.end_ns - gap.start_ns : 0;
  for (const Gap& gap : after)
    c.after_path_ns += gap.cause == "after_path" ? gap.end_ns - gap.start_ns : 0;
  c.gaps = std::move(before);
  c.gaps.insert(c.gaps.end(), inner.begin(), inner.end());
  c.gaps.insert(c.gaps.end(), after.begin(), after.end());
}

}  // namespace opscope::analysis
