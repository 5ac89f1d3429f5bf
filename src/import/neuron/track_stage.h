// Where the slices of a device profile's big tables (Instruction, DmaPacket) are written: the
// trace's own slice storage, grown once by the tables' rows and laid out by track, each track in
// the order its rows come in the tables (Instruction's, then the DMA table's).
//
// The tables' rows interleave the engines and queues (a row group holds every engine's
// instructions of its time range), so slices added to the trace as read would leave Finalize a
// sort by track of tens of millions of 64-byte slices. A first pass over the lane columns counts
// each row group's rows per lane (GroupLanes); LayOut then gives every lane of every row group its
// place in the arena, so the decode threads write each slice once, at its final place in the
// trace, in any order: Finalize's check finds nothing to move, and nothing is copied.
//
//   std::vector<GroupLanes> instructions, dma;        // pass 1: tracks and counts per row group
//   TrackLayout layout = LayOut({&instructions, &dma});
//   SliceArena arena;
//   arena.Allocate(layout.total, trace);
//   arena.data()[instructions[g].start[lane] + k] = slice;   // pass 2, on the decode threads
//   arena.HandOver(layout, {&instructions, &dma}, {merged_instr, merged_dma}, &first);
//
// Memory: the slices are reserved on huge pages, their pages faulted on all the import's threads
// (internal::PrefaultParallel), then value-initialized by the trace's vector (AppendSlices) and
// written once by the decode threads (a separate arena copied into the trace cost a second
// round of fresh pages and a copy of every slice). Thread safety: the arena's slices may be written
// from several threads at distinct indices; the rest is one thread, and nothing else may add slices
// to the trace in between.
#ifndef OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_
#define OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::neuron {

// One row group of a big table, as the first pass found it.
struct GroupLanes {
  std::vector<uint32_t> tracks;  // local lane -> trace track
  std::vector<uint32_t> counts;  // local lane -> rows
  std::vector<uint64_t> start;   // local lane -> arena index of its first row (LayOut)
  std::vector<StringId> names;   // dictionary index -> slice name
  // row -> local lane, one byte a row when the row group has at most 256 lanes (as a profile's
  // engines and queues do), else four; freed once the row group's slices are written.
  std::vector<uint8_t> lane_of_row8;
  std::vector<uint32_t> lane_of_row32;
  uint32_t Lane(size_t row) const {
    return lane_of_row32.empty() ? lane_of_row8[row] : lane_of_row32[row];
  }
  void SetLanes(const std::vector<uint32_t>& lanes, size_t lane_count);
  void FreeLanes() {
    std::vector<uint8_t>().swap(lane_of_row8);
    std::vector<uint32_t>().swap(lane_of_row32);
  }
};

struct TrackLayout {
  std::vector<uint64_t> begin;  // track -> arena index of its first slice
  std::vector<uint64_t> rows;   // track -> slices
  uint64_t total = 0;
};

// Places every lane of every row group of `tables` (in that order) in one arena: tracks in index
// order, each track's rows in table order, then row order. Sets each GroupLanes::start.
TrackLayout LayOut(const std::vector<std::vector<GroupLanes>*>& tables, size_t num_tracks);

class SliceArena {
 public:
  SliceArena() = default;
  SliceArena(const SliceArena&) = delete;
  SliceArena& operator=(const SliceArena&) = delete;
  ~SliceArena();

  // Appends room for `n` slices to `trace` (default slices, to be overwritten), their memory
  // first touched on `threads` threads; false when the system refuses the memory.
  bool Allocate(size_t n, Trace* trace, int threads = 1);
  Slice* data() { return data_; }

  // Keeps the slices of the first `merged[i]` row groups of each table, tracks in index order:
  // all of them when every row group was written, else what the tables held before the first that
  // was not (moved down over the rest, which the trace drops). (*first)[t]: the trace index of
  // track t's first slice (kNone for tracks with none).
  void HandOver(const TrackLayout& layout, const std::vector<std::vector<GroupLanes>*>& tables,
                const std::vector<size_t>& merged, std::vector<uint32_t>* first);

 private:
  Trace* trace_ = nullptr;
  Slice* data_ = nullptr;
  size_t base_ = 0;  // the trace index of data_[0]
};

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_
