// HTA's critical-path graph (see critical_path_graph.h), host side: the window and its nodes
// (CPGraph._create_event_nodes), the CUDA runtime's lock
// (_construct_graph_from_cuda_runtime_events) and the call stacks of the host threads
// (_construct_graph_from_call_stacks, over HTA's CallStackGraph). critical_path_device.cc adds the
// device edges.
#include "analysis/perf/critical_path_graph.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "analysis/device_activity.h"
#include "analysis/perf/critical_path_builder.h"

namespace opscope::analysis {
namespace {

// HTA's BLOCKING_SYNC_CALLS: the span from the call's last child to its end weighs 0 (the wait
// is carried by a sync edge, if the trace has one). HTA lists the CUDA names only; opscope adds
// its own Neuron runtime's wait (nrta_is_completed, recorded with a Context Sync event).
bool IsBlocking(std::string_view name) {
  constexpr std::string_view kBlocking[] = {"cudaDeviceSynchronize",
                                            "cudaStreamSynchronize",
                                            "cudaEventQuery",
                                            "cudaEventSynchronize",
                                            "cudaMemcpy",
                                            "cudaMemcpyAsync",
                                            "nrta_is_completed"};
  return std::find(std::begin(kBlocking), std::end(kBlocking), name) != std::end(kBlocking);
}

// HTA's CUDA_RUNTIME_EVENTS: calls that take the CUDA runtime's lock.
bool TakesRuntimeLock(std::string_view name) {
  return name == "cudaHostAlloc" || name == "cudaLaunchKernel" || name == "cudaMemcpyAsync";
}

}  // namespace

CpBuilder::CpBuilder(const Trace& trace, const CpGraphOptions& options)
    : trace_(trace),
      slices_(trace.slices()),
      o_(options),
      kept_(slices_.size(), 0),
      lock_(slices_.size(), 0) {}

CpGraph CpBuilder::Run() {
  g_.start_node.assign(slices_.size(), kNone);
  Clip();
  RuntimeLock();
  for (const std::vector<uint32_t>& thread : HostThreads()) WalkThread(thread);
  Device();
  return std::move(g_);
}

// Device tracks: streams, and any track of a device process (Kineto puts Context Sync on tid
// -1 of the GPU).
bool CpBuilder::DeviceTrack(uint32_t track) const {
  if (track >= trace_.tracks().size()) return false;
  const Track& t = trace_.tracks()[track];
  return t.kind != TrackKind::kThread ||
         (t.process < trace_.processes().size() && trace_.processes()[t.process].is_device);
}

void CpBuilder::IndexRuntimes() {
  indexed_ = true;
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    const Slice& s = slices_[i];
    if ((s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) &&
        s.correlation != 0) {
      runtime_by_corr_.emplace(s.correlation, i);
    }
  }
}

// The runtime call that launched (or waits for) a device event, or kNone.
uint32_t CpBuilder::RuntimeOf(uint32_t i) {
  const uint32_t rt = trace_.Link(i).runtime;
  if (rt != kNone) return rt;
  if (!indexed_) IndexRuntimes();
  auto it = runtime_by_corr_.find(slices_[i].correlation);
  return slices_[i].correlation != 0 && it != runtime_by_corr_.end() ? it->second : kNone;
}

// HTA's clipping: host events starting in the window with a duration; device events whose
// runtime call does (and cudaStreamWaitEvent's sync events). Nodes for host ops and runtime
// calls, and for device kernels, memcpys, memsets and syncs with a correlation.
void CpBuilder::Clip() {
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    const Slice& s = slices_[i];
    if (!OnDevice(s)) {
      if (s.track >= trace_.tracks().size() || !InWindow(s.ts_ns) || s.dur_ns <= 0) continue;
      if (HostOpWithStream(i)) continue;
      kept_[i] = 1;
      if (s.kind == ActivityKind::kCpuOp || s.kind == ActivityKind::kRuntime ||
          s.kind == ActivityKind::kDriver) {
        AddNodes(i);
        lock_[i] = s.kind == ActivityKind::kRuntime && TakesRuntimeLock(trace_.Str(s.name));
      }
      continue;
    }
    const bool sync = s.kind == ActivityKind::kSync;
    g_.has_cuda_sync |= sync;
    if (!sync && !IsTimelineActivity(s.kind)) continue;
    const uint32_t rt = RuntimeOf(i);
    const bool launched = rt != kNone && InWindow(slices_[rt].ts_ns) && slices_[rt].dur_ns > 0;
    if (!launched && !(sync && trace_.Str(s.name) == "Stream Wait Event")) continue;
    kept_[i] = 1;
    device_.push_back(i);
    if (s.correlation != 0) AddNodes(i);
  }
}

