// The "[memory]" instant events of a trace (torch.profiler's profile_memory=True), read once and
// sorted by time, with prefix sums so that the bytes allocated inside any time interval are two
// binary searches away. Shared by key_averages (memory columns) and the memory timeline.
//
// Each event is one allocation (Bytes > 0) or free (Bytes < 0) by PyTorch's caching allocator
// (or opscope's device allocators), with the allocator's totals after it. AddMemoryEvent is the
// one writer of these events (the profiler's trace builder and the tests).
//
// Thread safety: immutable after construction.
#ifndef OPSCOPE_PROFILER_MEMORY_EVENTS_H_
#define OPSCOPE_PROFILER_MEMORY_EVENTS_H_

#include <cstdint>
#include <vector>

#include "opscope/trace.h"

namespace opscope::internal {

// c10::DeviceType values that profiler_util counts as host memory (CPU, MKLDNN, IDEEP) and as
// device memory (CUDA, HIP, PrivateUse1), as torch/autograd/profiler.py _parse_kineto_results
// does. Other device types count in neither column.
inline bool IsCpuMemoryDevice(int64_t device_type) {
  return device_type == 0 || device_type == 2 || device_type == 5;
}
inline bool IsDeviceMemoryDevice(int64_t device_type) {
  return device_type == 1 || device_type == 6 || device_type == 20;
}

struct MemoryEvent {
  int64_t ts_ns = 0;
  int64_t bytes = 0;            // "Bytes": > 0 allocated, < 0 freed
  int64_t total_allocated = 0;  // "Total Allocated" after this event (-1 when absent)
  int64_t total_reserved = 0;   // "Total Reserved" after this event (-1 when absent)
  int64_t device_type = 0;      // "Device Type" (c10::DeviceType)
  int64_t device_id = 0;        // "Device Id" (-1 for the host)
  uint64_t addr = 0;            // "Addr"
  uint32_t track = kNone;       // the host thread that allocated
};

// Appends `e` to `trace` as Kineto writes it: a "[memory]" instant (category
// "cpu_instant_event") on e.track with the args Total Reserved, Total Allocated, Bytes, Device Id,
// Device Type and Addr, in Kineto's order. MemoryEvents reads back exactly what this writes.
void AddMemoryEvent(Trace& trace, const MemoryEvent& e);

class MemoryEvents {
 public:
  // Every "[memory]" instant of `trace` (finalized), sorted by time (stable: equal times keep
  // the trace's order). Instants whose args lack "Bytes" are left out.
  explicit MemoryEvents(const Trace& trace);

  const std::vector<MemoryEvent>& events() const { return events_; }
  bool empty() const { return events_.empty(); }

  // Events with lo_ts_ns <= ts <= hi_ts_ns (both ends inclusive, as PyTorch's
  // MemRecordsAcc.in_interval): [begin, end) indices into events().
  std::pair<uint32_t, uint32_t> InInterval(int64_t lo_ts_ns, int64_t hi_ts_ns) const;
  // Host and device bytes of events [begin, end).
  int64_t CpuBytes(uint32_t begin, uint32_t end) const { return cpu_[end] - cpu_[begin]; }
  int64_t DeviceBytes(uint32_t begin, uint32_t end) const { return dev_[end] - dev_[begin]; }

 private:
  std::vector<MemoryEvent> events_;
  std::vector<int64_t> ts_;         // events_[i].ts_ns, for binary search
  std::vector<int64_t> cpu_, dev_;  // prefix sums, size + 1
};

}  // namespace opscope::internal

#endif  // OPSCOPE_PROFILER_MEMORY_EVENTS_H_
