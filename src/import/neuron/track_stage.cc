// The big tables' slice arena and its layout by track (track_stage.h).
#include "import/neuron/track_stage.h"

#include <cstring>
#include <new>
#include <type_traits>

#include "base/huge_array.h"

namespace opscope::import::neuron {

static_assert(std::is_trivially_copyable_v<Slice>, "HandOver moves slices with memmove");

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

SliceArena::~SliceArena() {
  if (trace_ != nullptr) trace_->TruncateSlices(base_);  // never handed over
}

bool SliceArena::Allocate(size_t n, Trace* trace, int threads) {
  base_ = trace->slices().size();
  const size_t slices = base_ + n;
  try {
    if (slices > trace->slices().capacity()) {
      trace->ReserveSlices(slices);
      internal::AdviseHugePages(trace->slices().data(), slices * sizeof(Slice));
      // AppendSlices value-initializes the new slices on this thread: the pages it would fault
      // one after another are faulted here on every thread first.
      internal::PrefaultParallel(trace->slices().data() + base_, n * sizeof(Slice), threads);
    }
    data_ = trace->AppendSlices(n);
  } catch (const std::bad_alloc&) {
    data_ = nullptr;
    return false;
  }
  trace_ = trace;
  return true;
}

void SliceArena::HandOver(const TrackLayout& layout,
                          const std::vector<std::vector<GroupLanes>*>& tables,
                          const std::vector<size_t>& merged, std::vector<uint32_t>* first) {
  std::vector<uint64_t> rows(layout.rows.size(), 0);  // the written prefix of each track
  for (size_t i = 0; i < tables.size(); ++i) {
    for (size_t g = 0; g < merged[i] && g < tables[i]->size(); ++g) {
      const GroupLanes& group = (*tables[i])[g];
      for (size_t lane = 0; lane < group.tracks.size(); ++lane) {
        rows[group.tracks[lane]] += group.counts[lane];
      }
    }
  }
  first->assign(rows.size(), kNone);
  if (trace_ == nullptr) return;
  // Each track's written prefix moves down to follow the one before it (never up: the prefixes
  // before it are no longer than their tracks), so a whole read moves nothing.
  uint64_t out = 0;
  for (size_t t = 0; t < rows.size(); ++t) {
    if (rows[t] == 0) continue;
    (*first)[t] = static_cast<uint32_t>(base_ + out);
    if (out != layout.begin[t]) {
      std::memmove(static_cast<void*>(data_ + out), data_ + layout.begin[t],
                   rows[t] * sizeof(Slice));
    }
    out += rows[t];
  }
  if (out != layout.total) trace_->TruncateSlices(base_ + out);
  trace_ = nullptr;
}

}  // namespace opscope::import::neuron
