// Elementwise CPU kernels: binary ops (tensor or scalar operand), unary ops, copy and fill.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "device/cpu/cpu_kernels.h"
#include "device/cpu/strided_loop.h"

namespace opscope::cpu {
namespace {

// out = f(a, b) over rows with unit or zero inner strides as fast paths.
template <typename F>
void BinaryRows(const TensorRef& out, const TensorRef& a, const TensorRef& b, F f) {
  const auto loop = MakeLoop<3>(out.ndim, out.sizes, {out.strides, a.strides, b.strides});
  float* po = static_cast<float*>(out.data);
  const float* pa = static_cast<const float*>(a.data);
  const float* pb = static_cast<const float*>(b.data);
  ForEachRow<3>(loop, {out.offset, a.offset, b.offset},
                [&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& s) {
                  float* __restrict o = po + off[0];
                  const float* __restrict x = pa + off[1];
                  const float* __restrict y = pb + off[2];
                  if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
                  } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
                    const float yv = *y;
                    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
                  } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
                    const float xv = *x;
                    for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
                  } else {
                    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]]);
                  }
                });
}

// out = f(a) over rows.
template <typename F>
void UnaryRows(const TensorRef& out, const TensorRef& a, F f) {
  const auto loop = MakeLoop<2>(out.ndim, out.sizes, {out.strides, a.strides});
  float* po = static_cast<float*>(out.data);
  const float* pa = static_cast<const float*>(a.data);
  ForEachRow<2>(loop, {out.offset, a.offset},
                [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
                  float* __restrict o = po + off[0];
                  const float* __restrict x = pa + off[1];
                  if (s[0] == 1 && s[1] == 1) {
                    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
                  } else if (s[0] == 1 && s[1] == 0) {
                    const float v = f(*x);
                    for (int64_t i = 0; i < n; ++i) o[i] = v;
                  } else {
                    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]]);
                  }
                });
}

float PowScalar(float x, float e) { return std::pow(x, e); }

template <typename F>
void ScalarOrTensor(const OpCall& c, F f) {
  const TensorRef& out = c.outputs[0];
  if (c.attrs->has_scalar) {
    const auto s = static_cast<float>(c.attrs->scalar);
    UnaryRows(out, c.inputs[0], [f, s](float x) { return f(x, s); });
  } else {
    BinaryRows(out, c.inputs[0], c.inputs[1], f);
  }
}

uint16_t ToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float FromBFloat16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename To, typename From, typename Convert>
void CopyRows(const TensorRef& out, const TensorRef& in, Convert convert) {
  const auto loop = MakeLoop<2>(out.ndim, out.sizes, {out.strides, in.strides});
  To* po = static_cast<To*>(out.data);
  const From* pi = static_cast<const From*>(in.data);
  ForEachRow<2>(loop, {out.offset, in.offset},
                [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
                  To* o = po + off[0];
                  const From* x = pi + off[1];
                  if (s[0] == 1 && s[1] == 1) {
                    for (int64_t i = 0; i < n; ++i) o[i] = convert(x[i]);
                  } else {
                    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = convert(x[i * s[1]]);
                  }
                });
}

}  // namespace

void BinaryKernel(const OpCall& c) {
  const auto alpha = static_cast<float>(c.attrs->alpha);
  switch (c.op) {
    case OpId::kAdd:
      if (alpha == 1) return ScalarOrTensor(c, [](float x, float y) { return x + y; });
      return ScalarOrTensor(c, [alpha](float x, float y) { return x + alpha * y; });
    case OpId::kSub:
      if (alpha == 1) return ScalarOrTensor(c, [](float x, float y) { return x - y; });
      return ScalarOrTensor(c, [alpha](float x, float y) { return x - alpha * y; });
    case OpId::kMul:
      return ScalarOrTensor(c, [](float x, float y) { return x * y; });
    case OpId::kDiv:
      return ScalarOrTensor(c, [](float x, float y) { return x / y; });
    case OpId::kPow:
      if (c.attrs->has_scalar) {
        const double e = c.attrs->scalar;
        const TensorRef& out = c.outputs[0];
        if (e == 2) return UnaryRows(out, c.inputs[0], [](float x) { return x * x; });
        if (e == 1) return UnaryRows(out, c.inputs[0], [](float x) { return x; });
        if (e == 0.5) return UnaryRows(out, c.inputs[0], [](float x) { return std::sqrt(x); });
        if (e == -1) return UnaryRows(out, c.inputs[0], [](float x) { return 1.0f / x; });
      }
      return ScalarOrTensor(c, PowScalar);
    case OpId::kMaximum:
      return ScalarOrTensor(c, [](float x, float y) { return x != x || x > y ? x : y; });
    case OpId::kMinimum:
      return ScalarOrTensor(c, [](float x, float y) { return x != x || x < y ? x : y; });
    default:
      throw TensorError(fmt::format("cpu: {} is not a binary kernel", OpName(c.op)));
  }
}

