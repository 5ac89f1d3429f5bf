// View ops (share storage) and the copies that stand in for them when a view is impossible.
#include <fmt/format.h>

#include <algorithm>

#include "tensor/dispatch.h"
#include "tensor/ops_impl.h"

namespace opscope {
namespace impl {
namespace {

const Tensor& Single(const char* name, In in) {
  if (in.size() != 1 || !in[0].defined()) {
    throw TensorError(fmt::format("{}: expected 1 defined tensor", name));
  }
  return in[0];
}

}  // namespace

Out View(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::view", in);
  const Shape shape = InferSize(a.shape, x.numel());
  auto strides = ViewStrides(x.sizes(), x.strides(), shape);
  if (!strides) {
    throw TensorError(
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.");
  }
  return {AsStrided(x, shape, *strides, x.storage_offset())};
}

Out Reshape(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::reshape", in);
  const Shape shape = InferSize(a.shape, x.numel());
  if (ViewStrides(x.sizes(), x.strides(), shape)) return {x.view(shape)};
  OpAttrs v;
  v.shape = shape;
  return {Dispatch1(OpId::kUnsafeView, {Dispatch1(OpId::kClone, {x}, OpAttrs{})}, v)};
}

Out UnsafeView(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::_unsafe_view", in);
  const Shape shape = InferSize(a.shape, x.numel());
  auto strides = ViewStrides(x.sizes(), x.strides(), shape);
  if (!strides) throw TensorError("_unsafe_view: input is not viewable as " + ShapeToString(shape));
  return {AsStrided(x, shape, *strides, x.storage_offset())};
}

Out Transpose(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::transpose", in);
  if (x.dim() == 0) return {x};
  const int64_t d0 = NormalizeDim(a.dim, x.dim());
  const int64_t d1 = NormalizeDim(a.dim1, x.dim());
  Shape sizes = x.sizes(), strides = x.strides();
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return {AsStrided(x, sizes, strides, x.storage_offset())};
}

Out Permute(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::permute", in);
  if (static_cast<int64_t>(a.dims.size()) != x.dim()) {
    throw TensorError(fmt::format(
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
        "of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = "
        "{}",
        x.dim(), a.dims.size()));
  }
  Shape sizes(x.dim()), strides(x.dim());
  std::vector<bool> seen(x.dim(), false);
  for (int64_t i = 0; i < x.dim(); ++i) {
    const int64_t d = NormalizeDim(a.dims[i], x.dim());
    if (seen[d]) throw TensorError("permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = x.sizes()[d];
    strides[i] = x.strides()[d];
  }
  return {AsStrided(x, sizes, strides, x.storage_offset())};
}

Out Slice(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::slice", in);
  if (x.dim() == 0) throw TensorError("slice() cannot be applied to a 0-dim tensor.");
  if (a.step <= 0) throw TensorError("slice step must be positive");
  const int64_t d = NormalizeDim(a.dim, x.dim());
  const int64_t n = x.sizes()[d];
  auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  const int64_t start = clamp(a.start);
  const int64_t end = std::max(start, clamp(a.end));
  Shape sizes = x.sizes(), strides = x.strides();
  sizes[d] = (end - start + a.step - 1) / a.step;
  strides[d] = x.strides()[d] * a.step;
  return {AsStrided(x, sizes, strides, x.storage_offset() + start * x.strides()[d])};
}

Out Narrow(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::narrow", in);
  if (x.dim() == 0) throw TensorError("narrow() cannot be applied to a 0-dim tensor.");
  const int64_t d = NormalizeDim(a.dim, x.dim());
  const int64_t n = x.sizes()[d];
  const int64_t start = a.start < 0 ? a.start + n : a.start;
  const int64_t length = a.end - a.start;
  if (start < 0 || length < 0 || start + length > n) {
    throw TensorError(
        fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, length, n));
  }
  OpAttrs s;
  s.dim = d;
  s.start = start;
  s.end = start + length;
  return {Dispatch1(OpId::kSlice, {x}, s)};
}

Out Expand(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::expand", in);
  Shape shape = a.shape;
  const Shape strides = ExpandStrides(x.sizes(), x.strides(), shape);
  const int64_t lead = static_cast<int64_t>(shape.size()) - x.dim();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) shape[i] = x.sizes()[i - lead];
  }
  return {AsStrided(x, shape, strides, x.storage_offset())};
}

Out Unsqueeze(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::unsqueeze", in);
  const int64_t d = NormalizeDim(a.dim, x.dim() + 1);
  Shape sizes = x.sizes(), strides = x.strides();
  const int64_t stride = d < x.dim() ? x.sizes()[d] * x.strides()[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return {AsStrided(x, sizes, strides, x.storage_offset())};
}

Out Contiguous(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::contiguous", in);
  if (x.is_contiguous()) return {x};
  return {Dispatch1(OpId::kClone, {x}, OpAttrs{})};
}

Out Clone(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::clone", in);
  OpAttrs e;
  e.shape = x.sizes();
  e.device = x.device();
  e.dtype = x.dtype();
  Tensor out = Dispatch1(OpId::kEmptyLike, {x}, e);
  copy_(out, x);
  return {out};
}

Out T(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::t", in);
  if (x.dim() > 2) {
    throw TensorError(
        fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}D", x.dim()));
  }
  if (x.dim() < 2) return {x};
  return {x.transpose(0, 1)};
}

}  // namespace impl

Tensor Tensor::t() const { return Dispatch1(OpId::kT, {*this}, OpAttrs{}); }

Tensor Tensor::view(std::vector<int64_t> shape) const {
  OpAttrs a;
  a.shape = std::move(shape);
  return Dispatch1(OpId::kView, {*this}, a);
}

Tensor Tensor::reshape(std::vector<int64_t> shape) const {
  OpAttrs a;
  a.shape = std::move(shape);
  return Dispatch1(OpId::kReshape, {*this}, a);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  OpAttrs a;
  a.dim = dim0;
  a.dim1 = dim1;
  return Dispatch1(OpId::kTranspose, {*this}, a);
}

Tensor Tensor::permute(std::vector<int64_t> dims) const {
  OpAttrs a;
  a.dims = std::move(dims);
  return Dispatch1(OpId::kPermute, {*this}, a);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  OpAttrs a;
  a.dim = dim;
  a.start = start;
  a.end = end;
  a.step = step;
  return Dispatch1(OpId::kSlice, {*this}, a);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  OpAttrs a;
  a.dim = dim;
  a.start = start;
  a.end = start + length;
  return Dispatch1(OpId::kNarrow, {*this}, a);
}

Tensor Tensor::expand(std::vector<int64_t> shape) const {
  OpAttrs a;
  a.shape = std::move(shape);
  return Dispatch1(OpId::kExpand, {*this}, a);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  OpAttrs a;
  a.dim = dim;
  return Dispatch1(OpId::kUnsqueeze, {*this}, a);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;  // like at::Tensor::contiguous(): no op recorded
  return Dispatch1(OpId::kContiguous, {*this}, OpAttrs{});
}

}  // namespace opscope
