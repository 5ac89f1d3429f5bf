// Reductions, matrix products, softmax and the normalizations (layer_norm, rms_norm).
#include <fmt/format.h>

#include <algorithm>

#include "tensor/dispatch.h"
#include "tensor/ops_impl.h"

namespace opscope {
namespace impl {
namespace {

Out Reduce(OpId op, In in, const OpAttrs& a) {
  const char* name = OpName(op);
  if (in.size() != 1) throw TensorError(fmt::format("{}: expected 1 tensor", name));
  const Tensor& x = in[0];
  CheckFloat(name, x);
  const uint32_t mask = ReduceMask(a.dims, x.dim());
  Shape keep = x.sizes();
  Shape squeezed;
  OpAttrs normalized = a;
  normalized.dims.clear();
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask & (1u << d)) {
      if ((op == OpId::kAmax || op == OpId::kAmin) && keep[d] == 0) {
        throw TensorError(fmt::format("{}(): Expected reduction dim {} to have non-zero size.",
                                      op == OpId::kAmax ? "amax" : "amin", d));
      }
      keep[d] = 1;
      normalized.dims.push_back(d);
    } else {
      squeezed.push_back(keep[d]);
    }
  }
  Tensor out = AllocateTensor(keep, x.device(), DType::kFloat32);
  LaunchKernel(op, in, std::span<const Tensor>(&out, 1), normalized, mask);
  if (!a.keepdim) out = AsStrided(out, squeezed, ContiguousStrides(squeezed), 0);
  return {out};
}

// Checks normalized_shape against x and the optional affine tensors; returns the row length.
int64_t CheckNormShapes(const char* name, const Tensor& x, const Shape& normalized,
                        std::span<const Tensor> affine) {
  CheckFloat(name, x);
  if (normalized.empty()) {
    throw TensorError(fmt::format(
        "{}: Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
        "one element, but got normalized_shape = []",
        name));
  }
  for (const Tensor& t : affine) {
    if (!t.defined()) continue;
    CheckFloat(name, t);
    if (t.sizes() != normalized) {
      throw TensorError(fmt::format(
          "Expected weight to be of same shape as normalized_shape, but got weight of shape {} "
          "and normalized_shape = {}",
          ShapeToString(t.sizes()), ShapeToString(normalized)));
    }
  }
  const int64_t nd = static_cast<int64_t>(normalized.size());
  bool ok = x.dim() >= nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = x.sizes()[x.dim() - nd + i] == normalized[i];
  if (!ok) {
    throw TensorError(fmt::format(
        "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
        ShapeToString(normalized),
        ShapeToString(normalized).substr(1, ShapeToString(normalized).size() - 2),
        ShapeToString(x.sizes())));
  }
  return ShapeNumel(normalized);
}

// Runs a normalization kernel on contiguous operands.
Out NormKernel(OpId op, In in, const OpAttrs& a) {
  const Device device = CommonDevice(in);
  std::vector<Tensor> operands;
  for (const Tensor& t : in) operands.push_back(t.defined() ? t.contiguous() : t);
  Tensor out = AllocateTensor(in[0].sizes(), device, DType::kFloat32);
  LaunchKernel(op, operands, std::span<const Tensor>(&out, 1), a);
  return {out};
}

}  // namespace

Out Sum(In in, const OpAttrs& a) { return Reduce(OpId::kSum, in, a); }
Out Mean(In in, const OpAttrs& a) { return Reduce(OpId::kMean, in, a); }
Out Amax(In in, const OpAttrs& a) { return Reduce(OpId::kAmax, in, a); }
Out Amin(In in, const OpAttrs& a) { return Reduce(OpId::kAmin, in, a); }

