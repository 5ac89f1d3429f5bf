// The ops opscope knows: one identifier per ATen op, and the registry row that says what each one
// is (its ATen name and arguments, the kernel a device backend runs for it, how compile() treats
// it).
//
//   const opscope::OpInfo& info = opscope::GetOpInfo(opscope::OpId::kMul);
//   // info.name == "aten::mul", info.kernel == KernelKind::kBinary,
//   // info.fusion == FusionClass::kPointwise, info.arity == 2
//   std::optional<opscope::OpId> id = opscope::FindOp("aten::rms_norm");  // OpId::kRmsNorm
//
// The registry is one constexpr table in src/tensor/op_registry.cc, indexed by OpId (the table
// static_asserts that row i is OpId i and that every OpId has a row). Everything else derives
// from it: the dispatcher's table, the kernels a backend's Execute receives (OpCall::op, device.h),
// the ops compile() fuses. Adding an op: its enumerator here, its row (with its implementation),
// its kernels on every backend when it has one, and its conformance case
// (tests/device/op_conformance_test.cc).
//
// Thread safety: everything here is immutable.
#ifndef OPSCOPE_OPS_H_
#define OPSCOPE_OPS_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace opscope {

// Every op, grouped as the registry lists them.
enum class OpId : uint16_t {
  // Elementwise
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMaximum,
  kMinimum,
  kRsqrt,
  kSqrt,
  kExp,
  kNeg,
  kLog,
  kAbs,
  kReciprocal,
  kRelu,
  kTanh,
  kSigmoid,
  kSilu,
  kGelu,
  // Reductions
  kSum,
  kMean,
  kAmax,
  kAmin,
  // Matrix products, softmax, normalizations
  kMm,
  kBmm,
  kMatmul,
  kSoftmax,
  kSoftmaxKernel,  // aten::_softmax
  kLayerNorm,
  kNativeLayerNorm,
  kRmsNorm,
  kFusedRmsNorm,  // aten::_fused_rms_norm
  // Copies, factories and fills
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
  // Views
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
inline constexpr int kNumOps = static_cast<int>(OpId::kNumOps);

// The kernel a device backend runs for an op: the contract of an OpCall (device.h) whose `op` has
// this kind. The dispatcher guarantees: all tensors on the backend's device, f32 unless said
// otherwise, outputs freshly allocated and contiguous unless said otherwise.
enum class KernelKind : uint8_t {
  // No kernel of its own: the op calls other ops (composite), only makes a view, only allocates,
  // or writes host-computed values through the backend's copies. OpInfo::no_kernel says which.
  kNone,
  // Elementwise with 2 inputs already broadcast (expanded) to outputs[0]'s shape, any strides;
  // or 1 input when attrs->has_scalar (the other operand is attrs->scalar). add/sub compute
  // a +/- alpha * b; pow: a ^ b; maximum/minimum propagate NaN.
  kBinary,
  // Elementwise with 1 input (any strides). gelu reads attrs->gelu_tanh.
  kUnary,
  // 1 input (any strides); outputs[0] has the input's rank with reduced dims of size 1 (keepdim
  // form); OpCall::reduce_mask has bit d set for each reduced dim d.
  kReduction,
  // mm: [n,k] x [k,m] -> [n,m]; bmm: [b,n,k] x [b,k,m] -> [b,n,m]. Inputs any strides.
  kMatmul,
  // aten::_softmax over attrs->dim (non-negative); input any strides, output same shape.
  kSoftmax,
  // aten::native_layer_norm / aten::_fused_rms_norm: inputs {x (contiguous), weight?, bias?}
  // (weight/bias contiguous with numel == normalized size, or absent); normalized over the
  // trailing dims of total size attrs->shape's product; attrs->eps. One output, x's shape.
  kNorm,
  // aten::copy_: inputs {src} broadcast to outputs[0] (which is `self`: NOT freshly allocated,
  // any strides); dtypes may differ (f32 <-> bf16). Same device.
  kCopy,
  // aten::fill_: outputs[0] (any strides, not fresh) = attrs->scalar; no inputs.
  kFill,
};

// How compile() treats an op it captures.
enum class FusionClass : uint8_t {
  kPointwise,   // fused: one output element from the same-index elements of its operands
  kReduction,   // fused: reduces attrs.dims (keepdim or not)
  kDecomposed,  // captured as the pointwise ops and reductions it is made of (softmax, norms)
  kExtern,      // runs through the dispatcher between fused kernels
};

// One registry row.
struct OpInfo {
  OpId id;
  const char* name;  // ATen name, "aten::add" (static storage)
  // ATen's arguments in order, 'T' for a tensor and 's' for anything else ("TsTs" for
  // rms_norm(input, normalized_shape, weight, eps)): the entries of the recorded Input Dims.
  const char* schema;
  KernelKind kernel;
  FusionClass fusion;
  int arity;           // operands in compile()'s graph: 1 or 2 for pointwise ops, 1 for reductions
  bool interceptable;  // offered to DispatchInterceptors (item() is not: it leaves the graph)
  const char* no_kernel;  // for kernel == kNone: why, naming the ops whose kernels run ("" else)
};

// The row of `id`. `id` must be below OpId::kNumOps.
const OpInfo& GetOpInfo(OpId id);
inline const char* OpName(OpId id) { return GetOpInfo(id).name; }
// The op named `aten_name` ("aten::mul"), or nullopt.
std::optional<OpId> FindOp(std::string_view aten_name);

}  // namespace opscope

#endif  // OPSCOPE_OPS_H_
