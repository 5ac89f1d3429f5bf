// Per-track slice staging (see slice_stage.h).
#include "import/kineto/slice_stage.h"

#include <algorithm>
#include <cstdint>
#include <new>

#include "base/huge_array.h"

#if defined(__unix__)
#include <sys/mman.h>
#endif

namespace opscope::import {
namespace {

// Chunks start small (a trace may have many thousands of short tracks) and double up to 2 MiB.
// Small ones come from the heap; from 64 KiB on they are mapped, and 2 MiB ones are backed by
// huge pages where the kernel allows (see Allocate).
constexpr size_t kFirstChunkSlices = 8;
using internal::kHugePageBytes;
constexpr size_t kMaxChunkSlices = kHugePageBytes / sizeof(Slice);
constexpr size_t kMappedChunkSlices = (size_t{64} << 10) / sizeof(Slice);
// A track's chunks ask for huge pages from its second 2 MiB chunk on (it then holds 4 MiB of
// slices, ~20 MB of JSON), or from its first once the stage holds kHugeStageSlices (4 MiB): a huge
// page is resident as a whole once touched, so a track's partly filled tail chunk costs up to 2 MiB
// more than with 4 KiB pages. Asked for every 2 MiB chunk, that was 0.08-0.13x of a 15 MB trace's
// JSON (its longest track ends in one such chunk, resident in full whenever the mapping held an
// aligned huge page).
constexpr size_t kHugeFromChunk = [] {
  size_t chunk = 0;
  for (size_t c = kFirstChunkSlices; c < kMaxChunkSlices; c *= 2) ++chunk;
  return chunk + 1;
}();
constexpr size_t kHugeStageSlices = size_t{1} << 16;
// Spare chunks (PrepareSpare) only once the stage holds 16 MiB of slices (a trace of ~90 MB of
// JSON and more): their up to kSpareChunks x 2 MiB, resident while the stage grows, were 0.05-0.08x
// of a 53 MB trace's JSON and put its peak over 0.5x at 2 and 8 threads.
constexpr size_t kSpareStageSlices = (size_t{16} << 20) / sizeof(Slice);

}  // namespace

// Chunks are mapped directly so that releasing one returns its pages to the system at once,
// whatever the allocator's thresholds (a freed heap chunk in the middle of the heap would stay
// resident, doubling peak memory while the stage is emptied).
Slice* SliceStage::Allocate(size_t slices, bool huge) {
#if defined(__unix__)
  if (slices < kMappedChunkSlices) {
    return static_cast<Slice*>(::operator new(slices * sizeof(Slice)));
  }
  if (huge && slices == kMaxChunkSlices) {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (!spares_.empty()) {
      Slice* spare = spares_.back();
      spares_.pop_back();
      return spare;
    }
  }
  void* p = mmap(nullptr, slices * sizeof(Slice), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  // One fault per 2 MiB instead of per 4 KiB: the stage is written once, in order, by the merging
  // thread, where a trap per page was most of its kernel time. Only whole chunks of long tracks
  // are asked for, so at most one partly filled huge page per track of 4 MiB or more.
  if (huge && slices * sizeof(Slice) == kHugePageBytes) madvise(p, kHugePageBytes, MADV_HUGEPAGE);
#endif
  return static_cast<Slice*>(p);
#else
  (void)huge;
  return static_cast<Slice*>(::operator new(slices * sizeof(Slice)));
#endif
}

void SliceStage::Release(Slice* data, size_t slices) {
#if defined(__unix__)
  if (slices < kMappedChunkSlices) {
    ::operator delete(data);
    return;
  }
  munmap(data, slices * sizeof(Slice));
#else
  (void)slices;
  ::operator delete(data);
#endif
}

void SliceStage::PrepareSpare() {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE) && defined(MADV_HUGEPAGE)
  if (!large_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (spares_.size() >= kSpareChunks) return;
  }
  void* p =
      mmap(nullptr, kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // the merging thread maps its own, and reports a failure
  madvise(p, kHugePageBytes, MADV_HUGEPAGE);
  madvise(p, kHugePageBytes, MADV_POPULATE_WRITE);
  std::lock_guard<std::mutex> lock(spare_mu_);
  if (spares_.size() >= kSpareChunks) {
    munmap(p, kHugePageBytes);
    return;
  }
  spares_.push_back(static_cast<Slice*>(p));
#endif
}

void SliceStage::ReleaseSpares() {
  std::lock_guard<std::mutex> lock(spare_mu_);
  for (Slice* p : spares_) Release(p, kMaxChunkSlices);
  spares_.clear();
}

SliceStage::~SliceStage() {
  ReleaseSpares();
  tracks_.push_back(std::move(no_track_));
  for (TrackList& list : tracks_) {
    for (const Chunk& c : list.chunks) Release(c.data, c.capacity);
  }
}

void SliceStage::AddSlow(const Slice& s) {
  if (size_ >= kSpareStageSlices && !large_.load(std::memory_order_relaxed)) {
    large_.store(true, std::memory_order_relaxed);
  }
  if (s.track == kNone || s.track >= (uint32_t{1} << 30)) {
    Append(&no_track_, s, size_ >= kHugeStageSlices);
    return;
  }
  if (s.track >= tracks_.size()) tracks_.resize(static_cast<size_t>(s.track) + 1);
  Append(&tracks_[s.track], s, size_ >= kHugeStageSlices);
}

void SliceStage::Append(TrackList* list, const Slice& s, bool large_stage) {
  if (list->used < list->capacity) {
    list->tail[list->used++] = s;
    return;
  }
  if (!list->chunks.empty()) list->chunks.back().used = list->used;
  const size_t capacity =
      list->chunks.empty() ? kFirstChunkSlices : std::min(list->capacity * 2, kMaxChunkSlices);
  Slice* data = Allocate(capacity, large_stage || list->chunks.size() >= kHugeFromChunk);
  list->chunks.push_back({data, capacity, 0});
  list->tail = data;
  list->capacity = capacity;
  list->tail[0] = s;
  list->used = 1;
}

namespace {

// Faults in, with one call, the pages of the trace's reserved slice storage the next `count`
// slices will fill (instead of one trap per page as they are copied). Only what is about to be
// written, so peak memory is unchanged; a kernel without MADV_POPULATE_WRITE just faults as usual.
void PrefaultNextSlices(const Trace& trace, size_t count) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  const auto& slices = trace.slices();
  if (count * sizeof(Slice) < (size_t{64} << 10) || slices.capacity() < slices.size() + count) {
    return;
  }
  const uintptr_t page = 4096;
  const uintptr_t from =
      (reinterpret_cast<uintptr_t>(slices.data() + slices.size()) + page - 1) & ~(page - 1);
  const uintptr_t to =
      reinterpret_cast<uintptr_t>(slices.data() + slices.size() + count) & ~(page - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#else
  (void)trace;
  (void)count;
#endif
}

// Asks for huge pages for the trace's reserved slice storage when it is large (filled in order by
// MoveTo, each page faulted just before it is written). A huge page is faulted whole, ahead of the
// copy, while the stage still holds the slices it will receive: up to 2 MiB above the one-copy
// peak, which is noise for a large array but was 0.08x of a 15 MB trace's JSON (its 2.9 MB array
// holds one aligned huge page when the allocation lands well), hence 8 MiB.
void AdviseHugePages(const Trace& trace) {
  const auto& slices = trace.slices();
  if ((slices.capacity() - slices.size()) * sizeof(Slice) < 4 * kHugePageBytes) return;
  internal::AdviseHugePages(slices.data() + slices.size(),
                            (slices.capacity() - slices.size()) * sizeof(Slice));
}

}  // namespace

void SliceStage::Drain(TrackList* list, Trace* trace) {
  if (!list->chunks.empty()) list->chunks.back().used = list->used;
  for (const Chunk& c : list->chunks) {
    PrefaultNextSlices(*trace, c.used);
    trace->AddSlices(std::span<const Slice>(c.data, c.used));
    Release(c.data, c.capacity);
  }
  *list = TrackList();
}

void SliceStage::MoveTo(Trace* trace) {
  ReleaseSpares();  // before the trace's array is faulted in: peak memory as without them
  large_.store(false, std::memory_order_relaxed);
  trace->ReserveSlices(trace->slices().size() + size_);
  AdviseHugePages(*trace);
  for (TrackList& list : tracks_) Drain(&list, trace);
  Drain(&no_track_, trace);
  tracks_.clear();
  size_ = 0;
}

}  // namespace opscope::import
