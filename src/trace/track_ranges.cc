// Ranges of whole tracks (see track_ranges.h).
#include "trace/track_ranges.h"

#include "base/parallel_for.h"

namespace opscope::internal {

std::vector<std::pair<uint32_t, uint32_t>> TrackRanges(const Trace& trace, size_t parts) {
  const auto& slices = trace.slices();
  const size_t tracks = trace.tracks().size();
  const auto n = static_cast<uint32_t>(slices.size());
  std::vector<std::pair<uint32_t, uint32_t>> out;
  uint32_t begin = 0;
  for (const auto& [even_begin, even_end] : SplitRange(n, parts)) {
    uint32_t cut = even_end;
    if (cut < n && slices[cut].track < tracks) cut = trace.TrackSlices(slices[cut].track).first;
    if (cut > begin) {
      out.emplace_back(begin, cut);
      begin = cut;
    }
  }
  return out;
}

}  // namespace opscope::internal
