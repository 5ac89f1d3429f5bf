// Factories, copies between devices and dtypes, fills, and reading values back (item).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "opscope/activity.h"
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

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1] from 53 random bits.
double Uniform(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

// Writes host-computed f32 `values` into `t` (any device, strides, dtype).
void WriteHostValues(const Tensor& t, const std::vector<float>& values) {
  Tensor host = AllocateTensor(t.sizes(), Device(), DType::kFloat32);
  if (!values.empty())
    std::memcpy(host.data<float>(), values.data(), values.size() * sizeof(float));
  CopyInto(t, host);
}

}  // namespace

Out To(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::to", in);
  if (x.device() == a.device && x.dtype() == a.dtype) return {x};
  return {Dispatch1(OpId::kToCopy, {x}, a)};
}

Out ToCopy(In in, const OpAttrs& a) {
  const Tensor& x = Single("aten::_to_copy", in);
  OpAttrs e;
  e.shape = x.sizes();
  e.strides = ContiguousStrides(x.sizes());
  e.device = a.device;
  e.dtype = a.dtype;
  Tensor out = Dispatch1(OpId::kEmptyStrided, {}, e);
  copy_(out, x);
  return {out};
}

Out Copy(In in, const OpAttrs&) {
  if (in.size() != 2 || !in[0].defined() || !in[1].defined()) {
    throw TensorError("aten::copy_: expected 2 defined tensors (self, src)");
  }
  const Tensor& dst = in[0];
  const Tensor& src = in[1];
  const Shape shape = BroadcastShapes(dst.sizes(), src.sizes());
  if (shape != dst.sizes()) {
    throw TensorError(fmt::format("output with shape {} doesn't match the broadcast shape {}",
                                  ShapeToString(dst.sizes()), ShapeToString(shape)));
  }
  CopyInto(dst, src);
  return {dst};
}

Out Empty(In, const OpAttrs& a) { return {AllocateTensor(a.shape, a.device, a.dtype)}; }

Out EmptyStrided(In, const OpAttrs& a) {
  if (a.strides.empty()) return {AllocateTensor(a.shape, a.device, a.dtype)};
  if (a.strides.size() != a.shape.size()) {
    throw TensorError(fmt::format("mismatch in length of strides and shape ({} vs {})",
                                  a.strides.size(), a.shape.size()));
  }
  int64_t extent = 1;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (a.shape[i] < 0 || a.strides[i] < 0)
      throw TensorError("empty_strided: negative size or stride");
    if (a.shape[i] == 0) extent = 0;
  }
  if (extent != 0) {
    for (size_t i = 0; i < a.shape.size(); ++i) {
      const int64_t span = CheckedMul(a.shape[i] - 1, a.strides[i], "empty_strided's extent");
      if (__builtin_add_overflow(extent, span, &extent)) {
        throw TensorError("empty_strided's extent overflows int64");
      }
    }
  }
  const int64_t bytes = NumelBytes(extent, ElementSize(a.dtype), a.shape);
  auto storage = std::make_shared<Storage>(a.device, static_cast<size_t>(bytes));
  return {Tensor(std::move(storage), a.shape, a.strides, 0, a.dtype)};
}

Out EmptyLike(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::empty_like", in);
  return {AllocateTensor(x.sizes(), x.device(), x.dtype())};
}

Out Zeros(In, const OpAttrs& a) {
  Tensor t = Dispatch1(OpId::kEmpty, {}, a);
  Dispatch(OpId::kZero, std::span<const Tensor>(&t, 1), OpAttrs{});
  return {t};
}

Out Ones(In, const OpAttrs& a) {
  Tensor t = Dispatch1(OpId::kEmpty, {}, a);
  OpAttrs f;
  f.scalar = 1;
  Dispatch(OpId::kFill, std::span<const Tensor>(&t, 1), f);
  return {t};
}

Out Full(In, const OpAttrs& a) {
  Tensor t = Dispatch1(OpId::kEmpty, {}, a);
  OpAttrs f;
  f.scalar = a.scalar;
  Dispatch(OpId::kFill, std::span<const Tensor>(&t, 1), f);
  return {t};
}

Out Fill(In in, const OpAttrs& a) {
  const Tensor& t = Single("aten::fill_", in);
  CheckFloat("aten::fill_", t);
  if (t.numel() > 0) LaunchKernel(OpId::kFill, {}, in, a);
  return {t};
}

Out Zero(In in, const OpAttrs&) {
  const Tensor& t = Single("aten::zero_", in);
  OpAttrs f;
  f.scalar = 0;
  Dispatch(OpId::kFill, in, f);
  return {t};
}

Out Arange(In, const OpAttrs& a) {
  if (a.range_step == 0) throw TensorError("step must be nonzero");
  if ((a.range_step > 0 && a.range_end < a.range_start) ||
      (a.range_step < 0 && a.range_end > a.range_start)) {
    throw TensorError("upper bound and larger bound inconsistent with step sign");
  }
  const auto n = static_cast<int64_t>(std::ceil((a.range_end - a.range_start) / a.range_step));
  OpAttrs e;
  e.shape = {n};
  e.device = a.device;
  Tensor t = Dispatch1(OpId::kEmpty, {}, e);
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(a.range_start + i * a.range_step);
  WriteHostValues(t, values);
  return {t};
}