void UnaryKernel(const OpCall& c) {
  const TensorRef& out = c.outputs[0];
  const TensorRef& in = c.inputs[0];
  switch (c.op) {
    case OpId::kRsqrt:
      return UnaryRows(out, in, [](float x) { return 1.0f / std::sqrt(x); });
    case OpId::kSqrt:
      return UnaryRows(out, in, [](float x) { return std::sqrt(x); });
    case OpId::kExp:
      return UnaryRows(out, in, [](float x) { return std::exp(x); });
    case OpId::kNeg:
      return UnaryRows(out, in, [](float x) { return -x; });
    case OpId::kLog:
      return UnaryRows(out, in, [](float x) { return std::log(x); });
    case OpId::kAbs:
      return UnaryRows(out, in, [](float x) { return std::fabs(x); });
    case OpId::kReciprocal:
      return UnaryRows(out, in, [](float x) { return 1.0f / x; });
    case OpId::kRelu:  // NaN stays NaN, as clamp_min(x, 0) gives
      return UnaryRows(out, in, [](float x) { return x < 0.0f ? 0.0f : x; });
    case OpId::kTanh:
      return UnaryRows(out, in, [](float x) { return std::tanh(x); });
    case OpId::kSigmoid:
      return UnaryRows(out, in, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    case OpId::kSilu:
      return UnaryRows(out, in, [](float x) { return x / (1.0f + std::exp(-x)); });
    case OpId::kGelu:
      if (c.attrs->gelu_tanh) {
        return UnaryRows(out, in, [](float x) {
          constexpr float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
          return 0.5f * x * (1.0f + std::tanh(kBeta * (x + 0.044715f * x * x * x)));
        });
      }
      return UnaryRows(
          out, in, [](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); });
    default:
      throw TensorError(fmt::format("cpu: {} is not a unary kernel", OpName(c.op)));
  }
}

void CopyKernel(const OpCall& c) {
  const TensorRef& out = c.outputs[0];
  const TensorRef& in = c.inputs[0];
  if (out.dtype == DType::kFloat32 && in.dtype == DType::kFloat32) {
    return CopyRows<float, float>(out, in, [](float x) { return x; });
  }
  if (out.dtype == DType::kBFloat16 && in.dtype == DType::kFloat32) {
    return CopyRows<uint16_t, float>(out, in, ToBFloat16);
  }
  if (out.dtype == DType::kFloat32 && in.dtype == DType::kBFloat16) {
    return CopyRows<float, uint16_t>(out, in, FromBFloat16);
  }
  return CopyRows<uint16_t, uint16_t>(out, in, [](uint16_t x) { return x; });
}

void FillKernel(const OpCall& c) {
  const TensorRef& out = c.outputs[0];
  const auto v = static_cast<float>(c.attrs->scalar);
  const auto loop = MakeLoop<1>(out.ndim, out.sizes, {out.strides});
  float* po = static_cast<float*>(out.data);
  ForEachRow<1>(loop, {out.offset},
                [&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& s) {
                  float* o = po + off[0];
                  for (int64_t i = 0; i < n; ++i) o[i * s[0]] = v;
                });
}

}  // namespace opscope::cpu
