// Per-track staging of slices while a trace is read.
//
// A large trace's events arrive interleaved across threads and streams; the trace model wants
// them grouped by track. Permuting millions of 64-byte slices into place afterwards costs a cache
// miss per slice, so the importer appends each slice to its track's chunk list here and hands
// them to the trace track by track at the end, one sequential copy, with each chunk's memory
// returned to the system as soon as it is copied (peak memory stays one copy of the slices).
#ifndef OPSCOPE_IMPORT_KINETO_SLICE_STAGE_H_
#define OPSCOPE_IMPORT_KINETO_SLICE_STAGE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import {

class SliceStage {
 public:
  SliceStage() = default;
  SliceStage(const SliceStage&) = delete;
  SliceStage& operator=(const SliceStage&) = delete;
  ~SliceStage();

  // Appends `s` to the list of s.track (slices with an invalid track go to a list of their own,
  // handed over last).
  void Add(const Slice& s) {
    ++size_;
    if (s.track < tracks_.size()) {
      TrackList& list = tracks_[s.track];
      if (list.used < list.capacity) {
        list.tail[list.used++] = s;
        return;
      }
    }
    AddSlow(s);
  }

  // Hands every staged slice to `trace` (AddSlices), track by track in insertion order, and
  // empties the stage. The trace's storage is reserved for exactly what was staged (never from
  // a guess such as the file size).
  void MoveTo(Trace* trace);
  size_t size() const { return size_; }

  // Maps a 2 MiB chunk and faults it in on huge pages, for the stage's next full-size chunk, once
  // the stage is large (kSpareStageSlices) and while fewer than kSpareChunks are ready: the fault
  // (the kernel zeroing 2 MiB) then costs the calling thread, not the merging one that writes the
  // chunk. Thread-safe against Add and the other SliceStage calls on the merging thread; called by
  // the parse threads between chunks.
  void PrepareSpare();
  static constexpr size_t kSpareChunks = 2;

 private:
  struct Chunk {
    Slice* data;
    size_t capacity;
    size_t used;
  };
  struct TrackList {
    std::vector<Chunk> chunks;  // all but the tail chunk are full
    Slice* tail = nullptr;      // == chunks.back().data
    size_t used = 0;            // slices in the tail chunk
    size_t capacity = 0;
  };
  void AddSlow(const Slice& s);
  // `large_stage`: the stage holds enough that a 2 MiB chunk asks for huge pages anyway.
  void Append(TrackList* list, const Slice& s, bool large_stage);
  // `huge`: ask for transparent huge pages (2 MiB chunks only; a spare one when ready).
  Slice* Allocate(size_t slices, bool huge);
  void ReleaseSpares();
  static void Release(Slice* data, size_t slices);
  static void Drain(TrackList* list, Trace* trace);

  std::vector<TrackList> tracks_;   // by track index (dense: the trace hands them out)
  TrackList no_track_;              // slices whose track is not valid
  size_t size_ = 0;                 // slices staged
  std::atomic<bool> large_{false};  // size_ >= kSpareStageSlices (written by the merging thread)
  std::mutex spare_mu_;
  std::vector<Slice*> spares_;  // faulted-in 2 MiB chunks not yet used (guarded by spare_mu_)
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_SLICE_STAGE_H_
