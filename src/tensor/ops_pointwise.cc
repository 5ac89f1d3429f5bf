// Elementwise ops: broadcasting binary ops (tensor or scalar operand) and unary ops.
#include <fmt/format.h>

#include "tensor/dispatch.h"
#include "tensor/ops_impl.h"

namespace opscope {
namespace impl {
namespace {

Out Binary(OpId op, In in, const OpAttrs& a) {
  const char* name = OpName(op);
  if (a.has_scalar) {
    if (in.size() != 1) throw TensorError(fmt::format("{}: expected 1 tensor and a scalar", name));
    CheckFloat(name, in[0]);
    Tensor out = AllocateTensor(in[0].sizes(), in[0].device(), DType::kFloat32);
    LaunchKernel(op, in, std::span<const Tensor>(&out, 1), a);
    return {out};
  }
  if (in.size() != 2) throw TensorError(fmt::format("{}: expected 2 tensors", name));
  const Device device = CommonDevice(in);
  CheckFloat(name, in[0]);
  CheckFloat(name, in[1]);
  const Shape shape = BroadcastShapes(in[0].sizes(), in[1].sizes());
  Tensor out = AllocateTensor(shape, device, DType::kFloat32);
  const Tensor operands[] = {ExpandView(in[0], shape), ExpandView(in[1], shape)};
  LaunchKernel(op, operands, std::span<const Tensor>(&out, 1), a);
  return {out};
}

Out Unary(OpId op, In in, const OpAttrs& a) {
  const char* name = OpName(op);
  if (in.size() != 1) throw TensorError(fmt::format("{}: expected 1 tensor", name));
  CheckFloat(name, in[0]);
  Tensor out = AllocateTensor(in[0].sizes(), in[0].device(), DType::kFloat32);
  LaunchKernel(op, in, std::span<const Tensor>(&out, 1), a);
  return {out};
}

}  // namespace

Out Add(In in, const OpAttrs& a) { return Binary(OpId::kAdd, in, a); }
Out Sub(In in, const OpAttrs& a) { return Binary(OpId::kSub, in, a); }
Out Mul(In in, const OpAttrs& a) { return Binary(OpId::kMul, in, a); }
Out Div(In in, const OpAttrs& a) { return Binary(OpId::kDiv, in, a); }
Out Pow(In in, const OpAttrs& a) { return Binary(OpId::kPow, in, a); }
Out Maximum(In in, const OpAttrs& a) { return Binary(OpId::kMaximum, in, a); }
Out Minimum(In in, const OpAttrs& a) { return Binary(OpId::kMinimum, in, a); }
Out Rsqrt(In in, const OpAttrs& a) { return Unary(OpId::kRsqrt, in, a); }
Out Sqrt(In in, const OpAttrs& a) { return Unary(OpId::kSqrt, in, a); }
Out Exp(In in, const OpAttrs& a) { return Unary(OpId::kExp, in, a); }
Out Neg(In in, const OpAttrs& a) { return Unary(OpId::kNeg, in, a); }
Out Log(In in, const OpAttrs& a) { return Unary(OpId::kLog, in, a); }
Out Abs(In in, const OpAttrs& a) { return Unary(OpId::kAbs, in, a); }
Out Reciprocal(In in, const OpAttrs& a) { return Unary(OpId::kReciprocal, in, a); }
Out Relu(In in, const OpAttrs& a) { return Unary(OpId::kRelu, in, a); }
Out Tanh(In in, const OpAttrs& a) { return Unary(OpId::kTanh, in, a); }
Out Sigmoid(In in, const OpAttrs& a) { return Unary(OpId::kSigmoid, in, a); }
Out Silu(In in, const OpAttrs& a) { return Unary(OpId::kSilu, in, a); }
Out Gelu(In in, const OpAttrs& a) { return Unary(OpId::kGelu, in, a); }

}  // namespace impl

namespace {

OpAttrs ScalarAttrs(double value, double alpha = 1) {
  OpAttrs a;
  a.scalar = value;
  a.has_scalar = true;
  a.alpha = alpha;
  return a;
}

OpAttrs AlphaAttrs(double alpha) {
  OpAttrs a;
  a.alpha = alpha;
  return a;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  return Dispatch1(OpId::kAdd, {a, b}, AlphaAttrs(alpha));
}
Tensor add(const Tensor& a, double b, double alpha) {
  return Dispatch1(OpId::kAdd, {a}, ScalarAttrs(b, alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  return Dispatch1(OpId::kSub, {a, b}, AlphaAttrs(alpha));
}
Tensor sub(const Tensor& a, double b, double alpha) {
  return Dispatch1(OpId::kSub, {a}, ScalarAttrs(b, alpha));
}
Tensor mul(const Tensor& a, const Tensor& b) { return Dispatch1(OpId::kMul, {a, b}, OpAttrs{}); }
Tensor mul(const Tensor& a, double b) { return Dispatch1(OpId::kMul, {a}, ScalarAttrs(b)); }
Tensor div(const Tensor& a, const Tensor& b) { return Dispatch1(OpId::kDiv, {a, b}, OpAttrs{}); }
Tensor div(const Tensor& a, double b) { return Dispatch1(OpId::kDiv, {a}, ScalarAttrs(b)); }
Tensor pow(const Tensor& a, double exponent) {
  return Dispatch1(OpId::kPow, {a}, ScalarAttrs(exponent));
}
Tensor pow(const Tensor& a, const Tensor& exponent) {
  return Dispatch1(OpId::kPow, {a, exponent}, OpAttrs{});
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return Dispatch1(OpId::kMaximum, {a, b}, OpAttrs{});
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return Dispatch1(OpId::kMinimum, {a, b}, OpAttrs{});
}
Tensor rsqrt(const Tensor& a) { return Dispatch1(OpId::kRsqrt, {a}, OpAttrs{}); }
Tensor sqrt(const Tensor& a) { return Dispatch1(OpId::kSqrt, {a}, OpAttrs{}); }
Tensor exp(const Tensor& a) { return Dispatch1(OpId::kExp, {a}, OpAttrs{}); }
Tensor neg(const Tensor& a) { return Dispatch1(OpId::kNeg, {a}, OpAttrs{}); }
Tensor log(const Tensor& a) { return Dispatch1(OpId::kLog, {a}, OpAttrs{}); }
Tensor abs(const Tensor& a) { return Dispatch1(OpId::kAbs, {a}, OpAttrs{}); }
Tensor reciprocal(const Tensor& a) { return Dispatch1(OpId::kReciprocal, {a}, OpAttrs{}); }
Tensor relu(const Tensor& a) { return Dispatch1(OpId::kRelu, {a}, OpAttrs{}); }
Tensor tanh(const Tensor& a) { return Dispatch1(OpId::kTanh, {a}, OpAttrs{}); }
Tensor sigmoid(const Tensor& a) { return Dispatch1(OpId::kSigmoid, {a}, OpAttrs{}); }
Tensor silu(const Tensor& a) { return Dispatch1(OpId::kSilu, {a}, OpAttrs{}); }
Tensor gelu(const Tensor& a, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") {
    throw TensorError(
        fmt::format("approximate argument must be either none or tanh, got '{}'", approximate));
  }
  OpAttrs attrs;
  attrs.gelu_tanh = approximate == "tanh";
  return Dispatch1(OpId::kGelu, {a}, attrs);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, double b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace opscope
