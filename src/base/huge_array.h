// Large arrays of the trace model on transparent huge pages.
//
// The model's big arrays (flow endpoints and flows, arg offsets, Finalize's index arrays) are
// written once, in order, into fresh memory. With 4 KiB pages every page is a trap into the kernel
// on first touch, and a vector that grows by doubling copies into fresh memory at every step:
// a 4 KiB fault costs ~15-30 us on the development VM (a 64 MiB memset: ~500 ms against ~10 ms on
// huge pages), which made faults ~20% of a one-thread import's CPU time. Asking for huge pages
// (madvise(MADV_HUGEPAGE), honoured where /sys/kernel/mm/transparent_hugepage/enabled is
// `madvise` or `always`) makes it one fault per 2 MiB. Only arrays of kHugeArrayMinBytes or more
// ask: a huge page is resident as a whole once touched, so an array's partly filled last one costs
// up to 2 MiB more than with 4 KiB pages, noise for a large array, not for a small trace.
//
// Storage stays std::vector with the standard allocator (the model's accessors return vectors);
// these helpers only choose when it grows and advise the new storage before it is written.
#ifndef OPSCOPE_BASE_HUGE_ARRAY_H_
#define OPSCOPE_BASE_HUGE_ARRAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory_resource>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace opscope::internal {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugeArrayMinBytes = size_t{2} << 20;
// HugePageMemoryResource's blocks from this size on start on a 2 MiB boundary: below it, the up to
// 2 MiB a huge page adds past a block's end (and growth by doubling keeps two blocks live) were
// 0.03-0.06x of a 53 MB trace's JSON in the import's peak; from 8 MiB on, under a quarter of it.
inline constexpr size_t kHugeResourceMinBytes = size_t{8} << 20;

// Asks for huge pages for the whole 2 MiB pages inside [data, data + bytes); nothing below
// kHugeArrayMinBytes or where the kernel has no such advice. Call before the memory is touched.
inline void AdviseHugePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugeArrayMinBytes) return;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t from = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t to = (begin + bytes) & ~(kHugePageBytes - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// Has the kernel back the pages of [data, data + bytes) now, on `threads` threads (ParallelFor
// over 2 MiB parts, madvise(MADV_POPULATE_WRITE)); their contents are not changed. A first touch
// is a page fault, and faults are most of what fresh memory costs: a 704 MB array first touched
// by one thread took 0.9-1.2 s on the development VM when its host had to back the memory anew,
// by two threads 0.3-0.6 s, and 0.04 s to memset once backed. For storage a caller then writes
// whole on one thread (a vector's resize). Nothing below kHugeArrayMinBytes, with threads < 2
// (a serial first write costs the same) or where the kernel cannot populate (left to fault).
void PrefaultParallel(const void* data, size_t bytes, int threads);

// Makes room for `n` elements in *v (a no-op when it has it). A large new storage is advised
// before the old elements are copied in, so the copy faults per 2 MiB too.
template <typename T>
void ReserveHuge(std::vector<T>* v, size_t n) {
  if (n <= v->capacity()) return;
  if (n * sizeof(T) < kHugeArrayMinBytes) {
    v->reserve(n);
    return;
  }
  std::vector<T> bigger;
  bigger.reserve(n);
  AdviseHugePages(bigger.data(), n * sizeof(T));
  bigger.insert(bigger.end(), v->begin(), v->end());
  v->swap(bigger);
}

// Room for `more` elements past size(), growing by at least doubling (amortized O(1) per element,
// as push_back).
template <typename T>
void GrowHuge(std::vector<T>* v, size_t more) {
  if (v->capacity() - v->size() >= more) return;
  ReserveHuge(v, std::max({v->size() + more, 2 * v->capacity(), size_t{16}}));
}

// push_back through GrowHuge.
template <typename T>
void PushBackHuge(std::vector<T>* v, const T& value) {
  if (v->size() == v->capacity()) GrowHuge(v, 1);
  v->push_back(value);
}

// *v = `n` copies of `value`, in storage advised before it is written.
template <typename T>
void AssignHuge(std::vector<T>* v, size_t n, const T& value) {
  if (n > v->capacity()) {
    v->clear();
    ReserveHuge(v, n);
  }
  v->assign(n, value);
}

// A memory resource for arrays that grow large and are written once, in order (std::pmr
// containers). A block of kHugeResourceMinBytes or more starts on a 2 MiB boundary and is advised
// for huge pages whole, so all of it faults once per 2 MiB: AdviseHugePages can only advise the
// aligned interior of a block from operator new, and the up to 2 MiB at each end of it (4 KiB
// faults, ~25 us each on the development VM) were most of the faults left in growing vectors.
// Blocks come from malloc (posix_memalign), so freed ones are reused by later allocations as any
// heap block is (the CLI keeps its heap, tools/main.cc); smaller ones from operator new. Stateless
// and thread-safe; HugePageResource() is the one instance.
class HugePageMemoryResource final : public std::pmr::memory_resource {
 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
#if defined(__linux__)
    if (bytes >= kHugeResourceMinBytes && alignment <= kHugePageBytes) {
      void* p = nullptr;
      if (posix_memalign(&p, kHugePageBytes, bytes) != 0) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
      // The last huge page may reach past the block into free heap, which later blocks reuse.
      madvise(p, (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1), MADV_HUGEPAGE);
#endif
      return p;
    }
#endif
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
#if defined(__linux__)
    if (bytes >= kHugeResourceMinBytes && alignment <= kHugePageBytes) {
      free(p);
      return;
    }
#endif
    ::operator delete(p, std::align_val_t(alignment));
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

// Never destroyed: a static object's arrays may be released after static destruction begins.
inline std::pmr::memory_resource* HugePageResource() {
  static HugePageMemoryResource* const resource = new HugePageMemoryResource();
  return resource;
}

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_HUGE_ARRAY_H_
