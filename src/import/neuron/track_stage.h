// Slices of a device profile's big tables (Instruction, DmaPacket) held per track while the tables
// are read, then handed to the trace grouped by track, each track in the order its slices came.
//
// The tables' rows interleave the engines and queues (a row group holds every engine's
// instructions of its time range), so slices added to the trace as read would leave Finalize a
// sort by track of tens of millions of 64-byte slices: a permutation whose random reads cost more
// than reading the tables. Staged per track, the trace receives them already grouped (each track
// in time order when the table is), and Finalize's check finds nothing to move.
//
//   TrackStage stage;
//   const uint32_t pos = stage.Push(slice);      // its index among its track's staged slices
//   std::vector<uint32_t> first;
//   stage.Flush(trace, &first);                  // slice `pos` of track t is trace slice first[t]
//   + pos
//
// Memory: blocks that grow from 4 Ki to 512 Ki slices per track (32 MiB, allocated and freed
// whole), each block freed as soon as Flush has copied it, so a flush holds little more than the
// slices once. Thread safety: one thread at a time.
#ifndef OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_
#define OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_

#include <cstdint>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::neuron {

class TrackStage {
 public:
  // Appends `s` to the slices of track `s.track`; returns its index among them.
  uint32_t Push(const Slice& s);
  size_t size() const { return size_; }

  // Adds every staged slice to `trace` (AddSlices), tracks in index order, and empties the stage.
  // (*first)[t]: the trace index of track t's first staged slice (kNone for tracks with none).
  void Flush(Trace* trace, std::vector<uint32_t>* first);

 private:
  std::vector<std::vector<std::vector<Slice>>> blocks_;  // by track, in push order
  std::vector<uint32_t> counts_;                         // by track
  size_t size_ = 0;
};

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_TRACK_STAGE_H_
