// Device activity as the timeline counts it, with its launcher, and the idle gaps between it
// (what the Explorer's findings build on; the same selection and merge as ComputeDeviceTimeline).
#include <algorithm>

#include "analysis/device_activity.h"
#include "opscope/analysis.h"

namespace opscope {

std::vector<AttributedActivity> TimelineActivities(const Trace& trace) {
  std::vector<AttributedActivity> out;
  const auto& slices = trace.slices();
  for (uint32_t i = 0; i < slices.size(); ++i) {
    if (!analysis::CountsInTimeline(trace, i)) continue;
    out.push_back({i, analysis::LauncherOf(trace, i)});
  }
  return out;
}

IdleGaps ComputeIdleGaps(const Trace& trace, size_t keep) {
  const auto& slices = trace.slices();
  std::vector<uint32_t> ids;
  for (const AttributedActivity& a : TimelineActivities(trace)) ids.push_back(a.slice);
  std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
    return slices[a].ts_ns != slices[b].ts_ns ? slices[a].ts_ns < slices[b].ts_ns : a < b;
  });
  IdleGaps gaps;
  if (ids.empty()) return gaps;
  auto end_of = [&](uint32_t id) { return slices[id].ts_ns + slices[id].dur_ns; };
  int64_t busy_end = end_of(ids[0]);
  uint32_t last = ids[0];  // the activity that ends the busy stretch so far
  auto longer = [](const IdleGap& a, const IdleGap& b) {
    return a.dur_ns != b.dur_ns ? a.dur_ns > b.dur_ns : a.ts_ns < b.ts_ns;
  };
  for (size_t k = 1; k < ids.size(); ++k) {
    const uint32_t id = ids[k];
    if (slices[id].ts_ns > busy_end) {  // touching intervals merge, as in the timeline
      const IdleGap gap{busy_end, slices[id].ts_ns - busy_end, last, id};
      ++gaps.count;
      gaps.total_ns += gap.dur_ns;
      gaps.largest.push_back(gap);
      std::push_heap(gaps.largest.begin(), gaps.largest.end(), longer);
      if (gaps.largest.size() > keep) {
        std::pop_heap(gaps.largest.begin(), gaps.largest.end(), longer);
        gaps.largest.pop_back();
      }
    }
    if (end_of(id) >= busy_end) {
      busy_end = end_of(id);
      last = id;
    }
  }
  std::sort(gaps.largest.begin(), gaps.largest.end(), longer);
  return gaps;
}

}  // namespace opscope
