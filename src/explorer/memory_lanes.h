// MemoryLanes: the Explorer's memory counter lanes, one per device of a profile_memory trace
// ("[memory]" instant events). They are drawn from the memory timeline that `opscope report
// --memory` prints (ComputeMemoryTimeline, with the report's default number of holders), so the
// peak, its time and the ops holding the most at the peak are the report's, never recomputed.
//
// A viewport's points are buckets of at least one pixel: each keeps the lowest, highest and last
// allocated bytes and the highest and last reserved bytes of the samples in it. The highest
// allocated value of the bucket that holds the peak is the peak exactly, at any zoom.
//
// Thread safety: immutable after construction; every const method may run concurrently.
// The Trace must outlive the lanes only during construction (nothing refers to it afterwards).
#ifndef OPSCOPE_EXPLORER_MEMORY_LANES_H_
#define OPSCOPE_EXPLORER_MEMORY_LANES_H_

#include <cstddef>
#include <cstdint>

#include "base/json_writer.h"
#include "opscope/analysis.h"
#include "opscope/trace.h"

namespace opscope::explorer {

class MemoryLanes {
 public:
  explicit MemoryLanes(const Trace& trace);

  const MemoryTimeline& timeline() const { return timeline_; }
  size_t size() const { return timeline_.devices.size(); }
  const DeviceMemory& device(size_t d) const { return timeline_.devices[d]; }

  // The first and last sample time of every device, ns; false when there is no sample.
  bool Extent(int64_t* first_ns, int64_t* last_ns) const;

  // One device's figures, as `report --memory --json` names them: {"device", "device_type",
  // "device_id", "allocations", "frees", "peak_allocated", "peak_ts_ns", "peak_reserved",
  // "samples" (their number), "holders_at_peak": [{"op", "bytes", "allocations"}]}; peak_ts_ns
  // relative to `origin_ns` (the trace's start: TraceIndex::ToApi).
  void WriteDevice(size_t d, int64_t origin_ns, JsonWriter* w) const;

  // Device d's samples in [t0_ns, t1_ns] (and the one in force at t0_ns) in buckets of at least
  // bucket_ns: [[ts_ns, allocated_min, allocated_max, allocated_last, reserved_max,
  // reserved_last], ...], ts_ns the bucket's first sample, written relative to `origin_ns`;
  // reserved is -1 where the trace does not say.
  void WritePoints(size_t d, int64_t t0_ns, int64_t t1_ns, int64_t bucket_ns, int64_t origin_ns,
                   JsonWriter* w) const;

 private:
  MemoryTimeline timeline_;
};

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_MEMORY_LANES_H_
