// PodBuffer's memory: malloc for small arrays, huge-page mappings grown by mremap for large ones.
#include "import/parquet/pod_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace opscope::parquet::pod_memory {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

bool Mapped(size_t capacity) { return capacity >= kMapBytes; }

size_t RoundUp(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

void AdviseHuge(void* p, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// A fresh mapping of `size` bytes (a multiple of kHugePage) that starts on a 2 MiB boundary, so
// each of its 2 MiB can be one transparent huge page: a mapping at whatever address mmap picks
// held none whole below 4 MiB (a 1-2 MiB buffer was 256-512 faults of 4 KiB, not one), and a
// report on a 72 MB Neuron profile took some 9,000 page faults in the decoders' buffers.
void* MapAligned(size_t size) {
  const size_t span = size + kHugePage;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return MAP_FAILED;
  char* const raw = static_cast<char*>(m);
  char* const aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) &
                                                ~uintptr_t{kHugePage - 1});
  if (aligned > raw) munmap(raw, static_cast<size_t>(aligned - raw));
  const size_t tail = static_cast<size_t>((raw + span) - (aligned + size));
  if (tail > 0) munmap(aligned + size, tail);
  AdviseHuge(aligned, size);  // before anything is written: a page touched first stays 4 KiB
  return aligned;
}

}  // namespace

void* Resize(void* p, size_t old_capacity, size_t used, size_t bytes, size_t* capacity) {
  if (bytes < kMapBytes && !(p != nullptr && Mapped(old_capacity))) {
    void* q = std::realloc(p, bytes);
    if (q == nullptr) throw std::bad_alloc();
    *capacity = bytes;
    return q;
  }
  const size_t size = RoundUp(bytes);
  void* q = MAP_FAILED;
  if (p != nullptr && Mapped(old_capacity)) {
    // In place when the address space after the block is free; else its pages move (not their
    // bytes) to the front of a new aligned mapping.
    q = mremap(p, old_capacity, size, 0);
    if (q == MAP_FAILED) {
      q = MapAligned(size);
      if (q == MAP_FAILED) throw std::bad_alloc();
      if (mremap(p, old_capacity, old_capacity, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED) {
        std::memcpy(q, p, used);
        munmap(p, old_capacity);
      }
    }
  } else {
    q = MapAligned(size);
    if (q == MAP_FAILED) throw std::bad_alloc();
    if (p != nullptr) {
      std::memcpy(q, p, used);  // from a malloc block: under kMapBytes
      std::free(p);
    }
  }
  AdviseHuge(q, size);  // a block grown in place: its new part (the mapping keeps the advice)
  *capacity = size;
  return q;
}

void Free(void* p, size_t capacity) {
  if (p == nullptr) return;
  if (Mapped(capacity)) {
    munmap(p, capacity);
  } else {
    std::free(p);
  }
}

}  // namespace opscope::parquet::pod_memory
