// The CPU device backend: host memory with a capacity, synchronous kernels.
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>

#include "device/cpu/cpu_kernels.h"

namespace opscope {
namespace cpu {

void RunKernel(const OpCall& call) {
  const KernelKind kind = GetOpInfo(call.op).kernel;
  for (const TensorRef& t : call.outputs) {
    if (t.dtype != DType::kFloat32 && kind != KernelKind::kCopy) {
      throw TensorError(fmt::format("cpu: {} supports float only", OpName(call.op)));
    }
  }
  switch (kind) {
    case KernelKind::kBinary:
      return BinaryKernel(call);
    case KernelKind::kUnary:
      return UnaryKernel(call);
    case KernelKind::kReduction:
      return ReduceKernel(call);
    case KernelKind::kMatmul:
      return MatmulKernel(call);
    case KernelKind::kSoftmax:
      return SoftmaxKernel(call);
    case KernelKind::kNorm:
      return call.op == OpId::kFusedRmsNorm ? RmsNormKernel(call) : LayerNormKernel(call);
    case KernelKind::kCopy:
      return CopyKernel(call);
    case KernelKind::kFill:
      return FillKernel(call);
    case KernelKind::kNone:
      break;
  }
  throw TensorError(fmt::format("cpu: {} has no kernel", OpName(call.op)));
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
  bool RunsHostCode() const override { return true; }

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