// Inductor's triton ops (cpu_ops named triton_*) record the stream they launch on: HTA takes an
// event with a stream for a device event, and leaves these out of the host's call stacks.
bool CpBuilder::HostOpWithStream(uint32_t i) const {
  const Slice& s = slices_[i];
  if (s.kind != ActivityKind::kCpuOp || !trace_.Str(s.name).starts_with("triton")) return false;
  const auto stream = trace_.FindArg(s.args, "stream");
  return stream && *stream != "-1";
}

void CpBuilder::AddNodes(uint32_t slice) {
  const Slice& s = slices_[slice];
  g_.start_node[slice] = static_cast<uint32_t>(g_.nodes.size());
  queue_.emplace_back(-1, -1);
  g_.nodes.push_back({slice, true, s.ts_ns});
  g_.nodes.push_back({slice, false, s.ts_ns + s.dur_ns});
}

std::optional<uint32_t> CpBuilder::Start(uint32_t slice) const {
  if (slice >= g_.start_node.size() || g_.start_node[slice] == kNone) return std::nullopt;
  return g_.start_node[slice];
}

// Returns the edge's index, or -1 when src == dst. `zero_by` names why an edge weighs 0 (its
// origin); dependency and sync edges always do. A pair of nodes keeps one edge, the latest.
int64_t CpBuilder::AddEdge(uint32_t src, uint32_t dst, CpEdgeType type, CpEdgeOrigin zero_by) {
  if (src == dst) return -1;
  CpEdgeOrigin origin = zero_by;
  if (type == CpEdgeType::kSync) origin = CpEdgeOrigin::kSync;
  int64_t w = 0;
  if (origin == CpEdgeOrigin::kTimed) {
    w = g_.nodes[dst].ts_ns - g_.nodes[src].ts_ns;
    if (w <= -1000) {  // HTA's _validate_graph: -1 us or less is an ordering error, weighed 0
      ++g_.negative_weights;
      w = 0;
    }
  }
  const uint64_t key = (static_cast<uint64_t>(src) << 32) | dst;
  auto [it, fresh] = edge_of_pair_.try_emplace(key, static_cast<uint32_t>(g_.edges.size()));
  if (fresh) {
    g_.edges.push_back({src, dst, w, type, origin, kNone});
  } else {
    CpEdge& e = g_.edges[it->second];
    e.weight_ns = w;
    e.type = type;
    e.origin = origin;
  }
  return it->second;
}

// HTA _attribute_edge: entering -> the source's event, leaving -> the destination's, between
// siblings (end -> start) -> their parent.
void CpBuilder::Attribute(int64_t edge, uint32_t src_parent) {
  if (edge < 0) return;
  CpEdge& e = g_.edges[static_cast<size_t>(edge)];
  const CpNode& src = g_.nodes[e.from];
  const CpNode& dst = g_.nodes[e.to];
  if (e.type == CpEdgeType::kKernelKernelDelay || src.start) {
    e.attributed = src.slice;
  } else if (!dst.start) {
    e.attributed = dst.slice;
  } else {
    e.attributed = src_parent;
  }
}

bool CpBuilder::LockCall(uint32_t slice) const { return slice < lock_.size() && lock_[slice]; }

// HTA _shares_cuda_runtime_lock: two lock calls' nodes, unless an end followed by a start.
bool CpBuilder::SharesLock(uint32_t last_node, uint32_t node) const {
  const CpNode& a = g_.nodes[last_node];
  const CpNode& b = g_.nodes[node];
  return LockCall(a.slice) && LockCall(b.slice) && (a.start || !b.start);
}

