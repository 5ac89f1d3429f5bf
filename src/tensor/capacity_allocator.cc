// CapacityAllocator: capacity-checked, aligned host memory with a cache of freed large blocks and
// "[memory]" events under profile_memory (device.h). Its state lives here, behind the public class.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "opscope/device.h"
#include "opscope/record.h"

namespace opscope {
namespace {

constexpr size_t kMinCachedBlock = size_t{256} << 10;

size_t DefaultCacheLimit(size_t capacity) {
#ifdef OPSCOPE_SANITIZE
  (void)capacity;
  return 0;  // let AddressSanitizer see every use after free
#else
  return std::min(capacity / 8, size_t{512} << 20);
#endif
}

}  // namespace

struct CapacityAllocator::State {
  State(Device d, size_t capacity_bytes, size_t align)
      : device(d),
        alignment(align),
        capacity(capacity_bytes),
        cache_limit(DefaultCacheLimit(capacity_bytes)) {}

  size_t Round(size_t nbytes) const { return (nbytes + alignment - 1) / alignment * alignment; }

  // The event of one allocation (bytes > 0) or free (bytes < 0) with the totals now; mu held.
  MemoryUsage UsageLocked(void* ptr, int64_t bytes) const {
    MemoryUsage u;
    u.device_type = C10DeviceType(device.type);
    u.device_id = device.type == DeviceType::kCPU ? -1 : device.index;
    u.addr = reinterpret_cast<uintptr_t>(ptr);
    u.bytes = bytes;
    u.total_allocated = static_cast<int64_t>(allocated);
    u.total_reserved = static_cast<int64_t>(allocated + pending + cached);
    return u;
  }

  // Keeps a block of `rounded` bytes for reuse when it is large and the cache has room; mu held.
  bool CacheLocked(void* ptr, size_t rounded) {
    if (rounded < kMinCachedBlock || cached + rounded > cache_limit) return false;
    cache.emplace(rounded, ptr);
    cached += rounded;
    return true;
  }

  void ReleaseCacheLocked() {
    for (auto& [size, block] : cache) std::free(block);
    cache.clear();
    cached = 0;
  }

  const Device device;
  const size_t alignment;
  mutable std::mutex mu;
  size_t capacity;
  size_t allocated = 0;  // live blocks, rounded up to the alignment
  size_t pending = 0;    // retired blocks not yet released
  size_t peak = 0;
  size_t cached = 0;  // bytes in cache
  size_t cache_limit;
  std::multimap<size_t, void*> cache;  // rounded size -> block
};

CapacityAllocator::CapacityAllocator(Device device, size_t capacity_bytes, size_t alignment)
    : state_(std::make_unique<State>(device, capacity_bytes, alignment)) {}

CapacityAllocator::~CapacityAllocator() {
  std::lock_guard lock(state_->mu);
  state_->ReleaseCacheLocked();
}

void* CapacityAllocator::Allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  State& s = *state_;
  const size_t rounded = s.Round(nbytes);
  void* p = nullptr;
  MemoryUsage usage;
  {
    std::lock_guard lock(s.mu);
    if (auto it = s.cache.find(rounded); it != s.cache.end()) {
      p = it->second;
      s.cache.erase(it);
      s.cached -= rounded;
      s.allocated += rounded;
      s.peak = std::max(s.peak, s.allocated);
      if (MemoryProfilingActive()) [[unlikely]]
        usage = s.UsageLocked(p, int64_t(rounded));
    } else {
      const size_t held = s.allocated + s.pending;
      if (rounded > s.capacity || held + s.cached > s.capacity - rounded) s.ReleaseCacheLocked();
      if (rounded > s.capacity || held > s.capacity - rounded) {
        const size_t free_bytes = s.capacity > held ? s.capacity - held : 0;
        throw OutOfMemoryError(fmt::format(
            "{} out of memory: tried to allocate {} (capacity {}, {} already allocated, {} free)",
            s.device.str(), FormatBytes(nbytes), FormatBytes(s.capacity), FormatBytes(held),
            FormatBytes(free_bytes)));
      }
      s.allocated += rounded;
      s.peak = std::max(s.peak, s.allocated);
    }
  }
  if (p == nullptr) {
    p = std::aligned_alloc(s.alignment, rounded);
    std::lock_guard lock(s.mu);
    if (p == nullptr) {
      s.allocated -= rounded;
      throw OutOfMemoryError(fmt::format("{} out of memory: the host refused {} ({} allocated)",
                                         s.device.str(), FormatBytes(nbytes),
                                         FormatBytes(s.allocated)));
    }
    if (MemoryProfilingActive()) [[unlikely]]
      usage = s.UsageLocked(p, int64_t(rounded));
  }
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
  return p;
}

void CapacityAllocator::Free(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  State& s = *state_;
  const size_t rounded = s.Round(nbytes);
  MemoryUsage usage;
  bool cached = false;
  {
    std::lock_guard lock(s.mu);
    s.allocated -= rounded;  // one event, with the totals after the block went back
    cached = s.CacheLocked(ptr, rounded);
    if (MemoryProfilingActive()) [[unlikely]]
      usage = s.UsageLocked(ptr, -int64_t(rounded));
  }
  if (!cached) std::free(ptr);
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
}

void CapacityAllocator::Retire(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  State& s = *state_;
  const size_t rounded = s.Round(nbytes);
  MemoryUsage usage;
  {
    std::lock_guard lock(s.mu);
    s.allocated -= rounded;
    s.pending += rounded;
    if (MemoryProfilingActive()) [[unlikely]]
      usage = s.UsageLocked(ptr, -int64_t(rounded));
  }
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
}

void CapacityAllocator::Release(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  State& s = *state_;
  const size_t rounded = s.Round(nbytes);
  bool cached = false;
  {
    std::lock_guard lock(s.mu);
    s.pending -= rounded;
    cached = s.CacheLocked(ptr, rounded);
  }
  if (!cached) std::free(ptr);
}

void CapacityAllocator::set_capacity(size_t capacity_bytes) {
  std::lock_guard lock(state_->mu);
  state_->capacity = capacity_bytes;
}

void CapacityAllocator::set_cache_limit(size_t bytes) {
  std::lock_guard lock(state_->mu);
  state_->cache_limit = bytes;
  if (state_->cached > state_->cache_limit) state_->ReleaseCacheLocked();
}

void CapacityAllocator::ReleaseCache() {
  std::lock_guard lock(state_->mu);
  state_->ReleaseCacheLocked();
}

MemoryStats CapacityAllocator::stats() const {
  const State& s = *state_;
  std::lock_guard lock(s.mu);
  return {s.capacity, s.allocated, s.peak, s.cached, s.allocated + s.pending + s.cached};
}

}  // namespace opscope
