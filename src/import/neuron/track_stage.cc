// TrackStage (track_stage.h): per-track blocks of staged slices and their flush in track order.
#include "import/neuron/track_stage.h"

#include <algorithm>

#include "base/huge_array.h"

namespace opscope::import::neuron {
namespace {

constexpr size_t kFirstBlock = size_t{1} << 12;
// 32 MiB of slices: at glibc's largest mmap threshold, so a freed block goes back to the system.
constexpr size_t kLastBlock = size_t{1} << 19;

}  // namespace

uint32_t TrackStage::Push(const Slice& s) {
  if (s.track >= blocks_.size()) {
    blocks_.resize(static_cast<size_t>(s.track) + 1);
    counts_.resize(static_cast<size_t>(s.track) + 1, 0);
  }
  std::vector<std::vector<Slice>>& blocks = blocks_[s.track];
  if (blocks.empty() || blocks.back().size() == blocks.back().capacity()) {
    const size_t n =
        blocks.empty() ? kFirstBlock : std::min(2 * blocks.back().capacity(), kLastBlock);
    blocks.emplace_back();
    blocks.back().reserve(n);
    internal::AdviseHugePages(blocks.back().data(), n * sizeof(Slice));
  }
  blocks.back().push_back(s);
  ++size_;
  return counts_[s.track]++;
}

void TrackStage::Flush(Trace* trace, std::vector<uint32_t>* first) {
  first->assign(blocks_.size(), kNone);
  for (size_t t = 0; t < blocks_.size(); ++t) {
    if (counts_[t] == 0) continue;
    (*first)[t] = static_cast<uint32_t>(trace->slices().size());
    for (std::vector<Slice>& block : blocks_[t]) {
      trace->AddSlices(block);
      std::vector<Slice>().swap(block);
    }
  }
  blocks_.clear();
  counts_.clear();
  size_ = 0;
}

}  // namespace opscope::import::neuron
