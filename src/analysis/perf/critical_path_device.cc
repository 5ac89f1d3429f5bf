// HTA's critical-path graph (see critical_path_graph.h), device side: queue lengths
// (TraceCounters._get_queue_length_time_series_for_rank), CUDA event synchronization
// (_get_cuda_event_record_df, _get_cuda_stream_wait_event_df) and the device edges
// (_construct_graph_from_kernels).
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>

#include "analysis/device_activity.h"
#include "analysis/perf/critical_path_builder.h"

namespace opscope::analysis {
namespace {

// HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: consecutive events on a stream further apart than this
// are not joined (the gap is taken for an unrecorded dependency, not launch overhead).
constexpr int64_t kKernelKernelDelayThresholdNs = 1'500'000;

// The runtime calls HTA counts as enqueuing work on a stream (get_runtime_launch_events_mask),
// and opscope's own Neuron runtime's.
bool IsLaunch(std::string_view name) {
  constexpr std::string_view kLaunches[] = {
      "cudaLaunchKernel",     "cudaLaunchKernelExC",
      "cuLaunchKernel",       "cuLaunchKernelEx",
      "cudaMemcpyAsync",      "cudaMemsetAsync",
      "hipLaunchKernel",      "hipExtModuleLaunchKernel",
      "hipMemcpyAsync",       "hipMemsetAsync",
      "hipMemcpyWithStream",  "runFunction - job_prep_and_submit_for_execution",
      "nrta_execute_schedule"};
  return std::find(std::begin(kLaunches), std::end(kLaunches), name) != std::end(kLaunches);
}

}  // namespace

// HTA's queue length per stream: +1 when a launch call (IsLaunch) enqueues an activity, -1 when
// the activity starts (TraceCounters._get_queue_length_time_series_for_rank), over the whole
// trace. Activity from other calls (hipModuleLaunchKernel, cudaMemcpy) is not counted and gets no
// launch edge.
void CpBuilder::QueueLengths() {
  std::unordered_map<StringId, bool> launch_names;
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
    auto [name, fresh] = launch_names.try_emplace(slices_[rt].name, false);
    if (fresh) name->second = IsLaunch(trace_.Str(slices_[rt].name));
    if (!name->second) continue;
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
// thread wait for it.
void CpBuilder::EventSyncs() {
  struct Launch {
    int64_t ts;
    uint32_t runtime, activity;
  };
  bool any = false;
  for (uint32_t i : device_) any |= slices_[i].kind == ActivityKind::kSync;
  if (!any) return;
  // Launches per device stream (pid, tid) and per (host track, device stream), by time.
  std::map<std::pair<int64_t, int64_t>, std::vector<Launch>> on_stream;
  std::map<std::pair<uint32_t, int64_t>, std::vector<Launch>> from_thread;
  auto stream_key = [&](uint32_t slice) {
    const Track& t = trace_.tracks()[slices_[slice].track];
    const int64_t pid =
        t.process < trace_.processes().size() ? trace_.processes()[t.process].pid : 0;
    return std::pair<int64_t, int64_t>{pid, t.tid};
  };
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
    if (name == "Event Sync") {
      event_sync_[i] = src;
      continue;
    }
    const uint32_t waiter = RuntimeOf(i);
    if (waiter == kNone) continue;
    const auto& next = from_thread[{slices_[waiter].track, trace_.tracks()[s.track].tid}];
    auto dest =
        std::lower_bound(next.begin(), next.end(), Launch{slices_[waiter].ts_ns, 0, 0}, by_ts);
    if (dest != next.end()) stream_waits_[i] = {src, dest->activity};
  }
}

// A cuda_sync event met in the device pass (HTA handle_cuda_sync): Context Sync joins the last
// event of every stream, Stream Sync its stream's, to the blocking call's end; Event Sync the
// recorded activity; Stream Wait Event makes the next launch on its stream wait for the recorded
// activity (kernel_sync_, consumed when that launch's activity comes).
void CpBuilder::DeviceSync(uint32_t sync, const std::unordered_map<uint32_t, uint32_t>& last) {
  const Slice& s = slices_[sync];
  const std::string_view name = trace_.Str(s.name);
  if (name == "Stream Wait Event") {
    if (auto it = stream_waits_.find(sync); it != stream_waits_.end()) {
      kernel_sync_[it->second.second] = it->second.first;
    }
    return;
  }
  const uint32_t rt = RuntimeOf(sync);
  const auto rt_start = rt == kNone ? std::nullopt : Start(rt);
  if (!rt_start) return;
  if (name == "Context Sync") {
    for (const auto& [track, node] : last) AddEdge(node, *rt_start + 1, CpEdgeType::kSync);
  } else if (name == "Stream Sync") {
    auto it = last.find(s.track);
    if (it != last.end()) AddEdge(it->second, *rt_start + 1, CpEdgeType::kSync);
  } else if (auto it = event_sync_.find(sync); name == "Event Sync" && it != event_sync_.end()) {
    if (const auto src = Start(it->second)) AddEdge(*src + 1, *rt_start + 1, CpEdgeType::kSync);
  }
}

// Device events in start order (sync events at their end): each kernel's span, then either the
// launch delay from its runtime call (when it was alone in its stream's queue and started after
// the stream's previous event and any event it waited for) or the gap after the stream's
// previous event when under 1.5 ms; sync edges as DeviceSync says.
void CpBuilder::Device() {
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
      DeviceSync(i, last);
      continue;
    }
    const auto start = Start(i);
    if (!start) continue;
    Attribute(AddEdge(*start, *start + 1, CpEdgeType::kOperator), kNone);
    std::optional<uint32_t> sync_end;
    bool waits = false;
    if (auto it = kernel_sync_.find(i); it != kernel_sync_.end()) {
      if (const auto src = Start(it->second)) {
        sync_end = *src + 1;
        AddEdge(*sync_end, *start, CpEdgeType::kSync);
        waits = true;
      }
      kernel_sync_.erase(it);
    }
    const uint32_t rt = trace_.Link(i).runtime;
    const auto rt_start = Start(rt);
    const auto& q = queue_[*start / 2];
    const auto prev = last.find(s.track);
    const int64_t rt_ts = slices_[rt].ts_ns;
    const bool alone = q.first == 1 && q.second == 0;
    bool launch = false;
    if (rt_start && alone && (prev == last.end() || g_.nodes[prev->second].ts_ns < rt_ts) &&
        (!waits || g_.nodes[*sync_end].ts_ns < rt_ts)) {
      AddEdge(*rt_start, *start, CpEdgeType::kLaunchDelay);
      launch = true;
    } else if (prev != last.end() &&
               s.ts_ns - g_.nodes[prev->second].ts_ns < kKernelKernelDelayThresholdNs &&
               (!waits || g_.nodes[*sync_end].ts_ns < g_.nodes[prev->second].ts_ns)) {
      Attribute(AddEdge(prev->second, *start, CpEdgeType::kKernelKernelDelay), kNone);
    }
    if (o_.zero_weight_launch_edges && !launch && rt_start) {
      AddEdge(*rt_start, *start, CpEdgeType::kLaunchDelay, CpEdgeOrigin::kCausal);
    }
    last[s.track] = *start + 1;
  }
}

}  // namespace opscope::analysis
