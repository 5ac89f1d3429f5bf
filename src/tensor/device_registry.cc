// Devices, dtypes, the backend registry, the built-in meta backend and CapacityAllocator.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <mutex>

#include "opscope/device.h"
#include "opscope/record.h"
#include "opscope/tensor.h"

namespace opscope {
namespace {

// Shapes only: no memory, kernels and copies do nothing.
class MetaBackend final : public DeviceBackend {
 public:
  DeviceType type() const override { return DeviceType::kMeta; }
  std::string_view name() const override { return "meta"; }
  void* Allocate(int, size_t) override { return nullptr; }
  void Free(int, void*, size_t) override {}
  void CopyFromHost(const TensorRef&, const void*, uint64_t) override {}
  void CopyToHost(void*, const TensorRef&, uint64_t) override {}
  void Execute(const OpCall&) override {}
};

struct Registry {
  std::mutex mu;
  std::array<DeviceBackend*, 3> by_type{};
  // Every backend ever registered: replaced ones stay alive for the storages they own.
  std::vector<std::unique_ptr<DeviceBackend>> owned;
};

Registry& GetRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry;  // never destroyed: storages may be freed during static destruction
    r->owned.push_back(std::make_unique<MetaBackend>());
    r->by_type[static_cast<int>(DeviceType::kMeta)] = r->owned.back().get();
    return r;
  }();
  return *registry;
}

}  // namespace

std::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kPrivateUse1:
      return "neuron";
    case DeviceType::kMeta:
      return "meta";
  }
  return "unknown";
}

Device::Device(std::string_view spec) {
  std::string_view kind = spec;
  int idx = 0;
  if (size_t colon = spec.find(':'); colon != std::string_view::npos) {
    kind = spec.substr(0, colon);
    std::string_view num = spec.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
    if (num.empty() || ec != std::errc() || ptr != num.data() + num.size() || idx < 0) {
      throw TensorError(fmt::format("Invalid device string: '{}'", spec));
    }
  }
  if (kind == "cpu") {
    type = DeviceType::kCPU;
  } else if (kind == "neuron" || kind == "privateuseone") {
    type = DeviceType::kPrivateUse1;
  } else if (kind == "meta") {
    type = DeviceType::kMeta;
  } else {
    throw TensorError(fmt::format(
        "Expected one of cpu, neuron, privateuseone, meta device type at start of device "
        "string: {}",
        spec));
  }
  index = idx;
}

std::string Device::str() const {
  if (type == DeviceType::kCPU || type == DeviceType::kMeta) {
    return std::string(DeviceTypeName(type));
  }
  return fmt::format("{}:{}", DeviceTypeName(type), index);
}

size_t ElementSize(DType dtype) { return dtype == DType::kBFloat16 ? 2 : 4; }

std::string_view DTypeName(DType dtype) {
  return dtype == DType::kBFloat16 ? "c10::BFloat16" : "float";
}

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= sizes[i];
  return n;
}

bool TensorRef::is_contiguous() const {
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;
    if (sizes[i] == 0) return true;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

TensorRef MakeTensorRef(const Tensor& t) {
  TensorRef r;
  if (!t.defined()) return r;
  if (t.dim() > kMaxDims) {
    throw TensorError(fmt::format("tensors have at most {} dims, got {}", kMaxDims, t.dim()));
  }
  r.data = t.storage()->data();
  r.dtype = t.dtype();
  r.device = t.device();
  r.ndim = static_cast<int32_t>(t.dim());
  for (int i = 0; i < r.ndim; ++i) {
    r.sizes[i] = t.sizes()[i];
    r.strides[i] = t.strides()[i];
  }
  r.offset = t.storage_offset();
  return r;
}

std::unique_ptr<DeviceProgram> DeviceBackend::BuildProgram(const ProgramGraph&, std::string_view,
                                                           ProgramKernel) {
  throw TensorError(fmt::format("the {} backend does not build device programs", name()));
}

void DeviceBackend::ExecuteProgram(const DeviceProgram&, std::span<const TensorRef>,
                                   std::span<const TensorRef>, uint64_t) {
  throw TensorError(fmt::format("the {} backend does not run device programs", name()));
}

void RegisterBackend(std::unique_ptr<DeviceBackend> backend) {
  if (!backend) throw TensorError("RegisterBackend: null backend");
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  const auto slot = static_cast<size_t>(backend->type());
  r.owned.push_back(std::move(backend));
  r.by_type.at(slot) = r.owned.back().get();
}

DeviceBackend* FindBackend(DeviceType type) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  return r.by_type.at(static_cast<size_t>(type));
}

DeviceBackend& GetBackend(DeviceType type) {
  if (DeviceBackend* b = FindBackend(type)) return *b;
  const char* init = type == DeviceType::kCPU
                         ? "opscope::RegisterCpuBackend() (link opscope_device_cpu)"
                         : "opscope::RegisterNeuronBackend() (link opscope_device_neuron)";
  throw TensorError(fmt::format("no backend is registered for device type '{}': call {} first",
                                DeviceTypeName(type), init));
}

DeviceBackend* FindBackendByName(std::string_view name) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  for (DeviceBackend* b : r.by_type) {
    if (b != nullptr && b->name() == name) return b;
  }
  return nullptr;
}

std::string RegisteredBackendNames() {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  std::string names;
  for (DeviceBackend* b : r.by_type) {
    if (b == nullptr) continue;
    if (!names.empty()) names += ", ";
    names += b->name();
  }
  return names;
}