Out Mm(In in, const OpAttrs& a) {
  if (in.size() != 2) throw TensorError("aten::mm: expected 2 tensors");
  const Device device = CommonDevice(in);
  CheckFloat("aten::mm", in[0]);
  CheckFloat("aten::mm", in[1]);
  if (in[0].dim() != 2) throw TensorError("self must be a matrix");
  if (in[1].dim() != 2) throw TensorError("mat2 must be a matrix");
  if (in[0].size(1) != in[1].size(0)) {
    throw TensorError(fmt::format("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                                  in[0].size(0), in[0].size(1), in[1].size(0), in[1].size(1)));
  }
  Tensor out = AllocateTensor(Shape{in[0].size(0), in[1].size(1)}, device, DType::kFloat32);
  LaunchKernel(OpId::kMm, in, std::span<const Tensor>(&out, 1), a);
  return {out};
}

Out Bmm(In in, const OpAttrs& a) {
  if (in.size() != 2) throw TensorError("aten::bmm: expected 2 tensors");
  const Device device = CommonDevice(in);
  CheckFloat("aten::bmm", in[0]);
  CheckFloat("aten::bmm", in[1]);
  if (in[0].dim() != 3) throw TensorError("batch1 must be a 3D tensor");
  if (in[1].dim() != 3) throw TensorError("batch2 must be a 3D tensor");
  if (in[1].size(0) != in[0].size(0) || in[1].size(1) != in[0].size(2)) {
    throw TensorError(fmt::format(
        "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, "
        "{}].",
        in[0].size(0), in[0].size(2), in[1].size(0), in[1].size(1)));
  }
  Tensor out =
      AllocateTensor(Shape{in[0].size(0), in[0].size(1), in[1].size(2)}, device, DType::kFloat32);
  LaunchKernel(OpId::kBmm, in, std::span<const Tensor>(&out, 1), a);
  return {out};
}

Out Matmul(In in, const OpAttrs&) {
  if (in.size() != 2) throw TensorError("aten::matmul: expected 2 tensors");
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const int64_t da = a.dim();
  const int64_t db = b.dim();
  if (da == 0 || db == 0) {
    throw TensorError(fmt::format(
        "both arguments to matmul need to be at least 1D, but they are {}D and {}D", da, db));
  }
  if (da == 1 && db == 1) {
    if (a.size(0) != b.size(0)) {
      throw TensorError(fmt::format(
          "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
          "elements, but got {} and {} elements respectively",
          a.size(0), b.size(0), a.size(0), b.size(0)));
    }
    return {mm(a.unsqueeze(0), b.unsqueeze(1)).view({})};
  }
  if (da <= 2 && db <= 2) {
    const Tensor a2 = da == 1 ? a.unsqueeze(0) : a;
    const Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
    Tensor r = mm(a2, b2);
    if (da == 1) return {r.view({r.size(1)})};
    if (db == 1) return {r.view({r.size(0)})};
    return {r};
  }
  if (db <= 2) {  // fold a's batch dims into rows
    const int64_t k = a.size(-1);
    const Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
    Tensor r = mm(a.reshape({-1, k}), b2);
    Shape shape(a.sizes().begin(), a.sizes().end() - 1);
    if (db == 2) shape.push_back(b.size(1));
    OpAttrs v;
    v.shape = shape;
    return {Dispatch1(OpId::kUnsafeView, {r}, v)};
  }
  // Batched: broadcast the batch dims, then bmm.
  const Tensor a3 = da == 1 ? a.unsqueeze(0) : a;
  const Tensor b3 = db == 1 ? b.unsqueeze(-1) : b;
  const int64_t n = a3.size(-2), k = a3.size(-1), k2 = b3.size(-2), m = b3.size(-1);
  const Shape batch_a(a3.sizes().begin(), a3.sizes().end() - 2);
  const Shape batch_b(b3.sizes().begin(), b3.sizes().end() - 2);
  const Shape batch = BroadcastShapes(batch_a, batch_b);
  const int64_t nb = ShapeNumel(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {n, k});
  eb.insert(eb.end(), {k2, m});
  Tensor r = bmm(a3.expand(ea).reshape({nb, n, k}), b3.expand(eb).reshape({nb, k2, m}));
  Shape shape = batch;
  if (da > 1) shape.push_back(n);
  if (db > 1) shape.push_back(m);
  OpAttrs v;
  v.shape = shape;
  return {Dispatch1(OpId::kUnsafeView, {r}, v)};
}

Out Softmax(In in, const OpAttrs& a) {
  if (in.size() != 1) throw TensorError("aten::softmax: expected 1 tensor");
  OpAttrs k = a;
  k.dim = NormalizeDim(a.dim, in[0].dim());
  return {Dispatch1(OpId::kSoftmaxKernel, {in[0]}, k)};
}

Out SoftmaxKernel(In in, const OpAttrs& a) {
  if (in.size() != 1) throw TensorError("aten::_softmax: expected 1 tensor");
  CheckFloat("aten::_softmax", in[0]);
  OpAttrs k = a;
  k.dim = NormalizeDim(a.dim, in[0].dim());
  Tensor out = AllocateTensor(in[0].sizes(), in[0].device(), DType::kFloat32);
  LaunchKernel(OpId::kSoftmaxKernel, in, std::span<const Tensor>(&out, 1), k);
  return {out};
}

Out LayerNorm(In in, const OpAttrs& a) {
  if (in.empty() || in.size() > 3) throw TensorError("aten::layer_norm: expected 1 to 3 tensors");
  CheckNormShapes("aten::layer_norm", in[0], a.shape, in.subspan(1));
  return {Dispatch(OpId::kNativeLayerNorm, in, a).at(0)};
}

Out NativeLayerNorm(In in, const OpAttrs& a) {
  if (in.empty() || in.size() > 3) {
    throw TensorError("aten::native_layer_norm: expected 1 to 3 tensors");
  }
  CheckNormShapes("aten::native_layer_norm", in[0], a.shape, in.subspan(1));
  return NormKernel(OpId::kNativeLayerNorm, in, a);
}

Out RmsNorm(In in, const OpAttrs& a) {
  if (in.empty() || in.size() > 2) throw TensorError("aten::rms_norm: expected 1 or 2 tensors");
  CheckNormShapes("aten::rms_norm", in[0], a.shape, in.subspan(1));
  return {Dispatch(OpId::kFusedRmsNorm, in, a).at(0)};
}

Out FusedRmsNorm(In in, const OpAttrs& a) {
  if (in.empty() || in.size() > 2) {
    throw TensorError("aten::_fused_rms_norm: expected 1 or 2 tensors");
  }
  CheckNormShapes("aten::_fused_rms_norm", in[0], a.shape, in.subspan(1));
  return NormKernel(OpId::kFusedRmsNorm, in, a);
}

}  // namespace impl

namespace {
OpAttrs ReduceAttrs(std::vector<int64_t> dims, bool keepdim) {
  OpAttrs a;
  a.dims = std::move(dims);
  a.keepdim = keepdim;
  return a;
}
}  // namespace

Tensor sum(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return Dispatch1(OpId::kSum, {a}, ReduceAttrs(std::move(dims), keepdim));
}
Tensor mean(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return Dispatch1(OpId::kMean, {a}, ReduceAttrs(std::move(dims), keepdim));
}
Tensor amax(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return Dispatch1(OpId::kAmax, {a}, ReduceAttrs(std::move(dims), keepdim));
}
Tensor amin(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return Dispatch1(OpId::kAmin, {a}, ReduceAttrs(std::move(dims), keepdim));
}
Tensor mm(const Tensor& a, const Tensor& b) { return Dispatch1(OpId::kMm, {a, b}, OpAttrs{}); }
Tensor bmm(const Tensor& a, const Tensor& b) { return Dispatch1(OpId::kBmm, {a, b}, OpAttrs{}); }
Tensor matmul(const Tensor& a, const Tensor& b) {
  return Dispatch1(OpId::kMatmul, {a, b}, OpAttrs{});
}
Tensor softmax(const Tensor& a, int64_t dim) {
  OpAttrs attrs;
  attrs.dim = dim;
  return Dispatch1(OpId::kSoftmax, {a}, attrs);
}
Tensor layer_norm(const Tensor& x, std::vector<int64_t> normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  OpAttrs attrs;
  attrs.shape = std::move(normalized_shape);
  attrs.eps = eps;
  return Dispatch1(OpId::kLayerNorm, {x, weight, bias}, attrs);
}
Tensor rms_norm(const Tensor& x, std::vector<int64_t> normalized_shape, const Tensor& weight,
                double eps) {
  OpAttrs attrs;
  attrs.shape = std::move(normalized_shape);
  attrs.eps = eps;
  return Dispatch1(OpId::kRmsNorm, {x, weight}, attrs);
}

}  // namespace opscope
