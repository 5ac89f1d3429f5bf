// PodBuffer's memory: malloc for small arrays, huge-page mappings grown by mremap for large ones.
#include "import/parquet/pod_buffer.h"

#include <sys/mman.h>

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
    q = mremap(p, old_capacity, size, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) throw std::bad_alloc();
  } else {
    q = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) throw std::bad_alloc();
    if (p != nullptr) {
      std::memcpy(q, p, used);  // from a malloc block: under kMapBytes
      std::free(p);
    }
  }
  AdviseHuge(q, size);  // before the new pages are touched
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
