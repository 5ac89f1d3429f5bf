// Devices, dtypes, the backend registry and the built-in meta backend.
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

}  // namespace opscope
