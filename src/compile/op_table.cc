#include "compile/op_table.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace opscope::compiler {

OpInfo LookupOp(std::string_view op) {
  if (op == "input") return {OpKind::kInput, 0};
  if (op == "constant") return {OpKind::kConstant, 0};
  static constexpr std::string_view kUnary[] = {
      "aten::neg",  "aten::exp",        "aten::sqrt",  "aten::rsqrt",     "aten::silu",
      "aten::gelu", "aten::relu",       "aten::tanh",  "aten::sigmoid",   "aten::log",
      "aten::abs",  "aten::reciprocal", "aten::clone", "aten::contiguous"};
  static constexpr std::string_view kBinary[] = {"aten::add",    "aten::sub", "aten::mul",
                                                 "aten::div",    "aten::pow", "aten::maximum",
                                                 "aten::minimum"};
  static constexpr std::string_view kReduction[] = {"aten::sum", "aten::mean", "aten::amax",
                                                    "aten::amin"};
  for (auto u : kUnary)
    if (op == u) return {OpKind::kPointwise, 1};
  for (auto b : kBinary)
    if (op == b) return {OpKind::kPointwise, 2};
  for (auto r : kReduction)
    if (op == r) return {OpKind::kReduction, 1};
  return {OpKind::kExtern, 0};
}

std::string FloatLiteral(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return "__builtin_nanf(\"\")";
  if (std::isinf(f)) return f > 0 ? "__builtin_inff()" : "(-__builtin_inff())";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return "(" + s + "f)";
}

std::string PointwiseExpr(std::string_view op, const std::vector<std::string>& args, double alpha) {
  const std::string& a = args.at(0);
  auto b = [&]() -> const std::string& { return args.at(1); };
  auto scaled_b = [&] {
    return alpha == 1.0 ? b() : "(" + FloatLiteral(alpha) + " * " + b() + ")";
  };
  if (op == "aten::add") return "(" + a + " + " + scaled_b() + ")";
  if (op == "aten::sub") return "(" + a + " - " + scaled_b() + ")";
  if (op == "aten::mul") return "(" + a + " * " + b() + ")";
  if (op == "aten::div") return "(" + a + " / " + b() + ")";
  if (op == "aten::pow") {
    if (b() == "(2.0f)") return "(" + a + " * " + a + ")";
    if (b() == "(1.0f)") return a;
    if (b() == "(0.5f)") return "__builtin_sqrtf(" + a + ")";
    return "__builtin_powf(" + a + ", " + b() + ")";
  }
  if (op == "aten::maximum") return "(" + a + " > " + b() + " ? " + a + " : " + b() + ")";
  if (op == "aten::minimum") return "(" + a + " < " + b() + " ? " + a + " : " + b() + ")";
  if (op == "aten::neg") return "(-" + a + ")";
  if (op == "aten::exp") return "__builtin_expf(" + a + ")";
  if (op == "aten::log") return "__builtin_logf(" + a + ")";
  if (op == "aten::sqrt") return "__builtin_sqrtf(" + a + ")";
  if (op == "aten::rsqrt") return "(1.0f / __builtin_sqrtf(" + a + "))";
  if (op == "aten::reciprocal") return "(1.0f / " + a + ")";
  if (op == "aten::abs") return "__builtin_fabsf(" + a + ")";
  if (op == "aten::relu") return "(" + a + " > 0.0f ? " + a + " : 0.0f)";
  if (op == "aten::tanh") return "__builtin_tanhf(" + a + ")";
  if (op == "aten::sigmoid") return "(1.0f / (1.0f + __builtin_expf(-" + a + ")))";
  if (op == "aten::silu") return "(" + a + " / (1.0f + __builtin_expf(-" + a + ")))";
  if (op == "aten::gelu")
    return "(0.5f * " + a + " * (1.0f + __builtin_erff(" + a + " * 0.70710678118654752f)))";
  if (op == "aten::clone" || op == "aten::contiguous") return a;
  throw std::invalid_argument("opscope compile: no pointwise expression for " + std::string(op));
}

double EvalPointwise(std::string_view op, double a, double b, double alpha) {
  if (op == "aten::add") return a + alpha * b;
  if (op == "aten::sub") return a - alpha * b;
  if (op == "aten::mul") return a * b;
  if (op == "aten::div") return a / b;
  if (op == "aten::pow") return std::pow(a, b);
  if (op == "aten::maximum") return a > b ? a : b;
  if (op == "aten::minimum") return a < b ? a : b;
  if (op == "aten::neg") return -a;
  if (op == "aten::exp") return std::exp(a);
  if (op == "aten::log") return std::log(a);
  if (op == "aten::sqrt") return std::sqrt(a);
  if (op == "aten::rsqrt") return 1.0 / std::sqrt(a);
  if (op == "aten::reciprocal") return 1.0 / a;
  if (op == "aten::abs") return std::fabs(a);
  if (op == "aten::relu") return a > 0 ? a : 0;
  if (op == "aten::tanh") return std::tanh(a);
  if (op == "aten::sigmoid") return 1.0 / (1.0 + std::exp(-a));
  if (op == "aten::silu") return a / (1.0 + std::exp(-a));
  if (op == "aten::gelu") return 0.5 * a * (1.0 + std::erf(a * 0.70710678118654752));
  if (op == "aten::clone" || op == "aten::contiguous") return a;
  throw std::invalid_argument("opscope compile: cannot evaluate " + std::string(op));
}

double ReductionInit(std::string_view op) {
  if (op == "aten::amax") return -std::numeric_limits<double>::infinity();
  if (op == "aten::amin") return std::numeric_limits<double>::infinity();
  return 0.0;
}

std::string ReductionUpdate(std::string_view op, std::string_view acc, std::string_view x) {
  std::string a(acc), v(x);
  if (op == "aten::amax") return a + " = " + v + " > " + a + " ? " + v + " : " + a + ";";
  if (op == "aten::amin") return a + " = " + v + " < " + a + " ? " + v + " : " + a + ";";
  return a + " += " + v + ";";
}

}  // namespace opscope::compiler