// The lock calls' nodes in time order (ties by slice, a start before its end). An end node takes
// the lock from every call opened since the last end: its own start -> end weighs the call's
// duration, another call's start -> this end weighs 0; and it follows the previous end.
void CpBuilder::RuntimeLock() {
  std::vector<uint32_t> nodes;
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    if (!lock_[i]) continue;
    nodes.push_back(g_.start_node[i]);
    nodes.push_back(g_.start_node[i] + 1);
  }
  std::sort(nodes.begin(), nodes.end(), [&](uint32_t a, uint32_t b) {
    const CpNode& x = g_.nodes[a];
    const CpNode& y = g_.nodes[b];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    if (x.slice != y.slice) return x.slice < y.slice;
    return x.start && !y.start;
  });
  std::vector<uint32_t> open;
  int64_t last = -1;
  for (uint32_t n : nodes) {
    if (g_.nodes[n].start) {
      open.push_back(n);
    } else {
      for (; !open.empty(); open.pop_back()) {
        const uint32_t s = open.back();
        if (g_.nodes[s].slice == g_.nodes[n].slice) {
          Attribute(AddEdge(s, n, CpEdgeType::kOperator), kNone);
        } else {
          AddEdge(s, n, CpEdgeType::kDependency, CpEdgeOrigin::kRuntimeLock);
        }
      }
      if (last >= 0 && !g_.nodes[static_cast<size_t>(last)].start) {
        AddEdge(static_cast<uint32_t>(last), n, CpEdgeType::kDependency,
                CpEdgeOrigin::kRuntimeLock);
      }
    }
    last = n;
  }
}

// The kept host events per call stack: one per (pid, tid), the backward thread's merged into the
// forward thread's when each is the only thread with ops or annotations named like "autograd" and
// "forward" (HTA _get_fwd_tid, _get_bwd_tid).
std::vector<std::vector<uint32_t>> CpBuilder::HostThreads() {
  std::set<int64_t> fwd, bwd;
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    const Slice& s = slices_[i];
    if (!kept_[i] || OnDevice(s) ||
        (s.kind != ActivityKind::kCpuOp && s.kind != ActivityKind::kUserAnnotation)) {
      continue;
    }
    const std::string_view name = trace_.Str(s.name);
    if (name.find("forward") != std::string_view::npos) fwd.insert(trace_.tracks()[s.track].tid);
    if (name.find("autograd") != std::string_view::npos) bwd.insert(trace_.tracks()[s.track].tid);
  }
  const bool merge = fwd.size() == 1 && bwd.size() == 1 && *fwd.begin() != *bwd.begin();
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> threads;
  for (uint32_t t = 0; t < trace_.tracks().size(); ++t) {
    if (DeviceTrack(t)) continue;
    const Track& track = trace_.tracks()[t];
    const int64_t pid =
        track.process < trace_.processes().size() ? trace_.processes()[track.process].pid : 0;
    const int64_t tid = merge && track.tid == *bwd.begin() ? *fwd.begin() : track.tid;
    const auto [begin, end] = trace_.TrackSlices(t);
    auto& events = threads[{pid, tid}];
    for (uint32_t i = begin; i < end; ++i) {
      if (kept_[i]) events.push_back(i);
    }
    if (!events.empty()) g_.host_tracks.push_back(t);
  }
  std::vector<std::vector<uint32_t>> out;
  for (auto& [key, events] : threads) {
    if (!events.empty()) out.push_back(std::move(events));
  }
  return out;
}

