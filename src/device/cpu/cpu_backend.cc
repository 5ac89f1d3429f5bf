// The CPU device backend: host memory with a capacity, synchronous kernels.
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>

#include "device/cpu/cpu_kernels.h"

namespace opscope {
namespace cpu {

void RunKernel(const OpCall& call) {
  for (const TensorRef& t : call.outputs) {
    if (t.dtype != DType::kFloat32 && call.kind != OpKind::kCopy) {
      throw TensorError(fmt::format("cpu: {} supports float only", call.name));
    }
  }
  switch (call.kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
      return BinaryKernel(call);
    case OpKind::kRsqrt:
    case OpKind::kSqrt:
    case OpKind::kExp:
    case OpKind::kNeg:
    case OpKind::kSilu:
    case OpKind::kGelu:
      return UnaryKernel(call);
    case OpKind::kSum:
    case OpKind::kMean:
    case OpKind::kAmax:
      return ReduceKernel(call);
    case OpKind::kMm:
    case OpKind::kBmm:
      return MatmulKernel(call);
    case OpKind::kSoftmax:
      return SoftmaxKernel(call);
    case OpKind::kLayerNorm:
      return LayerNormKernel(call);
    case OpKind::kRmsNorm:
      return RmsNormKernel(call);
    case OpKind::kCopy:
      return CopyKernel(call);
    case OpKind::kFill:
      return FillKernel(call);
    case OpKind::kNumKinds:
      break;
  }
  throw TensorError(fmt::format("cpu: no kernel for op kind {}", static_cast<int>(call.kind)));
}

namespace {

size_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return size_t{16} << 30;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

class CpuBackend final : public DeviceBackend {
 public:
  CpuBackend() : allocator_(Device(DeviceType::kCPU), PhysicalMemoryBytes()) {}

  DeviceType type() const override { return DeviceType::kCPU; }
  std::string_view name() const override { return "cpu"; }
  void* Allocate(int, size_t nbytes) override { return allocator_.Allocate(nbytes); }
  void Free(int, void* ptr, size_t nbytes) override { allocator_.Free(ptr, nbytes); }
  MemoryStats memory_stats(int) const override { return allocator_.stats(); }
  void set_memory_capacity(int, size_t bytes) override { allocator_.set_capacity(bytes); }
  void CopyFromHost(const TensorRef& dst, const void* src, uint64_t) override {
    std::memcpy(static_cast<char*>(dst.data) + dst.offset * ElementSize(dst.dtype), src,
                dst.numel() * ElementSize(dst.dtype));
  }
  void CopyToHost(void* dst, const TensorRef& src, uint64_t) override {
    std::memcpy(dst, static_cast<const char*>(src.data) + src.offset * ElementSize(src.dtype),
                src.numel() * ElementSize(src.dtype));
  }
  void Execute(const OpCall& call) override { RunKernel(call); }

 private:
  CapacityAllocator allocator_;
};

}  // namespace
}  // namespace cpu

void RegisterCpuBackend() {
  if (FindBackend(DeviceType::kCPU) != nullptr) return;
  RegisterBackend(std::make_unique<cpu::CpuBackend>());
}

}  // namespace opscope
