// HTA's critical-path graph (see critical_path_graph.h). Follows CPGraph's construction:
// _create_event_nodes, _construct_graph_from_call_stacks, _construct_graph_from_kernels.
#include "analysis/perf/critical_path_graph.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/device_activity.h"

namespace opscope::analysis {
namespace {

// Host calls that block until the device catches up (HTA's BLOCKING_SYNC_CALLS and their HIP
// twins): their span weighs 0, the device -> host sync edge carries the wait.
bool IsBlocking(std::string_view name) {
  constexpr std::string_view kBlocking[] = {"cudaDeviceSynchronize",
                                            "cudaStreamSynchronize",
                                            "cudaEventQuery",
                                            "cudaEventSynchronize",
                                            "cudaMemcpy",
                                            "cudaMemcpyAsync",
                                            "hipDeviceSynchronize",
                                            "hipStreamSynchronize",
                                            "hipEventQuery",
                                            "hipEventSynchronize",
                                            "hipMemcpy",
                                            "hipMemcpyAsync"};
  return std::find(std::begin(kBlocking), std::end(kBlocking), name) != std::end(kBlocking);
}

class Builder {
 public:
  Builder(const Trace& trace, const CpGraphOptions& options)
      : trace_(trace), slices_(trace.slices()), o_(options), kept_(slices_.size(), 0) {}

  CpGraph Run() {
    g_.start_node.assign(slices_.size(), kNone);
    Clip();
    for (uint32_t t = 0; t < trace_.tracks().size(); ++t) {
      if (!DeviceTrack(t)) WalkThread(t);
    }
    Device();
    return std::move(g_);
  }

 private:
  // Device tracks: streams, and any track of a device process (Kineto puts Context Sync on tid
  // -1 of the GPU).
  bool DeviceTrack(uint32_t track) const {
    if (track >= trace_.tracks().size()) return false;
    const Track& t = trace_.tracks()[track];
    return t.kind != TrackKind::kThread ||
           (t.process < trace_.processes().size() && trace_.processes()[t.process].is_device);
  }
  bool OnDevice(const Slice& s) const { return DeviceTrack(s.track); }

