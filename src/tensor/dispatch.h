// The dispatcher's internals: the op table, the dispatch entry point, and kernel launching.
// Op implementations (ops_*.cc) receive already-recorded calls and either launch a kernel or call
// other ops through Dispatch, so nesting shows in traces as in PyTorch.
#ifndef OPSCOPE_SRC_TENSOR_DISPATCH_H_
#define OPSCOPE_SRC_TENSOR_DISPATCH_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "opscope/device.h"
#include "opscope/tensor.h"
#include "tensor/shape.h"

namespace opscope {

// Every op the dispatcher knows, in the order of the table in dispatch.cc.
enum class OpId : uint16_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kRsqrt,
  kSqrt,
  kExp,
  kNeg,
  kSilu,
  kGelu,
  kSum,
  kMean,
  kAmax,
  kMm,
  kBmm,
  kMatmul,
  kSoftmax,
  kSoftmaxKernel,
  kLayerNorm,
  kNativeLayerNorm,
  kRmsNorm,
  kFusedRmsNorm,
  kTo,
  kToCopy,
  kCopy,
  kEmpty,
  kEmptyStrided,
  kEmptyLike,
  kZeros,
  kOnes,
  kFull,
  kFill,
  kZero,
  kArange,
  kRandn,
  kNormal,
  kView,
  kReshape,
  kUnsafeView,
  kTranspose,
  kPermute,
  kSlice,
  kNarrow,
  kExpand,
  kUnsqueeze,
  kContiguous,
  kClone,
  kItem,
  kLocalScalarDense,
  kT,
  kNumOps,
};

using OpImpl = std::vector<Tensor> (*)(std::span<const Tensor> inputs, const OpAttrs& attrs);

struct OpDef {
  const char* name;  // ATen name
  OpImpl impl;
  // ATen's arguments in order, 'T' for a tensor and 's' for anything else ("TsTs" for
  // rms_norm(input, normalized_shape, weight, eps)): the entries of the recorded Input Dims.
  const char* schema;
  bool interceptable;  // offered to DispatchInterceptors
};

const OpDef& GetOpDef(OpId id);

// Records the host op, offers it to the thread's interceptor, runs its implementation.
std::vector<Tensor> Dispatch(OpId id, std::span<const Tensor> inputs, const OpAttrs& attrs);
inline Tensor Dispatch1(OpId id, std::initializer_list<Tensor> inputs, const OpAttrs& attrs) {
  return Dispatch(id, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs).at(0);
}

// Runs `kind`'s kernel on the outputs' device with the current op's correlation id. Tensors
// must satisfy the OpKind contract in device.h.
void LaunchKernel(OpKind kind, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
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
