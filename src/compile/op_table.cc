// How compile() computes each fusible op (op_table.h): the element-wise and reduction formulas.
#include "compile/op_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace opscope::compiler {
namespace {

using Args = const std::vector<std::string>&;

// What compile() computes for one op: a pointwise op's double evaluation and C++ expression, or
// a reduction. Ops that are neither are not fused.
struct FusedOpDef {
  enum Kind { kNotFused, kPointwise, kReduction } kind = kNotFused;
  double (*eval)(double a, double b, double alpha) = nullptr;
  std::string (*expr)(Args args, double alpha) = nullptr;
  Reduction reduction;
};

FusedOpDef Pointwise(double (*eval)(double, double, double), std::string (*expr)(Args, double)) {
  return {FusedOpDef::kPointwise, eval, expr, {}};
}
FusedOpDef ReductionDef(Reduction::Combine combine, double init, bool mean = false) {
  return {FusedOpDef::kReduction, nullptr, nullptr, {combine, init, mean}};
}

std::string Call(const char* fn, const std::string& a) { return std::string(fn) + "(" + a + ")"; }

// `b`, scaled by aten::add/sub's alpha when it is not 1.
std::string ScaledB(Args args, double alpha) {
  return alpha == 1.0 ? args.at(1) : "(" + FloatLiteral(alpha) + " * " + args.at(1) + ")";
}

// Binary pointwise ops (aten::add/sub's alpha scales b).
FusedOpDef BinaryDef(OpId op) {
  switch (op) {
    case OpId::kAdd:
      return Pointwise(
          [](double a, double b, double alpha) { return a + alpha * b; },
          [](Args x, double alpha) { return "(" + x.at(0) + " + " + ScaledB(x, alpha) + ")"; });
    case OpId::kSub:
      return Pointwise(
          [](double a, double b, double alpha) { return a - alpha * b; },
          [](Args x, double alpha) { return "(" + x.at(0) + " - " + ScaledB(x, alpha) + ")"; });
    case OpId::kMul:
      return Pointwise([](double a, double b, double) { return a * b; },
                       [](Args x, double) { return "(" + x.at(0) + " * " + x.at(1) + ")"; });
    case OpId::kDiv:
      return Pointwise([](double a, double b, double) { return a / b; },
                       [](Args x, double) { return "(" + x.at(0) + " / " + x.at(1) + ")"; });
    case OpId::kPow:
      return Pointwise([](double a, double b, double) { return std::pow(a, b); },
                       [](Args x, double) {
                         const std::string& a = x.at(0);
                         const std::string& b = x.at(1);
                         if (b == "(2.0f)") return "(" + a + " * " + a + ")";
                         if (b == "(1.0f)") return a;
                         if (b == "(0.5f)") return Call("__builtin_sqrtf", a);
                         return "__builtin_powf(" + a + ", " + b + ")";
                       });
    case OpId::kMaximum:
      return Pointwise([](double a, double b, double) { return a > b ? a : b; },
                       [](Args x, double) {
                         return "(" + x.at(0) + " > " + x.at(1) + " ? " + x.at(0) + " : " +
                                x.at(1) + ")";
                       });
    case OpId::kMinimum:
      return Pointwise([](double a, double b, double) { return a < b ? a : b; },
                       [](Args x, double) {
                         return "(" + x.at(0) + " < " + x.at(1) + " ? " + x.at(0) + " : " +
                                x.at(1) + ")";
                       });
    default:
      return {};
  }
}

// Unary pointwise ops, and the identities of a fused kernel.
FusedOpDef UnaryDef(OpId op) {
  switch (op) {
    case OpId::kRsqrt:
      return Pointwise(
          [](double a, double, double) { return 1.0 / std::sqrt(a); },
          [](Args x, double) { return "(1.0f / " + Call("__builtin_sqrtf", x.at(0)) + ")"; });
    case OpId::kSqrt:
      return Pointwise([](double a, double, double) { return std::sqrt(a); },
                       [](Args x, double) { return Call("__builtin_sqrtf", x.at(0)); });
    case OpId::kExp:
      return Pointwise([](double a, double, double) { return std::exp(a); },
                       [](Args x, double) { return Call("__builtin_expf", x.at(0)); });
    case OpId::kNeg:
      return Pointwise([](double a, double, double) { return -a; },
                       [](Args x, double) { return "(-" + x.at(0) + ")"; });
    case OpId::kLog:
      return Pointwise([](double a, double, double) { return std::log(a); },
                       [](Args x, double) { return Call("__builtin_logf", x.at(0)); });
    case OpId::kAbs:
      return Pointwise([](double a, double, double) { return std::fabs(a); },
                       [](Args x, double) { return Call("__builtin_fabsf", x.at(0)); });
    case OpId::kReciprocal:
      return Pointwise([](double a, double, double) { return 1.0 / a; },
                       [](Args x, double) { return "(1.0f / " + x.at(0) + ")"; });
    case OpId::kRelu:
      return Pointwise(
          [](double a, double, double) { return a > 0 ? a : 0.0; },
          [](Args x, double) { return "(" + x.at(0) + " > 0.0f ? " + x.at(0) + " : 0.0f)"; });
    case OpId::kTanh:
      return Pointwise([](double a, double, double) { return std::tanh(a); },
                       [](Args x, double) { return Call("__builtin_tanhf", x.at(0)); });
    case OpId::kSigmoid:
      return Pointwise(
          [](double a, double, double) { return 1.0 / (1.0 + std::exp(-a)); },
          [](Args x, double) { return "(1.0f / (1.0f + __builtin_expf(-" + x.at(0) + ")))"; });
    case OpId::kSilu:
      return Pointwise([](double a, double, double) { return a / (1.0 + std::exp(-a)); },
                       [](Args x, double) {
                         return "(" + x.at(0) + " / (1.0f + __builtin_expf(-" + x.at(0) + ")))";
                       });
    case OpId::kGelu:  // the erf form; capture keeps approximate="tanh" extern
      return Pointwise([](double a, double,
                          double) { return 0.5 * a * (1.0 + std::erf(a * 0.70710678118654752)); },
                       [](Args x, double) {
                         return "(0.5f * " + x.at(0) + " * (1.0f + __builtin_erff(" + x.at(0) +
                                " * 0.70710678118654752f)))";
                       });
    case OpId::kContiguous:  // identities in a fused kernel: the value is computed, not viewed
    case OpId::kClone:
      return Pointwise([](double a, double, double) { return a; },
                       [](Args x, double) { return x.at(0); });
    default:
      return {};
  }
}

// Reductions over the last dim.
FusedOpDef ReductionOf(OpId op) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (op) {
    case OpId::kSum:
      return ReductionDef(Reduction::kSum, 0.0);
    case OpId::kMean:
      return ReductionDef(Reduction::kSum, 0.0, /*mean=*/true);
    case OpId::kAmax:
      return ReductionDef(Reduction::kMax, -kInf);
    case OpId::kAmin:
      return ReductionDef(Reduction::kMin, kInf);
    default:
      return {};
  }
}