  void IndexRuntimes() {
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
  uint32_t RuntimeOf(uint32_t i) {
    const uint32_t rt = trace_.Link(i).runtime;
    if (rt != kNone) return rt;
    if (!indexed_) IndexRuntimes();
    auto it = runtime_by_corr_.find(slices_[i].correlation);
    return slices_[i].correlation != 0 && it != runtime_by_corr_.end() ? it->second : kNone;
  }

  bool InWindow(int64_t ts) const { return ts >= o_.start_ns && ts <= o_.end_ns; }

  // HTA's clipping: host events starting in the window with a duration; device events whose
  // runtime call does (and cudaStreamWaitEvent's sync events). Nodes for host ops and runtime
  // calls, and for device kernels, memcpys and memsets with a runtime call.
  void Clip() {
    for (uint32_t i = 0; i < slices_.size(); ++i) {
      const Slice& s = slices_[i];
      if (!OnDevice(s)) {
        if (s.track >= trace_.tracks().size() || !InWindow(s.ts_ns) || s.dur_ns <= 0) {
          continue;
        }
        kept_[i] = 1;
        if (s.kind == ActivityKind::kCpuOp || s.kind == ActivityKind::kRuntime ||
            s.kind == ActivityKind::kDriver) {
          AddNodes(i);
        }
        continue;
      }
      const bool sync = s.kind == ActivityKind::kSync;
      if (!sync && !IsTimelineActivity(s.kind)) continue;
      const uint32_t rt = RuntimeOf(i);
      const bool launched = rt != kNone && InWindow(slices_[rt].ts_ns) && slices_[rt].dur_ns > 0;
      if (!launched && !(sync && trace_.Str(s.name) == "Stream Wait Event")) continue;
      kept_[i] = 1;
      device_.push_back(i);
      if (!sync && rt != kNone) AddNodes(i);
    }
  }

  void AddNodes(uint32_t slice) {
    const Slice& s = slices_[slice];
    g_.start_node[slice] = static_cast<uint32_t>(g_.nodes.size());
    queue_.emplace_back(-1, -1);
    g_.nodes.push_back({slice, true, s.ts_ns});
    g_.nodes.push_back({slice, false, s.ts_ns + s.dur_ns});
  }
  std::optional<uint32_t> Start(uint32_t slice) const {
    if (slice >= g_.start_node.size() || g_.start_node[slice] == kNone) return std::nullopt;
    return g_.start_node[slice];
  }

  // Returns the new edge's index, or -1 when src == dst.
  int64_t AddEdge(uint32_t src, uint32_t dst, CpEdgeType type, bool zero = false) {
    if (src == dst) return -1;
    int64_t w = 0;
    if (!zero && type != CpEdgeType::kDependency && type != CpEdgeType::kSync) {
      w = g_.nodes[dst].ts_ns - g_.nodes[src].ts_ns;
      if (w < 0) {
        ++g_.negative_weights;
        w = 0;
      }
    }
    g_.edges.push_back({src, dst, w, type, kNone});
    return static_cast<int64_t>(g_.edges.size()) - 1;
  }

  // HTA _attribute_edge: entering -> the source's event, leaving -> the destination's, between
  // siblings (end -> start) -> their parent.
  void Attribute(int64_t edge, uint32_t src_parent) {
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

  bool IsAncestor(uint32_t a, uint32_t b) const {
    for (uint32_t p = slices_[b].parent; p != kNone; p = slices_[p].parent) {
      if (p == a) return true;
    }
    return false;
  }

  // A depth-first walk of one host thread's kept events (HTA's call-stack traversal).
  void WalkThread(uint32_t track) {
    struct Open {
      uint32_t slice, parent;
    };
    std::vector<Open> stack;
    int64_t last_node = -1, last_top = -1;
    int depth = 0;
    uint32_t last_parent = kNone;
    auto enter = [&](uint32_t e, uint32_t parent) {
      const auto start = Start(e);
      if (!start) return;
      if (depth == 0 && last_top >= 0) {
        AddEdge(static_cast<uint32_t>(last_top), *start, CpEdgeType::kDependency);
      }
      ++depth;
      if (last_node >= 0) {
        Attribute(AddEdge(static_cast<uint32_t>(last_node), *start, CpEdgeType::kOperator),
                  last_parent);
      }
      last_node = *start;
      last_parent = parent;
    };
    auto exit = [&](uint32_t e, uint32_t parent) {
      const auto start = Start(e);
      if (!start) return;
      --depth;
      const uint32_t end = *start + 1;
      if (last_node >= 0) {
        const bool blocking = IsBlocking(trace_.Str(slices_[e].name));
        Attribute(AddEdge(static_cast<uint32_t>(last_node), end, CpEdgeType::kOperator, blocking),
                  last_parent);
      }
      if (depth == 0) {
        last_node = -1;
        last_top = end;
      } else {
        last_node = end;
        last_parent = parent;
      }
    };
    const auto [begin, finish] = trace_.TrackSlices(track);
    for (uint32_t i = begin; i < finish; ++i) {
      if (!kept_[i]) continue;
      while (!stack.empty() && !IsAncestor(stack.back().slice, i)) {
        exit(stack.back().slice, stack.back().parent);
        stack.pop_back();
      }
      const uint32_t parent = stack.empty() ? kNone : stack.back().slice;
      enter(i, parent);
      stack.push_back({i, parent});
    }
    while (!stack.empty()) {
      exit(stack.back().slice, stack.back().parent);
      stack.pop_back();
    }
  }

  void Device();
  void QueueLengths();
  void EventSyncs();

  const Trace& trace_;
  const std::vector<Slice>& slices_;
  CpGraphOptions o_;
  std::vector<uint8_t> kept_;
  std::vector<uint32_t> device_;                           // kept device events
  std::unordered_map<int64_t, uint32_t> runtime_by_corr_;  // built when a sync event needs it
  bool indexed_ = false;
  // Per node pair (start node / 2): for a device activity, the queue length on its stream after
  // its launch and after its start; -1 when unknown.
  std::vector<std::pair<int, int>> queue_;
  std::unordered_map<uint32_t, uint32_t> kernel_sync_;  // dest activity -> src activity
  std::unordered_map<uint32_t, uint32_t> event_sync_;   // cudaEventSynchronize call -> activity
  CpGraph g_;
};

// HTA's queue length per stream: +1 when a runtime call enqueues an activity, -1 when the
// activity starts (TraceCounters._get_queue_length_time_series_for_rank), over the whole trace.
void Builder::QueueLengths() {
  struct Step {
    int64_t ts;
    int delta;
    uint32_t activity;
  };
  std::map<uint32_t, std::vector<Step>> by_stream;
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    if (!IsTimelineActivity(slices_[i].kind)) continue;
    const uint32_t rt = trace_.Link(i).runtime;
    if (rt == kNone) continue;
    auto& steps = by_stream[slices_[i].track];
    steps.push_back({slices_[rt].ts_ns, +1, i});
    steps.push_back({slices_[i].ts_ns, -1, i});
  }
  for (auto& [track, steps] : by_stream) {
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      return a.ts < b.ts || (a.ts == b.ts && a.delta > b.delta);
    });
    int q = 0;
    for (const Step& s : steps) {
      q += s.delta;
      const auto start = Start(s.activity);
      if (!start) continue;
      auto& entry = queue_[*start / 2];
      (s.delta > 0 ? entry.first : entry.second) = q;
    }
  }
}

// cudaEventRecord / cudaStreamWaitEvent / cudaEventSynchronize, from the sync events' args
// (wait_on_cuda_event_record_corr_id, wait_on_stream): the event's source is the activity of the
// last launch on the recorded stream before the record call; cudaEventSynchronize waits for it
// on the host, and cudaStreamWaitEvent makes the next launch on the waiting stream from the same
// thread wait for it (HTA _get_cuda_event_record_df, _get_cuda_stream_wait_event_df).
void Builder::EventSyncs() {
  struct Launch {
    int64_t ts;
    uint32_t runtime, activity;
  };
  // Launches per device stream (pid, tid) and per (host track, device stream), by time.
  std::map<std::pair<int64_t, int64_t>, std::vector<Launch>> on_stream;
  std::map<std::pair<uint32_t, int64_t>, std::vector<Launch>> from_thread;
  auto stream_key = [&](uint32_t slice) {
    const Track& t = trace_.tracks()[slices_[slice].track];
    const int64_t pid =
        t.process < trace_.processes().size() ? trace_.processes()[t.process].pid : 0;
    return std::pair<int64_t, int64_t>{pid, t.tid};
  };
  bool any = false;
  for (uint32_t i : device_) any |= slices_[i].kind == ActivityKind::kSync;
  if (!any) return;
  for (uint32_t i = 0; i < slices_.size(); ++i) {
    if (!IsTimelineActivity(slices_[i].kind)) continue;
    const uint32_t rt = trace_.Link(i).runtime;
    if (rt == kNone) continue;
    const Launch l{slices_[rt].ts_ns, rt, i};
    on_stream[stream_key(i)].push_back(l);
    from_thread[{slices_[rt].track, trace_.tracks()[slices_[i].track].tid}].push_back(l);
  }
  auto by_ts = [](const Launch& a, const Launch& b) { return a.ts < b.ts; };
  for (auto& [k, v] : on_stream) std::stable_sort(v.begin(), v.end(), by_ts);
  for (auto& [k, v] : from_thread) std::stable_sort(v.begin(), v.end(), by_ts);
  auto arg = [&](uint32_t slice, std::string_view key) -> std::optional<int64_t> {
    const auto text = trace_.FindArg(slices_[slice].args, key);
    if (!text) return std::nullopt;
    return std::strtoll(text->c_str(), nullptr, 10);
  };
  for (uint32_t i : device_) {
    const Slice& s = slices_[i];
    if (s.kind != ActivityKind::kSync) continue;
    const std::string_view name = trace_.Str(s.name);
    if (name != "Stream Wait Event" && name != "Event Sync") continue;
    const auto record_corr = arg(i, "wait_on_cuda_event_record_corr_id");
    const auto wait_stream = arg(i, "wait_on_stream");
    if (!record_corr || !wait_stream) continue;  // older traces: no way to tell the source
    if (!indexed_) IndexRuntimes();
    auto rec = runtime_by_corr_.find(*record_corr);
    if (rec == runtime_by_corr_.end()) continue;
    const auto& launches = on_stream[{stream_key(i).first, *wait_stream}];
    const int64_t rec_ts = slices_[rec->second].ts_ns;
    auto after = std::upper_bound(launches.begin(), launches.end(), Launch{rec_ts, 0, 0}, by_ts);
    if (after == launches.begin()) continue;  // nothing recorded before
    const uint32_t src = std::prev(after)->activity;
    const uint32_t waiter = RuntimeOf(i);
    if (waiter == kNone) continue;
    if (name == "Event Sync") {
      event_sync_[waiter] = src;
      continue;
    }
    const auto& next = from_thread[{slices_[waiter].track, trace_.tracks()[s.track].tid}];
    auto dest =
        std::lower_bound(next.begin(), next.end(), Launch{slices_[waiter].ts_ns, 0, 0}, by_ts);
    if (dest != next.end()) kernel_sync_[dest->activity] = src;
  }
}

// Device events in start order (sync events at their end): each kernel's span, then either the
// launch delay from its runtime call (when it was alone in its stream's queue and started after
// the stream's previous event and any event it waited for) or the gap after the stream's
// previous event; sync edges to the blocking host calls.
void Builder::Device() {
  QueueLengths();
  EventSyncs();
  auto key = [&](uint32_t i) {
    const Slice& s = slices_[i];
    return s.kind == ActivityKind::kSync ? s.ts_ns + s.dur_ns : s.ts_ns;
  };
  std::stable_sort(device_.begin(), device_.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::unordered_map<uint32_t, uint32_t> last;  // stream track -> end node of its last event
  for (uint32_t i : device_) {
    const Slice& s = slices_[i];
    if (s.kind == ActivityKind::kSync) {
      const uint32_t rt = RuntimeOf(i);
      const auto rt_start = rt == kNone ? std::nullopt : Start(rt);
      if (!rt_start) continue;
      const std::string_view name = trace_.Str(s.name);
      if (name == "Context Sync") {
        for (const auto& [track, node] : last) AddEdge(node, *rt_start + 1, CpEdgeType::kSync);
      } else if (name == "Stream Sync") {
        auto it = last.find(s.track);
        if (it != last.end()) AddEdge(it->second, *rt_start + 1, CpEdgeType::kSync);
      } else if (auto it = event_sync_.find(rt); name == "Event Sync" && it != event_sync_.end()) {
        if (const auto src = Start(it->second)) AddEdge(*src + 1, *rt_start + 1, CpEdgeType::kSync);
      }
      continue;
    }
    const auto start = Start(i);
    if (!start) continue;
    Attribute(AddEdge(*start, *start + 1, CpEdgeType::kOperator), kNone);
    std::optional<uint32_t> sync_end;
    if (auto it = kernel_sync_.find(i); it != kernel_sync_.end()) {
      if (const auto src = Start(it->second)) {
        sync_end = *src + 1;
        AddEdge(*sync_end, *start, CpEdgeType::kSync);
      }
    }
    const uint32_t rt = trace_.Link(i).runtime;
    const auto rt_start = Start(rt);
    const auto& q = queue_[*start / 2];
    const auto prev = last.find(s.track);
    const int64_t rt_ts = slices_[rt].ts_ns;
    const bool alone = q.first == 1 && q.second == 0;
    bool launch = false;
    if (rt_start && alone && (prev == last.end() || g_.nodes[prev->second].ts_ns < rt_ts) &&
        (!sync_end || g_.nodes[*sync_end].ts_ns < rt_ts)) {
      AddEdge(*rt_start, *start, CpEdgeType::kLaunchDelay);
      launch = true;
    } else if (prev != last.end() &&
               (!sync_end || g_.nodes[*sync_end].ts_ns < g_.nodes[prev->second].ts_ns)) {
      Attribute(AddEdge(prev->second, *start, CpEdgeType::kKernelKernelDelay), kNone);
    }
    if (o_.zero_weight_launch_edges && !launch && rt_start) {
      AddEdge(*rt_start, *start, CpEdgeType::kLaunchDelay, /*zero=*/true);
    }
    last[s.track] = *start + 1;
  }
}

}  // namespace

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
  return Builder(trace, options).Run();
}

}  // namespace opscope::analysis
