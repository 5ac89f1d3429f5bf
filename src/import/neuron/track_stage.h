// Where the slices of a device profile's big tables (Instruction, DmaPacket) go before the trace
// takes them: one arena laid out as the trace will hold them, grouped by track, each track in the
// order its rows come in the tables (Instruction's, then the DMA table's).
//
// The tables' rows interleave the engines and queues (a row group holds every engine's
// instructions of its time range), so slices added to the trace as read would leave Finalize a
// sort by track of tens of millions of 64-byte slices. A first pass over the lane columns counts
// each row group's rows per lane (GroupLanes); LayOut then gives every lane of every row group its
// place in the arena, so the decode threads write each slice once, at its final place, in any
// order, and the trace receives them already grouped: Finalize's check finds nothing to move.
//
//   std::vector<GroupLanes> instructions, dma;        // pass 1: tracks and counts per row group
//   TrackLayout layout = LayOut({&instructions, &dma});
//   SliceArena arena;
//   arena.Allocate(layout.rows);
//   arena.data()[instructions[g].start[lane] + k] = slice;   // pass 2, on the decode threads
//   arena.HandOver(layout, {&instructions, &dma}, {merged_instr, merged_dma}, trace, &first);
//
// Memory: the arena is mapped on huge pages and given back to the system front to back while it
// is handed over, so the hand-over holds little more than the slices once. Thread safety: the
// arena's slices may be written from several threads at distinct indices; the rest is one thread.
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

  // Maps room for `n` slices (nothing written yet); false when the system refuses the memory.
  bool Allocate(size_t n);
  Slice* data() { return data_; }

  // Adds the slices of the first `merged[i]` row groups of each table to `trace` (AddSlices),
  // tracks in index order: all of them when every row group was written, else what the tables
  // held before the first that was not. (*first)[t]: the trace index of track t's first slice
  // (kNone for tracks with none). Frees the arena.
  void HandOver(const TrackLayout& layout, const std::vector<std::vector<GroupLanes>*>& tables,
                const std::vector<size_t>& merged, Trace* trace, std::vector<uint32_t>* first);

 private:
  // AddSlices of [begin, begin + n), then gives back the whole pages before its end.
  void Append(uint64_t begin, uint64_t n, Trace* trace);
  void Release();

  Slice* data_ = nullptr;
  size_t bytes_ = 0;
  size_t released_ = 0;  // bytes from the start already given back
};

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_