// What compile() computes for `op`, as the registry classes it: a pointwise row's formula (by
// its arity), a reduction row's fold, nothing for the rest. A fused row without a formula here
// reads as not fused, which op_table_test.cc reports against the registry.
FusedOpDef Define(OpId op) {
  const OpInfo& info = GetOpInfo(op);
  switch (info.fusion) {
    case FusionClass::kPointwise:
      return info.arity == 2 ? BinaryDef(op) : UnaryDef(op);
    case FusionClass::kReduction:
      return ReductionOf(op);
    case FusionClass::kDecomposed:  // captured as the ops it is made of (capture.cc)
    case FusionClass::kExtern:      // run through the dispatcher
      break;
  }
  return {};
}

FusedOpDef Expect(OpId op, FusedOpDef::Kind kind) {
  FusedOpDef d = Define(op);
  if (d.kind != kind) {
    throw std::invalid_argument(
        std::string("opscope compile: ") + OpName(op) + " is not " +
        (kind == FusedOpDef::kPointwise ? "a pointwise op" : "a reduction"));
  }
  return d;
}

}  // namespace

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

std::string PointwiseExpr(OpId op, const std::vector<std::string>& args, double alpha) {
  return Expect(op, FusedOpDef::kPointwise).expr(args, alpha);
}

double EvalPointwise(OpId op, double a, double b, double alpha) {
  return Expect(op, FusedOpDef::kPointwise).eval(a, b, alpha);
}

Reduction ReductionOf(OpId op) { return Expect(op, FusedOpDef::kReduction).reduction; }

bool DefinesFusedOp(OpId op) { return Define(op).kind != FusedOpDef::kNotFused; }

double ReductionCombine(const Reduction& r, double acc, double x) {
  switch (r.combine) {
    case Reduction::kSum:
      return acc + x;
    case Reduction::kMax:
      return std::max(acc, x);
    case Reduction::kMin:
      return std::min(acc, x);
  }
  return acc;
}

std::string ReductionUpdate(const Reduction& r, std::string_view acc, std::string_view x) {
  std::string a(acc), v(x);
  switch (r.combine) {
    case Reduction::kSum:
      break;
    case Reduction::kMax:
      return a + " = " + v + " > " + a + " ? " + v + " : " + a + ";";
    case Reduction::kMin:
      return a + " = " + v + " < " + a + " ? " + v + " : " + a + ";";
  }
  return a + " += " + v + ";";
}

const char* ReductionClause(const Reduction& r) {
  switch (r.combine) {
    case Reduction::kSum:
      break;
    case Reduction::kMax:
      return "max";
    case Reduction::kMin:
      return "min";
  }
  return "+";
}

}  // namespace opscope::compiler