std::vector<Device> RegisteredDevices() {
  std::vector<Device> out;
  for (DeviceType t : {DeviceType::kCPU, DeviceType::kPrivateUse1}) {
    if (DeviceBackend* b = FindBackend(t)) {
      for (int i = 0; i < b->device_count(); ++i) out.emplace_back(t, i);
    }
  }
  return out;
}

std::string FormatBytes(size_t bytes) {
  constexpr double kKiB = 1024.0;
  const double b = static_cast<double>(bytes);
  if (b >= kKiB * kKiB * kKiB) return fmt::format("{:.2f} GiB", b / (kKiB * kKiB * kKiB));
  if (b >= kKiB * kKiB) return fmt::format("{:.2f} MiB", b / (kKiB * kKiB));
  if (b >= kKiB) return fmt::format("{:.2f} KiB", b / kKiB);
  return fmt::format("{} bytes", bytes);
}

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

CapacityAllocator::CapacityAllocator(Device device, size_t capacity_bytes, size_t alignment)
    : device_(device),
      alignment_(alignment),
      capacity_(capacity_bytes),
      cache_limit_(DefaultCacheLimit(capacity_bytes)) {}

CapacityAllocator::~CapacityAllocator() {
  std::lock_guard lock(mu_);
  ReleaseCacheLocked();
}

void* CapacityAllocator::Allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const size_t rounded = Round(nbytes);
  void* p = nullptr;
  MemoryUsage usage;
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(rounded); it != cache_.end()) {
      p = it->second;
      cache_.erase(it);
      cached_ -= rounded;
      allocated_ += rounded;
      peak_ = std::max(peak_, allocated_);
      if (MemoryProfilingActive()) [[unlikely]]
        usage = UsageLocked(p, int64_t(rounded));
    } else {
      const size_t held = allocated_ + pending_;
      if (rounded > capacity_ || held + cached_ > capacity_ - rounded) ReleaseCacheLocked();
      if (rounded > capacity_ || held > capacity_ - rounded) {
        const size_t free_bytes = capacity_ > held ? capacity_ - held : 0;
        throw OutOfMemoryError(fmt::format(
            "{} out of memory: tried to allocate {} (capacity {}, {} already allocated, {} free)",
            device_.str(), FormatBytes(nbytes), FormatBytes(capacity_), FormatBytes(held),
            FormatBytes(free_bytes)));
      }
      allocated_ += rounded;
      peak_ = std::max(peak_, allocated_);
    }
  }
  if (p == nullptr) {
    p = std::aligned_alloc(alignment_, rounded);
    std::lock_guard lock(mu_);
    if (p == nullptr) {
      allocated_ -= rounded;
      throw OutOfMemoryError(fmt::format("{} out of memory: the host refused {} ({} allocated)",
                                         device_.str(), FormatBytes(nbytes),
                                         FormatBytes(allocated_)));
    }
    if (MemoryProfilingActive()) [[unlikely]]
      usage = UsageLocked(p, int64_t(rounded));
  }
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
  return p;
}

void CapacityAllocator::Free(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  const size_t rounded = Round(nbytes);
  MemoryUsage usage;
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    allocated_ -= rounded;  // one event, with the totals after the block went back
    cached = rounded >= kMinCachedBlock && cached_ + rounded <= cache_limit_;
    if (cached) {
      cache_.emplace(rounded, ptr);
      cached_ += rounded;
    }
    if (MemoryProfilingActive()) [[unlikely]]
      usage = UsageLocked(ptr, -int64_t(rounded));
  }
  if (!cached) std::free(ptr);
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
}

void CapacityAllocator::Retire(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  const size_t rounded = Round(nbytes);
  MemoryUsage usage;
  {
    std::lock_guard lock(mu_);
    allocated_ -= rounded;
    pending_ += rounded;
    if (MemoryProfilingActive()) [[unlikely]]
      usage = UsageLocked(ptr, -int64_t(rounded));
  }
  if (usage.bytes != 0) [[unlikely]]
    RecordMemoryUsage(usage);
}

void CapacityAllocator::Release(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  const size_t rounded = Round(nbytes);
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    pending_ -= rounded;
    cached = rounded >= kMinCachedBlock && cached_ + rounded <= cache_limit_;
    if (cached) {
      cache_.emplace(rounded, ptr);
      cached_ += rounded;
    }
  }
  if (!cached) std::free(ptr);
}

MemoryUsage CapacityAllocator::UsageLocked(void* ptr, int64_t bytes) const {
  MemoryUsage u;
  u.device_type = C10DeviceType(device_.type);
  u.device_id = device_.type == DeviceType::kCPU ? -1 : device_.index;
  u.addr = reinterpret_cast<uintptr_t>(ptr);
  u.bytes = bytes;
  u.total_allocated = static_cast<int64_t>(allocated_);
  u.total_reserved = static_cast<int64_t>(allocated_ + pending_ + cached_);
  return u;
}

void CapacityAllocator::set_capacity(size_t capacity_bytes) {
  std::lock_guard lock(mu_);
  capacity_ = capacity_bytes;
}

void CapacityAllocator::set_cache_limit(size_t bytes) {
  std::lock_guard lock(mu_);
  cache_limit_ = bytes;
  if (cached_ > cache_limit_) ReleaseCacheLocked();
}

void CapacityAllocator::ReleaseCache() {
  std::lock_guard lock(mu_);
  ReleaseCacheLocked();
}

void CapacityAllocator::ReleaseCacheLocked() {
  for (auto& [size, block] : cache_) std::free(block);
  cache_.clear();
  cached_ = 0;
}

MemoryStats CapacityAllocator::stats() const {
  std::lock_guard lock(mu_);
  return {capacity_, allocated_, peak_, cached_, allocated_ + pending_ + cached_};
}

}  // namespace opscope