Out Randn(In, const OpAttrs& a) {
  Tensor t = Dispatch1(OpId::kEmpty, {}, a);
  OpAttrs n;
  n.seed = a.seed;
  Dispatch(OpId::kNormal, std::span<const Tensor>(&t, 1), n);
  return {t};
}

Out Normal(In in, const OpAttrs& a) {
  const Tensor& t = Single("aten::normal_", in);
  CheckFloat("aten::normal_", t);
  const int64_t n = t.numel();
  std::vector<float> values(n);
  const uint64_t key = SplitMix64(a.seed ^ 0x6f707363u);
  for (int64_t pair = 0; pair * 2 < n; ++pair) {  // Box-Muller on counter-derived uniforms
    const double u1 = Uniform(SplitMix64(key + 2 * pair));
    const double u2 = Uniform(SplitMix64(key + 2 * pair + 1));
    const double r = std::sqrt(-2.0 * std::log(u1));
    values[2 * pair] = static_cast<float>(r * std::cos(2 * std::numbers::pi * u2));
    if (2 * pair + 1 < n)
      values[2 * pair + 1] = static_cast<float>(r * std::sin(2 * std::numbers::pi * u2));
  }
  if (t.device().type != DeviceType::kMeta) WriteHostValues(t, values);
  return {t};
}

Out Item(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::item", in);
  if (x.numel() != 1) {
    throw TensorError(
        fmt::format("a Tensor with {} elements cannot be converted to Scalar", x.numel()));
  }
  return {Dispatch1(OpId::kLocalScalarDense, {x}, OpAttrs{})};
}

Out LocalScalarDense(In in, const OpAttrs&) {
  const Tensor& x = Single("aten::_local_scalar_dense", in);
  if (x.device().type == DeviceType::kMeta) {
    throw TensorError("Tensor.item() cannot be called on meta tensors");
  }
  Tensor host = AllocateTensor({}, Device(), DType::kFloat32);
  CopyInto(host, x.view({}));
  return {host};
}

}  // namespace impl

Tensor empty(std::vector<int64_t> shape, Device device, DType dtype) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.device = device;
  a.dtype = dtype;
  return Dispatch1(OpId::kEmpty, {}, a);
}

Tensor empty_strided(std::vector<int64_t> shape, std::vector<int64_t> strides, Device device,
                     DType dtype) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.strides = std::move(strides);
  a.device = device;
  a.dtype = dtype;
  return Dispatch1(OpId::kEmptyStrided, {}, a);
}

Tensor zeros(std::vector<int64_t> shape, Device device) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.device = device;
  return Dispatch1(OpId::kZeros, {}, a);
}

Tensor ones(std::vector<int64_t> shape, Device device) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.device = device;
  return Dispatch1(OpId::kOnes, {}, a);
}

Tensor full(std::vector<int64_t> shape, double value, Device device) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.scalar = value;
  a.device = device;
  return Dispatch1(OpId::kFull, {}, a);
}

Tensor arange(double start, double end, double step, Device device) {
  OpAttrs a;
  a.range_start = start;
  a.range_end = end;
  a.range_step = step;
  a.device = device;
  return Dispatch1(OpId::kArange, {}, a);
}

Tensor randn(std::vector<int64_t> shape, uint64_t seed, Device device) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.seed = seed;
  a.device = device;
  return Dispatch1(OpId::kRandn, {}, a);
}

Tensor from_vector(std::span<const float> values, std::vector<int64_t> shape, Device device) {
  const int64_t numel = ShapeNumel(shape);
  if (static_cast<int64_t>(values.size()) != numel) {
    throw TensorError(fmt::format("from_vector: {} values cannot fill shape {} ({} elements)",
                                  values.size(), ShapeToString(shape), numel));
  }
  Tensor t = AllocateTensor(shape, Device(), DType::kFloat32);
  if (numel > 0) std::memcpy(t.data<float>(), values.data(), values.size() * sizeof(float));
  return device == Device() ? t : t.to(device);
}

Tensor to(const Tensor& a, Device device) { return a.to(device); }

Tensor& copy_(Tensor& dst, const Tensor& src) { return dst.copy_(src); }

void synchronize(Device device) {
  if (device.type == DeviceType::kMeta) return;
  GetBackend(device.type).Synchronize(device.index);
}

Tensor Tensor::to(Device device) const { return to(device, dtype_); }
Tensor Tensor::to(DType dtype) const { return to(device(), dtype); }
Tensor Tensor::to(Device device, DType dtype) const {
  OpAttrs a;
  a.device = device;
  a.dtype = dtype;
  return Dispatch1(OpId::kTo, {*this}, a);
}

Tensor& Tensor::copy_(const Tensor& src) {
  Dispatch1(OpId::kCopy, {*this, src}, OpAttrs{});
  return *this;
}

float Tensor::item() const {
  Tensor host = Dispatch1(OpId::kItem, {*this}, OpAttrs{});
  return *host.data<float>();
}

}  // namespace opscope
