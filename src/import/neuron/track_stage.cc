// The big tables' slice arena and its layout by track (track_stage.h).
#include "import/neuron/track_stage.h"

#include <sys/mman.h>

#include <algorithm>
#include <span>

#include "base/huge_array.h"

namespace opscope::import::neuron {
namespace {

constexpr size_t kPageBytes = 4096;
// Slices appended (and their pages given back) at a time: 16 MiB.
constexpr uint64_t kHandOverSlices = uint64_t{1} << 18;

}  // namespace

void GroupLanes::SetLanes(const std::vector<uint32_t>& lanes, size_t lane_count) {
  if (lane_count <= 256) {
    lane_of_row8.assign(lanes.begin(), lanes.end());
  } else {
    lane_of_row32 = lanes;
  }
}

TrackLayout LayOut(const std::vector<std::vector<GroupLanes>*>& tables, size_t num_tracks) {
  TrackLayout layout;
  layout.rows.assign(num_tracks, 0);
  for (const std::vector<GroupLanes>* groups : tables) {
    for (const GroupLanes& g : *groups) {
      for (size_t lane = 0; lane < g.tracks.size(); ++lane) {
        layout.rows[g.tracks[lane]] += g.counts[lane];
      }
    }
  }
  layout.begin.assign(num_tracks, 0);
  for (size_t t = 0; t < num_tracks; ++t) {
    layout.begin[t] = layout.total;
    layout.total += layout.rows[t];
  }
  std::vector<uint64_t> cursor = layout.begin;
  for (std::vector<GroupLanes>* groups : tables) {
    for (GroupLanes& g : *groups) {
      g.start.resize(g.tracks.size());
      for (size_t lane = 0; lane < g.tracks.size(); ++lane) {
        g.start[lane] = cursor[g.tracks[lane]];
        cursor[g.tracks[lane]] += g.counts[lane];
      }
    }
  }
  return layout;
}

SliceArena::~SliceArena() { Release(); }

bool SliceArena::Allocate(size_t n) {
  Release();
  if (n == 0) return true;
  bytes_ = n * sizeof(Slice);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    bytes_ = 0;
    return false;
  }
  data_ = static_cast<Slice*>(p);
  internal::AdviseHugePages(data_, bytes_);
  return true;
}

void SliceArena::Release() {
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
  released_ = 0;
}

void SliceArena::Append(uint64_t begin, uint64_t n, Trace* trace) {
  for (uint64_t at = begin; at < begin + n;) {
    const uint64_t end = std::min(begin + n, at + kHandOverSlices);
    trace->AddSlices(std::span<const Slice>(data_ + at, end - at));
    at = end;
    const size_t upto = at * sizeof(Slice) / kPageBytes * kPageBytes;
    if (upto > released_) {
      madvise(reinterpret_cast<char*>(data_) + released_, upto - released_, MADV_DONTNEED);
      released_ = upto;
    }
  }
}

void SliceArena::HandOver(const TrackLayout& layout,
                          const std::vector<std::vector<GroupLanes>*>& tables,
                          const std::vector<size_t>& merged, Trace* trace,
                          std::vector<uint32_t>* first) {
  std::vector<uint64_t> rows(layout.rows.size(), 0);  // the written prefix of each track
  uint64_t total = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    for (size_t g = 0; g < merged[i] && g < tables[i]->size(); ++g) {
      const GroupLanes& group = (*tables[i])[g];
      for (size_t lane = 0; lane < group.tracks.size(); ++lane) {
        rows[group.tracks[lane]] += group.counts[lane];
        total += group.counts[lane];
      }
    }
  }
  // Both tables' slices at once, on huge pages: written once in order, their first touch would
  // otherwise fault every 4 KiB (base/huge_array.h).
  const size_t slices = trace->slices().size() + total;
  if (slices > trace->slices().capacity()) {
    trace->ReserveSlices(slices);
    internal::AdviseHugePages(trace->slices().data(), slices * sizeof(Slice));
  }
  first->assign(rows.size(), kNone);
  if (total == layout.total) {  // all of it: one run
    for (size_t t = 0; t < rows.size(); ++t) {
      if (rows[t] != 0)
        (*first)[t] = static_cast<uint32_t>(trace->slices().size() + layout.begin[t]);
    }
    Append(0, total, trace);
  } else {
    for (size_t t = 0; t < rows.size(); ++t) {
      if (rows[t] == 0) continue;
      (*first)[t] = static_cast<uint32_t>(trace->slices().size());
      Append(layout.begin[t], rows[t], trace);
    }
  }
  Release();
}

}  // namespace opscope::import::neuron