namespace {

// The nesting of one thread's events (indices into `events`): each one's parent (kNone for a
// root) and children in start order; children[events.size()] holds the roots.
struct ThreadCallStack {
  std::vector<uint32_t> parent;
  std::vector<std::vector<uint32_t>> children;
};

// HTA's call stack of one thread (CallStackGraph): every event's start and end in
// compare_events's order (by time; at one time ends before starts, shorter ends first, longer
// starts first), a start opening a child of the innermost open event and an end closing the
// innermost open event.
ThreadCallStack CallStackOf(const std::vector<Slice>& slices, const std::vector<uint32_t>& events) {
  struct Point {
    int64_t t, dur;
    uint32_t local;
    bool start;
  };
  std::vector<Point> points;
  points.reserve(events.size() * 2);
  for (uint32_t k = 0; k < events.size(); ++k) {
    const Slice& s = slices[events[k]];
    const int64_t dur = std::max<int64_t>(s.dur_ns, 0);
    points.push_back({s.ts_ns, dur, k, true});
    points.push_back({s.ts_ns + dur, dur, k, false});
  }
  std::sort(points.begin(), points.end(), [&](const Point& a, const Point& b) {
    if (a.t != b.t) return a.t < b.t;
    if (a.start != b.start) return !a.start;
    if (a.dur != b.dur) return a.start ? a.dur > b.dur : a.dur < b.dur;
    return a.start ? events[a.local] < events[b.local] : events[a.local] > events[b.local];
  });
  ThreadCallStack cs{std::vector<uint32_t>(events.size(), kNone),
                     std::vector<std::vector<uint32_t>>(events.size() + 1)};
  std::vector<uint32_t> stack;
  for (const Point& p : points) {
    if (p.start) {
      cs.parent[p.local] = stack.empty() ? kNone : stack.back();
      cs.children[stack.empty() ? events.size() : stack.back()].push_back(p.local);
      stack.push_back(p.local);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }
  return cs;
}

}  // namespace

// One thread's call stack (CallStackOf), walked depth first, adding the operator and dependency
// edges as HTA's _construct_graph_from_call_stack does.
void CpBuilder::WalkThread(const std::vector<uint32_t>& events) {
  constexpr uint32_t kRoot = kNone;
  const ThreadCallStack cs = CallStackOf(slices_, events);
  const std::vector<uint32_t>& parent = cs.parent;
  const std::vector<std::vector<uint32_t>>& children = cs.children;
  int64_t last_node = -1;
  int depth = 0;
  uint32_t last_parent = kNone;
  auto slice_of = [&](uint32_t local) { return local == kRoot ? kNone : events[local]; };
  auto enter = [&](uint32_t local) {
    const auto start = Start(events[local]);
    if (!start) return;
    if (last_node >= 0 && !SharesLock(static_cast<uint32_t>(last_node), *start)) {
      const bool top = depth == 0;
      Attribute(AddEdge(static_cast<uint32_t>(last_node), *start,
                        top ? CpEdgeType::kDependency : CpEdgeType::kOperator,
                        top ? CpEdgeOrigin::kTopLevel : CpEdgeOrigin::kTimed),
                last_parent);
    }
    last_node = *start;
    last_parent = slice_of(parent[local]);
    ++depth;
  };
  auto exit = [&](uint32_t local) {
    const auto start = Start(events[local]);
    if (!start) return;
    const uint32_t end = *start + 1;
    if (last_node >= 0 && !SharesLock(static_cast<uint32_t>(last_node), end)) {
      const bool blocking = IsBlocking(trace_.Str(slices_[events[local]].name));
      Attribute(AddEdge(static_cast<uint32_t>(last_node), end, CpEdgeType::kOperator,
                        blocking ? CpEdgeOrigin::kBlocking : CpEdgeOrigin::kTimed),
                last_parent);
    }
    last_node = end;
    last_parent = slice_of(parent[local]);
    --depth;
  };
  // Iterative depth-first walk: (event, next child) frames.
  std::vector<std::pair<uint32_t, size_t>> frames;
  for (uint32_t root : children[events.size()]) {
    enter(root);
    frames.emplace_back(root, 0);
    while (!frames.empty()) {
      auto& [e, next] = frames.back();
      if (next < children[e].size()) {
        const uint32_t c = children[e][next++];
        enter(c);
        frames.emplace_back(c, 0);
      } else {
        exit(e);
        frames.pop_back();
      }
    }
  }
}

std::string_view ToString(CpEdgeType type) {
  switch (type) {
    case CpEdgeType::kOperator:
      return "critical_path_operator";
    case CpEdgeType::kDependency:
      return "critical_path_dependency";
    case CpEdgeType::kLaunchDelay:
      return "critical_path_kernel_launch_delay";
    case CpEdgeType::kKernelKernelDelay:
      return "critical_path_kernel_kernel_delay";
    case CpEdgeType::kSync:
      return "critical_path_sync_dependency";
  }
  return "";
}

CpGraph BuildCriticalPathGraph(const Trace& trace, const CpGraphOptions& options) {
  return CpBuilder(trace, options).Run();
}

}  // namespace opscope::analysis
