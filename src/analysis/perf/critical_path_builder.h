// The builder of HTA's critical-path graph (critical_path_graph.h), shared by its two halves:
// critical_path_graph.cc (the window, nodes, runtime-lock and call-stack edges) and
// critical_path_device.cc (queue lengths, event synchronization, device edges). Internal.
#ifndef OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_BUILDER_H_
#define OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_BUILDER_H_

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/perf/critical_path_graph.h"

namespace opscope::analysis {

class CpBuilder {
 public:
  CpBuilder(const Trace& trace, const CpGraphOptions& options);
  CpGraph Run();

 private:
  // critical_path_graph.cc
  bool DeviceTrack(uint32_t track) const;
  bool OnDevice(const Slice& s) const { return DeviceTrack(s.track); }
  void IndexRuntimes();
  uint32_t RuntimeOf(uint32_t i);
  bool InWindow(int64_t ts) const { return ts >= o_.start_ns && ts <= o_.end_ns; }
  void Clip();
  bool HostOpWithStream(uint32_t slice) const;
  void AddNodes(uint32_t slice);
  std::optional<uint32_t> Start(uint32_t slice) const;
  int64_t AddEdge(uint32_t src, uint32_t dst, CpEdgeType type,
                  CpEdgeOrigin zero_by = CpEdgeOrigin::kTimed);
  void Attribute(int64_t edge, uint32_t src_parent);
  bool LockCall(uint32_t slice) const;
  bool SharesLock(uint32_t last_node, uint32_t node) const;
  void RuntimeLock();
  std::vector<std::vector<uint32_t>> HostThreads();
  void WalkThread(const std::vector<uint32_t>& events);

  // critical_path_device.cc
  void Device();
  void QueueLengths();
  void EventSyncs();
  void DeviceSync(uint32_t sync, const std::unordered_map<uint32_t, uint32_t>& last);

  const Trace& trace_;
  const std::vector<Slice>& slices_;
  CpGraphOptions o_;
  std::vector<uint8_t> kept_;
  std::vector<uint32_t> device_;                           // kept device events
  std::unordered_map<int64_t, uint32_t> runtime_by_corr_;  // built when a sync event needs it
  bool indexed_ = false;
  std::vector<uint8_t> lock_;  // per slice: a runtime call that takes the CUDA runtime's lock
  // Per node pair (start node / 2): for a device activity, the queue length on its stream after
  // its launch and after its start; -1 when unknown.
  std::vector<std::pair<int, int>> queue_;
  // Per Stream Wait Event: (the activity it waits for, the next launch on the waiting stream).
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> stream_waits_;
  std::unordered_map<uint32_t, uint32_t> kernel_sync_;   // dest activity -> src activity
  std::unordered_map<uint32_t, uint32_t> event_sync_;    // Event Sync event -> activity
  std::unordered_map<uint64_t, uint32_t> edge_of_pair_;  // (from, to) -> edge index
  CpGraph g_;
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_BUILDER_H_
