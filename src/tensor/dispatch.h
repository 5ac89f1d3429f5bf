// The dispatcher's internals: the registry rows with their implementations, the dispatch entry
// point, and kernel launching.
// Op implementations (ops_*.cc) receive already-recorded calls and either launch a kernel or call
// other ops through Dispatch, so nesting shows in traces as in PyTorch.
#ifndef OPSCOPE_SRC_TENSOR_DISPATCH_H_
#define OPSCOPE_SRC_TENSOR_DISPATCH_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "opscope/device.h"
#include "opscope/ops.h"
#include "opscope/tensor.h"
#include "tensor/shape.h"

namespace opscope {

using OpImpl = std::vector<Tensor> (*)(std::span<const Tensor> inputs, const OpAttrs& attrs);

// A registry row (opscope/ops.h) with the dispatcher's implementation of the op.
struct OpDef {
  OpInfo info;
  OpImpl impl;
};

// The row of `id` (unchecked: `id` must be below OpId::kNumOps). Defined in op_registry.cc.
const OpDef& GetOpDef(OpId id);

// Records the host op, offers it to the thread's interceptor, runs its implementation.
std::vector<Tensor> Dispatch(OpId id, std::span<const Tensor> inputs, const OpAttrs& attrs);
inline Tensor Dispatch1(OpId id, std::initializer_list<Tensor> inputs, const OpAttrs& attrs) {
  return Dispatch(id, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs).at(0);
}

// Runs `op`'s kernel on the outputs' device with the current op's correlation id. `op` must have a
// kernel and the tensors must satisfy its KernelKind's contract (opscope/ops.h).
void LaunchKernel(OpId op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                  const OpAttrs& attrs, uint32_t reduce_mask = 0);

// A fresh contiguous tensor; not recorded (the ops that need scratch space use it).
Tensor AllocateTensor(std::span<const int64_t> shape, Device device, DType dtype);
// Throws PyTorch's "Expected all tensors to be on the same device" for mixed devices.
Device CommonDevice(std::span<const Tensor> tensors);
// Throws unless `t` is defined and f32, naming the op.
void CheckFloat(const char* op, const Tensor& t);
// `t` as a view of `shape` with broadcast strides (no record).
Tensor ExpandView(const Tensor& t, std::span<const int64_t> shape);
// Plain views without recording (for implementations).
Tensor AsStrided(const Tensor& t, Shape sizes, Shape strides, int64_t offset);
// Copies src (broadcast to dst's shape; any devices and dtypes) into dst without recording.
void CopyInto(const Tensor& dst, const Tensor& src);

}  // namespace opscope

#endif  // OPSCOPE_SRC_TENSOR_DISPATCH_H_
