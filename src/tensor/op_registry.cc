// The op registry: one row per OpId (include/opscope/ops.h), in OpId order. The dispatcher, the
// backends (through OpCall::op) and compile() read everything they know about an op from here.
#include <array>
#include <string>

#include "opscope/ops.h"
#include "tensor/dispatch.h"
#include "tensor/ops_impl.h"

namespace opscope {
namespace {

using K = KernelKind;
using F = FusionClass;

// An op with a kernel of its own, run by every backend.
constexpr OpDef Kernel(OpId id, const char* name, const char* schema, K kernel, F fusion, int arity,
                       OpImpl impl) {
  return {{id, name, schema, kernel, fusion, arity, true, ""}, impl};
}
// An op without a kernel: `why` names what runs instead.
constexpr OpDef NoKernel(OpId id, const char* name, const char* schema, F fusion, int arity,
                         OpImpl impl, const char* why, bool interceptable = true) {
  return {{id, name, schema, K::kNone, fusion, arity, interceptable, why}, impl};
}

constexpr OpDef kOps[] = {
    // Elementwise: a kernel each; fused by compile().
    Kernel(OpId::kAdd, "aten::add", "TTs", K::kBinary, F::kPointwise, 2, impl::Add),
    Kernel(OpId::kSub, "aten::sub", "TTs", K::kBinary, F::kPointwise, 2, impl::Sub),
    Kernel(OpId::kMul, "aten::mul", "TT", K::kBinary, F::kPointwise, 2, impl::Mul),
    Kernel(OpId::kDiv, "aten::div", "TT", K::kBinary, F::kPointwise, 2, impl::Div),
    Kernel(OpId::kPow, "aten::pow", "TT", K::kBinary, F::kPointwise, 2, impl::Pow),
    Kernel(OpId::kMaximum, "aten::maximum", "TT", K::kBinary, F::kPointwise, 2, impl::Maximum),
    Kernel(OpId::kMinimum, "aten::minimum", "TT", K::kBinary, F::kPointwise, 2, impl::Minimum),
    Kernel(OpId::kRsqrt, "aten::rsqrt", "T", K::kUnary, F::kPointwise, 1, impl::Rsqrt),
    Kernel(OpId::kSqrt, "aten::sqrt", "T", K::kUnary, F::kPointwise, 1, impl::Sqrt),
    Kernel(OpId::kExp, "aten::exp", "T", K::kUnary, F::kPointwise, 1, impl::Exp),
    Kernel(OpId::kNeg, "aten::neg", "T", K::kUnary, F::kPointwise, 1, impl::Neg),
    Kernel(OpId::kLog, "aten::log", "T", K::kUnary, F::kPointwise, 1, impl::Log),
    Kernel(OpId::kAbs, "aten::abs", "T", K::kUnary, F::kPointwise, 1, impl::Abs),
    Kernel(OpId::kReciprocal, "aten::reciprocal", "T", K::kUnary, F::kPointwise, 1,
           impl::Reciprocal),
    Kernel(OpId::kRelu, "aten::relu", "T", K::kUnary, F::kPointwise, 1, impl::Relu),
    Kernel(OpId::kTanh, "aten::tanh", "T", K::kUnary, F::kPointwise, 1, impl::Tanh),
    Kernel(OpId::kSigmoid, "aten::sigmoid", "T", K::kUnary, F::kPointwise, 1, impl::Sigmoid),
    Kernel(OpId::kSilu, "aten::silu", "T", K::kUnary, F::kPointwise, 1, impl::Silu),
    Kernel(OpId::kGelu, "aten::gelu", "Ts", K::kUnary, F::kPointwise, 1, impl::Gelu),
    // Reductions.
    Kernel(OpId::kSum, "aten::sum", "Tsss", K::kReduction, F::kReduction, 1, impl::Sum),
    Kernel(OpId::kMean, "aten::mean", "Tsss", K::kReduction, F::kReduction, 1, impl::Mean),
    Kernel(OpId::kAmax, "aten::amax", "Tss", K::kReduction, F::kReduction, 1, impl::Amax),
    Kernel(OpId::kAmin, "aten::amin", "Tss", K::kReduction, F::kReduction, 1, impl::Amin),
    // Matrix products, softmax, normalizations.
    Kernel(OpId::kMm, "aten::mm", "TT", K::kMatmul, F::kExtern, 0, impl::Mm),
    Kernel(OpId::kBmm, "aten::bmm", "TT", K::kMatmul, F::kExtern, 0, impl::Bmm),
    NoKernel(OpId::kMatmul, "aten::matmul", "TT", F::kExtern, 0, impl::Matmul,
             "composite: aten::mm or aten::bmm on views"),
    NoKernel(OpId::kSoftmax, "aten::softmax", "Tss", F::kDecomposed, 0, impl::Softmax,
             "composite: aten::_softmax"),
    Kernel(OpId::kSoftmaxKernel, "aten::_softmax", "Tss", K::kSoftmax, F::kDecomposed, 0,
           impl::SoftmaxKernel),
    NoKernel(OpId::kLayerNorm, "aten::layer_norm", "TsTTss", F::kDecomposed, 0, impl::LayerNorm,
             "composite: aten::native_layer_norm"),
    Kernel(OpId::kNativeLayerNorm, "aten::native_layer_norm", "TsTTs", K::kNorm, F::kDecomposed, 0,
           impl::NativeLayerNorm),
    NoKernel(OpId::kRmsNorm, "aten::rms_norm", "TsTs", F::kDecomposed, 0, impl::RmsNorm,
             "composite: aten::_fused_rms_norm"),
    Kernel(OpId::kFusedRmsNorm, "aten::_fused_rms_norm", "TsTs", K::kNorm, F::kDecomposed, 0,
           impl::FusedRmsNorm),
    // Copies, factories and fills.
    NoKernel(OpId::kTo, "aten::to", "Tsssss", F::kExtern, 0, impl::To, "composite: aten::_to_copy"),
    NoKernel(OpId::kToCopy, "aten::_to_copy", "Tssssss", F::kExtern, 0, impl::ToCopy,
             "composite: aten::empty_strided + aten::copy_"),
    Kernel(OpId::kCopy, "aten::copy_", "TTs", K::kCopy, F::kExtern, 0, impl::Copy),
    NoKernel(OpId::kEmpty, "aten::empty", "ssssss", F::kExtern, 0, impl::Empty, "allocation only"),
    NoKernel(OpId::kEmptyStrided, "aten::empty_strided", "ssssss", F::kExtern, 0,
             impl::EmptyStrided, "allocation only"),
    NoKernel(OpId::kEmptyLike, "aten::empty_like", "Tsssss", F::kExtern, 0, impl::EmptyLike,
             "allocation only"),
    NoKernel(OpId::kZeros, "aten::zeros", "sssss", F::kExtern, 0, impl::Zeros,
             "composite: aten::empty + aten::zero_"),
    NoKernel(OpId::kOnes, "aten::ones", "sssss", F::kExtern, 0, impl::Ones,
             "composite: aten::empty + aten::fill_"),
    NoKernel(OpId::kFull, "aten::full", "ssssss", F::kExtern, 0, impl::Full,
             "composite: aten::empty + aten::fill_"),
    Kernel(OpId::kFill, "aten::fill_", "Ts", K::kFill, F::kExtern, 0, impl::Fill),
    NoKernel(OpId::kZero, "aten::zero_", "T", F::kExtern, 0, impl::Zero, "composite: aten::fill_"),
    NoKernel(OpId::kArange, "aten::arange", "sssssss", F::kExtern, 0, impl::Arange,
             "values computed on the host and copied in (DeviceBackend::CopyFromHost)"),
    NoKernel(OpId::kRandn, "aten::randn", "sssss", F::kExtern, 0, impl::Randn,
             "composite: aten::empty + aten::normal_"),
    NoKernel(OpId::kNormal, "aten::normal_", "Tsss", F::kExtern, 0, impl::Normal,
             "values computed on the host and copied in (DeviceBackend::CopyFromHost)"),
    // Views: no data moves (contiguous and clone copy through aten::copy_).
    NoKernel(OpId::kView, "aten::view", "Ts", F::kExtern, 0, impl::View, "view"),
    NoKernel(OpId::kReshape, "aten::reshape", "Ts", F::kExtern, 0, impl::Reshape,
             "view, or composite: aten::clone + aten::_unsafe_view"),
    NoKernel(OpId::kUnsafeView, "aten::_unsafe_view", "Ts", F::kExtern, 0, impl::UnsafeView,
             "view"),
    NoKernel(OpId::kTranspose, "aten::transpose", "Tss", F::kExtern, 0, impl::Transpose, "view"),
    NoKernel(OpId::kPermute, "aten::permute", "Ts", F::kExtern, 0, impl::Permute, "view"),
    NoKernel(OpId::kSlice, "aten::slice", "Tssss", F::kExtern, 0, impl::Slice, "view"),
    NoKernel(OpId::kNarrow, "aten::narrow", "Tsss", F::kExtern, 0, impl::Narrow, "view"),
    NoKernel(OpId::kExpand, "aten::expand", "Tss", F::kExtern, 0, impl::Expand, "view"),
    NoKernel(OpId::kUnsqueeze, "aten::unsqueeze", "Ts", F::kExtern, 0, impl::Unsqueeze, "view"),
    NoKernel(OpId::kContiguous, "aten::contiguous", "Ts", F::kPointwise, 1, impl::Contiguous,
             "view, or composite: aten::clone"),
    NoKernel(OpId::kClone, "aten::clone", "Ts", F::kPointwise, 1, impl::Clone,
             "composite: aten::empty_like + aten::copy_"),
    NoKernel(OpId::kItem, "aten::item", "T", F::kExtern, 0, impl::Item,
             "composite: aten::_local_scalar_dense", /*interceptable=*/false),
    NoKernel(OpId::kLocalScalarDense, "aten::_local_scalar_dense", "T", F::kExtern, 0,
             impl::LocalScalarDense, "copies to the host (DeviceBackend::CopyToHost)",
             /*interceptable=*/false),
    NoKernel(OpId::kT, "aten::t", "T", F::kExtern, 0, impl::T, "view"),
};

constexpr bool RowsAreWellFormed() {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    const OpInfo& r = kOps[i].info;
    if (static_cast<size_t>(r.id) != i) return false;                      // row i is OpId i
    if ((r.kernel == K::kNone) != (r.no_kernel[0] != '\0')) return false;  // a reason iff none
    const bool fused = r.fusion == F::kPointwise || r.fusion == F::kReduction;
    if (fused != (r.arity > 0)) return false;
    if (r.fusion == F::kReduction && r.arity != 1) return false;
  }
  return true;
}
static_assert(std::size(kOps) == static_cast<size_t>(OpId::kNumOps),
              "every OpId needs a row in kOps and every row an OpId");
static_assert(RowsAreWellFormed(),
              "kOps rows must be in OpId order, give a reason exactly when an op has no kernel, "
              "and give fused ops their arity");

}  // namespace

const OpDef& GetOpDef(OpId id) { return kOps[static_cast<size_t>(id)]; }

const OpInfo& GetOpInfo(OpId id) {
  const auto i = static_cast<size_t>(id);
  if (i >= std::size(kOps))
    throw TensorError("GetOpInfo: " + std::to_string(i) + " is not an OpId");
  return kOps[i].info;
}

std::optional<OpId> FindOp(std::string_view aten_name) {
  for (const OpDef& d : kOps) {
    if (aten_name == d.info.name) return d.info.id;
  }
  return std::nullopt;
}

}  // namespace opscope
