// Op conformance: every op on every registered device against a double-precision reference
// computed here on the host, with per-op tolerances, broadcasting and non-contiguous inputs.
// Adding an op means adding its cases to Cases(); EveryRegistryRowHasAKernelOnEveryBackendOrAReason
// fails until every kernel in the registry (opscope/ops.h) has run on every backend. Devices come
// from RegisteredDevices(), so a backend linked into this test and registered in RegisterDevices()
// is covered automatically.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "opscope/device.h"
#include "opscope/ops.h"
#include "opscope/tensor.h"

namespace opscope {
namespace {

void RegisterDevices() {
  RegisterCpuBackend();
  RegisterNeuronBackend();
}

using Shape = std::vector<int64_t>;

// ---- Inputs ----

enum class Layout {
  kContiguous,
  kTransposed,  // built as [..., n, m] and transposed on the device: strides (1, n)
  kStrided,     // every other element of a last dim twice as long: stride 2
};

struct InputSpec {
  Shape shape;
  Layout layout = Layout::kContiguous;
  bool positive = false;  // values in [0.5, 3.5): for rsqrt, sqrt, pow, div denominators
  bool absent = false;    // an omitted optional input (undefined tensor)
};

InputSpec In(Shape shape, Layout layout = Layout::kContiguous) {
  return {std::move(shape), layout};
}
InputSpec Pos(Shape shape, Layout layout = Layout::kContiguous) {
  return {std::move(shape), layout, true};
}
InputSpec Absent() { return {{}, Layout::kContiguous, false, true}; }

// Host values for a spec (deterministic per seed).
std::vector<float> Values(const Shape& storage_shape, bool positive, uint64_t seed) {
  std::vector<float> v = randn(storage_shape, seed).ToVector();
  if (positive) {
    for (float& x : v) x = 0.5f + std::fmod(std::fabs(x) * 1.7f, 3.0f);
  }
  return v;
}

// Builds the input on `device` with its layout, laid out by views made on that device.
Tensor MakeInput(const InputSpec& s, Device device, uint64_t seed) {
  if (s.absent) return Tensor();
  Shape storage = s.shape;
  const size_t nd = storage.size();
  if (s.layout == Layout::kTransposed) std::swap(storage[nd - 1], storage[nd - 2]);
  if (s.layout == Layout::kStrided) storage[nd - 1] *= 2;
  Tensor t = from_vector(Values(storage, s.positive, seed), storage).to(device);
  if (s.layout == Layout::kTransposed) t = t.transpose(-1, -2);
  if (s.layout == Layout::kStrided) t = t.slice(-1, 0, storage[nd - 1], 2);
  return t;
}

// ---- The double-precision reference ----

struct Ref {
  Shape shape;
  std::vector<double> v;
  int64_t numel() const { return static_cast<int64_t>(v.size()); }
};

Ref ToRef(const Tensor& t) {
  Ref r{t.sizes(), {}};
  for (float x : t.ToVector()) r.v.push_back(x);
  return r;
}

Shape Strides(const Shape& shape) {
  Shape s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

// Element of `r` at the index `idx` of a broadcast shape (aligned from the right).
double At(const Ref& r, const Shape& idx) {
  const Shape st = Strides(r.shape);
  int64_t off = 0;
  const size_t lead = idx.size() - r.shape.size();
  for (size_t d = 0; d < r.shape.size(); ++d) {
    off += (r.shape[d] == 1 ? 0 : idx[d + lead]) * st[d];
  }
  return r.v[off];
}

Shape Unravel(int64_t i, const Shape& shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
  return idx;
}

Ref Map(const Ref& a, const std::function<double(double)>& f) {
  Ref r = a;
  for (double& x : r.v) x = f(x);
  return r;
}

Ref Zip(const Ref& a, const Ref& b, const std::function<double(double, double)>& f) {
  Ref r{BroadcastShapes(a.shape, b.shape), {}};
  const int64_t n =
      std::accumulate(r.shape.begin(), r.shape.end(), int64_t{1}, std::multiplies<>());
  for (int64_t i = 0; i < n; ++i) {
    const Shape idx = Unravel(i, r.shape);
    r.v.push_back(f(At(a, idx), At(b, idx)));
  }
  return r;
}

enum class Red { kSum, kMean, kMax, kMin };

Ref Reduce(const Ref& a, Shape dims, bool keepdim, Red kind) {
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : dims) reduced[d < 0 ? d + nd : d] = true;
  Shape keep = a.shape, out_shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) keep[d] = 1;
    if (!reduced[d] || keepdim) out_shape.push_back(keep[d]);
  }
  const int64_t n_out = std::accumulate(keep.begin(), keep.end(), int64_t{1}, std::multiplies<>());
  std::vector<double> acc(n_out, kind == Red::kMax   ? -INFINITY
                                 : kind == Red::kMin ? INFINITY
                                                     : 0.0);
  const Shape kst = Strides(keep);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const Shape idx = Unravel(i, a.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < nd; ++d) o += (reduced[d] ? 0 : idx[d]) * kst[d];
    acc[o] = kind == Red::kMax   ? std::max(acc[o], a.v[i])
             : kind == Red::kMin ? std::min(acc[o], a.v[i])
                                 : acc[o] + a.v[i];
  }
  if (kind == Red::kMean) {
    const double count = static_cast<double>(a.numel()) / static_cast<double>(n_out);
    for (double& x : acc) x /= count;
  }
  return {out_shape, acc};
}

// Batched matmul with broadcasting of batch dims; 1-D operands as in torch.matmul.
Ref Matmul(Ref a, Ref b) {
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  const int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const Shape batch = BroadcastShapes(ba, bb);
  Ref r;
  r.shape = batch;
  if (!a1) r.shape.push_back(n);
  if (!b1) r.shape.push_back(m);
  const int64_t nb = std::accumulate(batch.begin(), batch.end(), int64_t{1}, std::multiplies<>());
  for (int64_t bi = 0; bi < nb; ++bi) {
    const Shape bidx = Unravel(bi, batch);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          Shape ia = bidx, ib = bidx;
          ia.insert(ia.end(), {i, p});
          ib.insert(ib.end(), {p, j});
          s += At(a, ia) * At(b, ib);
        }
        r.v.push_back(s);
      }
    }
  }
  return r;
}

// Applies f to every row along `dim` (a row-wise op such as softmax or a normalization).
Ref Rows(const Ref& a, int64_t dim, const std::function<void(std::vector<double>&)>& f) {
  const int64_t nd = static_cast<int64_t>(a.shape.size());
  dim = dim < 0 ? dim + nd : dim;
  Ref r = a;
  const Shape st = Strides(a.shape);
  const int64_t n = a.shape[dim];
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (Unravel(i, a.shape)[dim] != 0) continue;
    std::vector<double> row(n);
    for (int64_t j = 0; j < n; ++j) row[j] = a.v[i + j * st[dim]];
    f(row);
    for (int64_t j = 0; j < n; ++j) r.v[i + j * st[dim]] = row[j];
  }
  return r;
}

// Normalization over the last dim (the cases use a 1-D normalized_shape).
Ref Norm(const Ref& x, const Ref* w, const Ref* b, double eps, bool rms) {
  Ref r = Rows(x, -1, [&](std::vector<double>& row) {
    const double n = static_cast<double>(row.size());
    double mean = 0, var = 0;
    if (!rms) {
      for (double v : row) mean += v / n;
    }
    for (double v : row) var += (v - mean) * (v - mean) / n;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (size_t j = 0; j < row.size(); ++j) {
      row[j] = (row[j] - mean) * inv * (w ? w->v[j] : 1.0) + (b ? b->v[j] : 0.0);
    }
  });
  return r;
}

// ---- Cases ----

struct OpCase {
  std::string label;
  OpId op;
  std::vector<InputSpec> inputs;
  OpAttrs attrs;
  std::function<Ref(const std::vector<Ref>&, const OpAttrs&)> reference;
  double rtol = 1e-5;
  double atol = 1e-6;
};

OpAttrs Scalar(double s, double alpha = 1) {
  OpAttrs a;
  a.scalar = s;
  a.has_scalar = true;
  a.alpha = alpha;
  return a;
}
OpAttrs Alpha(double alpha) {
  OpAttrs a;
  a.alpha = alpha;
  return a;
}
OpAttrs Dims(Shape dims, bool keepdim) {
  OpAttrs a;
  a.dims = std::move(dims);
  a.keepdim = keepdim;
  return a;
}
OpAttrs Dim(int64_t dim) {
  OpAttrs a;
  a.dim = dim;
  return a;
}
OpAttrs NormAttrs(Shape shape, double eps) {
  OpAttrs a;
  a.shape = std::move(shape);
  a.eps = eps;
  return a;
}

using RefFn = std::function<Ref(const std::vector<Ref>&, const OpAttrs&)>;

RefFn BinaryRef(std::function<double(double, double)> f) {
  return [f](const std::vector<Ref>& in, const OpAttrs& a) {
    if (a.has_scalar) return Map(in[0], [&](double x) { return f(x, a.scalar); });
    return Zip(in[0], in[1], f);
  };
}
RefFn UnaryRef(std::function<double(double)> f) {
  return [f](const std::vector<Ref>& in, const OpAttrs&) { return Map(in[0], f); };
}
RefFn ReduceRef(Red kind) {
  return [kind](const std::vector<Ref>& in, const OpAttrs& a) {
    return Reduce(in[0], a.dims, a.keepdim, kind);
  };
}

std::vector<OpCase> Cases() {
  const auto T = Layout::kTransposed;
  const auto S = Layout::kStrided;
  auto add = BinaryRef([](double x, double y) { return x + y; });
  auto add_a = [](double alpha) {
    return BinaryRef([alpha](double x, double y) { return x + alpha * y; });
  };
  auto sub_a = [](double alpha) {
    return BinaryRef([alpha](double x, double y) { return x - alpha * y; });
  };
  auto mul = BinaryRef([](double x, double y) { return x * y; });
  auto div = BinaryRef([](double x, double y) { return x / y; });
  auto pow = BinaryRef([](double x, double y) { return std::pow(x, y); });
  auto maximum = BinaryRef([](double x, double y) { return std::max(x, y); });
  auto minimum = BinaryRef([](double x, double y) { return std::min(x, y); });
  auto gelu = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  auto gelu_tanh = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  auto mm = [](const std::vector<Ref>& in, const OpAttrs&) { return Matmul(in[0], in[1]); };
  auto softmax = [](const std::vector<Ref>& in, const OpAttrs& a) {
    return Rows(in[0], a.dim, [](std::vector<double>& row) {
      double m = -INFINITY, s = 0;
      for (double v : row) m = std::max(m, v);
      for (double& v : row) s += (v = std::exp(v - m));
      for (double& v : row) v /= s;
    });
  };
  auto rms = [](const std::vector<Ref>& in, const OpAttrs& a) {
    return Norm(in[0], in.size() > 1 && in[1].numel() ? &in[1] : nullptr, nullptr, a.eps, true);
  };
  auto ln = [](const std::vector<Ref>& in, const OpAttrs& a) {
    return Norm(in[0], in.size() > 1 && in[1].numel() ? &in[1] : nullptr,
                in.size() > 2 && in[2].numel() ? &in[2] : nullptr, a.eps, false);
  };
  OpAttrs none;
  OpAttrs tanh_attrs;
  tanh_attrs.gelu_tanh = true;
  return {
      {"add_same", OpId::kAdd, {In({4, 33}), In({4, 33})}, none, add},
      {"add_bcast_row", OpId::kAdd, {In({5, 7}), In({7})}, none, add},
      {"add_bcast_both", OpId::kAdd, {In({3, 1, 6}), In({4, 1})}, none, add},
      {"add_alpha_transposed", OpId::kAdd, {In({6, 5}, T), In({6, 5})}, Alpha(2.5), add_a(2.5)},
      {"add_scalar_strided", OpId::kAdd, {In({4, 9}, S)}, Scalar(1e-6), add},
      {"sub_alpha_bcast", OpId::kSub, {In({2, 3, 8}), In({3, 1})}, Alpha(0.5), sub_a(0.5)},
      {"sub_scalar", OpId::kSub, {In({17})}, Scalar(3.0), sub_a(1)},
      {"mul_same_strided", OpId::kMul, {In({8, 16}, S), In({8, 16})}, none, mul},
      {"mul_col_bcast", OpId::kMul, {In({6, 10}), In({6, 1})}, none, mul},
      {"mul_scalar_transposed", OpId::kMul, {In({7, 3}, T)}, Scalar(-2.0), mul},
      {"div_bcast", OpId::kDiv, {In({4, 5}), Pos({5})}, none, div, 1e-5, 1e-6},
      {"div_scalar", OpId::kDiv, {In({3, 4})}, Scalar(7.0), div},
      {"pow_square", OpId::kPow, {In({5, 6}, T)}, Scalar(2.0), pow},
      {"pow_fraction", OpId::kPow, {Pos({31})}, Scalar(1.5), pow, 1e-5, 1e-6},
      {"pow_tensor", OpId::kPow, {Pos({3, 4}), In({4})}, none, pow, 1e-5, 1e-6},
      {"maximum_bcast", OpId::kMaximum, {In({4, 6}), In({6})}, none, maximum},
      {"maximum_transposed", OpId::kMaximum, {In({5, 3}, T), In({5, 3})}, none, maximum},
      {"minimum_bcast_strided", OpId::kMinimum, {In({3, 8}, S), In({3, 1})}, none, minimum},
      {"log",
       OpId::kLog,
       {Pos({3, 7})},
       none,
       UnaryRef([](double x) { return std::log(x); }),
       1e-5,
       1e-6},
      {"abs_strided", OpId::kAbs, {In({4, 9}, S)}, none, UnaryRef([](double x) {
         return std::fabs(x);
       })},
      {"reciprocal_transposed",
       OpId::kReciprocal,
       {Pos({6, 5}, T)},
       none,
       UnaryRef([](double x) { return 1 / x; }),
       1e-5,
       1e-6},
      {"relu", OpId::kRelu, {In({33})}, none, UnaryRef([](double x) { return x > 0 ? x : 0; })},
      {"tanh",
       OpId::kTanh,
       {In({2, 3, 7})},
       none,
       UnaryRef([](double x) { return std::tanh(x); }),
       1e-5,
       1e-6},
      {"sigmoid_strided",
       OpId::kSigmoid,
       {In({5, 8}, S)},
       none,
       UnaryRef([](double x) { return 1 / (1 + std::exp(-x)); }),
       1e-5,
       1e-6},
      {"rsqrt", OpId::kRsqrt, {Pos({9, 13}, S)}, none, UnaryRef([](double x) {
         return 1 / std::sqrt(x);
       })},
      {"sqrt", OpId::kSqrt, {Pos({4, 6}, T)}, none, UnaryRef([](double x) {
         return std::sqrt(x);
       })},
      {"exp",
       OpId::kExp,
       {In({2, 3, 5})},
       none,
       UnaryRef([](double x) { return std::exp(x); }),
       1e-5,
       1e-6},
      {"neg_transposed", OpId::kNeg, {In({3, 8}, T)}, none, UnaryRef([](double x) { return -x; })},
      {"silu",
       OpId::kSilu,
       {In({40})},
       none,
       UnaryRef([](double x) { return x / (1 + std::exp(-x)); }),
       1e-5,
       1e-6},
      {"gelu", OpId::kGelu, {In({6, 7}, S)}, none, UnaryRef(gelu), 1e-5, 1e-6},
      {"gelu_tanh", OpId::kGelu, {In({50})}, tanh_attrs, UnaryRef(gelu_tanh), 1e-5, 1e-6},
      {"sum_all", OpId::kSum, {In({7, 9})}, Dims({}, false), ReduceRef(Red::kSum), 1e-5, 1e-5},
      {"sum_last_keepdim",
       OpId::kSum,
       {In({4, 5, 33})},
       Dims({-1}, true),
       ReduceRef(Red::kSum),
       1e-5,
       1e-5},
      {"sum_dim0_transposed",
       OpId::kSum,
       {In({6, 8}, T)},
       Dims({0}, false),
       ReduceRef(Red::kSum),
       1e-5,
       1e-5},
      {"sum_middle",
       OpId::kSum,
       {In({3, 4, 5})},
       Dims({1}, false),
       ReduceRef(Red::kSum),
       1e-5,
       1e-5},
      {"mean_last_keepdim",
       OpId::kMean,
       {In({16, 64})},
       Dims({-1}, true),
       ReduceRef(Red::kMean),
       1e-5,
       1e-6},
      {"mean_two_dims_strided",
       OpId::kMean,
       {In({3, 4, 6}, S)},
       Dims({0, 2}, false),
       ReduceRef(Red::kMean),
       1e-5,
       1e-6},
      {"amax_last", OpId::kAmax, {In({5, 19})}, Dims({-1}, false), ReduceRef(Red::kMax)},
      {"amax_dim0_keepdim_transposed",
       OpId::kAmax,
       {In({4, 7}, T)},
       Dims({0}, true),
       ReduceRef(Red::kMax)},
      {"amin_last", OpId::kAmin, {In({5, 19})}, Dims({-1}, false), ReduceRef(Red::kMin)},
      {"amin_dim0_keepdim_transposed",
       OpId::kAmin,
       {In({4, 7}, T)},
       Dims({0}, true),
       ReduceRef(Red::kMin)},
      {"amin_two_dims_strided",
       OpId::kAmin,
       {In({3, 4, 6}, S)},
       Dims({0, 2}, false),
       ReduceRef(Red::kMin)},
      {"mm", OpId::kMm, {In({5, 7}), In({7, 3})}, none, mm, 1e-5, 1e-5},
      {"mm_transposed", OpId::kMm, {In({6, 4}, T), In({4, 9}, T)}, none, mm, 1e-5, 1e-5},
      {"mm_strided", OpId::kMm, {In({3, 5}, S), In({5, 2})}, none, mm, 1e-5, 1e-5},
      {"bmm", OpId::kBmm, {In({2, 3, 4}), In({2, 4, 5}, T)}, none, mm, 1e-5, 1e-5},
      {"matmul_2d", OpId::kMatmul, {In({4, 6}), In({6, 3})}, none, mm, 1e-5, 1e-5},
      {"matmul_3d_2d", OpId::kMatmul, {In({2, 3, 6}), In({6, 4}, T)}, none, mm, 1e-5, 1e-5},
      {"matmul_batched_bcast",
       OpId::kMatmul,
       {In({2, 1, 3, 4}), In({3, 4, 2})},
       none,
       mm,
       1e-5,
       1e-5},
      {"matmul_vec", OpId::kMatmul, {In({5, 7}), In({7})}, none, mm, 1e-5, 1e-5},
      {"matmul_dot", OpId::kMatmul, {In({11}), In({11})}, none, mm, 1e-5, 1e-5},
      {"softmax_last", OpId::kSoftmax, {In({6, 20})}, Dim(-1), softmax, 1e-5, 1e-6},
      {"softmax_dim0_transposed", OpId::kSoftmax, {In({5, 7}, T)}, Dim(0), softmax, 1e-5, 1e-6},
      {"softmax_middle_strided", OpId::kSoftmax, {In({2, 4, 3}, S)}, Dim(1), softmax, 1e-5, 1e-6},
      {"layer_norm_affine",
       OpId::kLayerNorm,
       {In({6, 32}), In({32}), In({32})},
       NormAttrs({32}, 1e-5),
       ln,
       1e-4,
       1e-5},
      {"layer_norm_plain_transposed",
       OpId::kLayerNorm,
       {In({12, 8}, T)},
       NormAttrs({8}, 1e-5),
       ln,
       1e-4,
       1e-5},
      {"rms_norm_weight",
       OpId::kRmsNorm,
       {In({8, 64}), In({64})},
       NormAttrs({64}, 1e-6),
       rms,
       1e-5,
       1e-6},
      {"rms_norm_no_weight_strided",
       OpId::kRmsNorm,
       {In({3, 5, 16}, S), Absent()},
       NormAttrs({16}, 1e-6),
       rms,
       1e-5,
       1e-6},
      {"fused_rms_norm",
       OpId::kFusedRmsNorm,
       {In({4, 48}, T), In({48})},
       NormAttrs({48}, 1e-5),
       rms,
       1e-5,
       1e-6},
  };
}

// Runs `c` on `device` and compares with `want`.
void ExpectCaseOn(const OpCase& c, const Device& device, const Ref& want) {
  SCOPED_TRACE("device " + device.str());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(MakeInput(c.inputs[i], device, 100 + i));
  }
  const std::vector<Tensor> out = RunOp(c.op, inputs, c.attrs);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].device(), device);
  ASSERT_EQ(out[0].sizes(), want.shape);
  const std::vector<float> got = out[0].ToVector();
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double tol = c.atol + c.rtol * std::fabs(want.v[i]);
    if (!(std::fabs(got[i] - want.v[i]) <= tol)) {
      ++bad;
      ADD_FAILURE() << OpName(c.op) << " element " << i << ": got " << got[i] << ", want "
                    << want.v[i] << " (tolerance " << tol << ")";
    }
  }
}

Ref Expected(const OpCase& c) {
  std::vector<Ref> refs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    refs.push_back(c.inputs[i].absent ? Ref{} : ToRef(MakeInput(c.inputs[i], Device(), 100 + i)));
  }
  return c.reference(refs, c.attrs);
}

// Factories, fills, views and copies between devices and dtypes give the same values on `device`
// as on the cpu.
void ExpectMemoryOpsOn(const Device& device) {
  SCOPED_TRACE("device " + device.str());
  EXPECT_EQ(zeros({2, 3}, device).ToVector(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(ones({4}, device).ToVector(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(full({2, 2}, -1.5, device).ToVector(), std::vector<float>(4, -1.5f));
  EXPECT_EQ(arange(0, 5, 1, device).ToVector(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(randn({3, 5}, 7, device).ToVector(), randn({3, 5}, 7).ToVector());
  // fill_ on a strided view writes only the view.
  Tensor z = zeros({3, 4}, device);
  Tensor col = z.slice(1, 1, 2);
  RunOp(OpId::kFill, std::span<const Tensor>(&col, 1), Scalar(2.0));
  EXPECT_EQ(z.ToVector(), (std::vector<float>{0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0}));
  // copy_ into a transposed view from the cpu, then back through bf16 and contiguous().
  Tensor host = arange(0, 6).view({2, 3});
  Tensor dst = zeros({3, 2}, device).t();
  dst.copy_(host);
  EXPECT_EQ(dst.ToVector(), host.ToVector());
  EXPECT_EQ(dst.contiguous().ToVector(), host.ToVector());
  EXPECT_EQ(dst.to(DType::kBFloat16).to(Device(), DType::kFloat32).ToVector(), host.ToVector());
  EXPECT_EQ(host.to(device).reshape({3, 2}).ToVector(), host.ToVector());
  EXPECT_FLOAT_EQ(full({1}, 3.25, device).item(), 3.25f);
}

class OpConformance : public ::testing::TestWithParam<OpCase> {
 protected:
  static void SetUpTestSuite() { RegisterDevices(); }
};

TEST_P(OpConformance, MatchesReferenceOnEveryDevice) {
  const OpCase& c = GetParam();
  const Ref want = Expected(c);
  const std::vector<Device> devices = RegisteredDevices();
  ASSERT_FALSE(devices.empty());
  for (const Device& device : devices) ExpectCaseOn(c, device, want);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpConformance, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.label;
                         });

TEST(OpConformanceMemory, FactoriesAndCopiesOnEveryDevice) {
  RegisterDevices();
  for (const Device& device : RegisteredDevices()) ExpectMemoryOpsOn(device);
}

// The device list the cases run on: cpu always, neuron when its backend is linked in.
TEST(OpConformanceCoverage, DevicesUnderTest) {
  RegisterDevices();
  const std::vector<Device> devices = RegisteredDevices();
  std::string names;
  for (const Device& d : devices) names += d.str() + " ";
  std::printf("conformance devices: %s\n", names.c_str());
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0], Device("cpu"));
  EXPECT_NE(std::find(devices.begin(), devices.end(), Device("neuron:0")), devices.end());
}

// A backend that forwards everything to the registered one and records which ops reached
// Execute. Execute may be called from a device's worker thread.
class RecordingBackend final : public DeviceBackend {
 public:
  explicit RecordingBackend(DeviceBackend* inner) : inner_(inner) {}

  std::set<OpId> TakeExecuted() {
    std::lock_guard lock(mu_);
    return std::exchange(executed_, {});
  }

  DeviceType type() const override { return inner_->type(); }
  std::string_view name() const override { return inner_->name(); }
  int device_count() const override { return inner_->device_count(); }
  void* Allocate(int device, size_t nbytes) override { return inner_->Allocate(device, nbytes); }
  void Free(int device, void* ptr, size_t nbytes) override { inner_->Free(device, ptr, nbytes); }
  MemoryStats memory_stats(int device) const override { return inner_->memory_stats(device); }
  void set_memory_capacity(int device, size_t bytes) override {
    inner_->set_memory_capacity(device, bytes);
  }
  void CopyFromHost(const TensorRef& dst, const void* src, uint64_t correlation) override {
    inner_->CopyFromHost(dst, src, correlation);
  }
  void CopyToHost(void* dst, const TensorRef& src, uint64_t correlation) override {
    inner_->CopyToHost(dst, src, correlation);
  }
  void Execute(const OpCall& call) override {
    {
      std::lock_guard lock(mu_);
      executed_.insert(call.op);
    }
    inner_->Execute(call);
  }
  void Synchronize(int device) override { inner_->Synchronize(device); }

 private:
  DeviceBackend* inner_;  // owned by the registry, which never frees backends
  std::mutex mu_;
  std::set<OpId> executed_;
};

// Every registry row either has a kernel that every backend ran in the cases above, or states
// why it has none (OpInfo::no_kernel). Each backend runs every case and the memory ops behind a
// RecordingBackend; the cpu is measured before the neuron device runs (whose kernels compute on
// the cpu backend).
TEST(OpConformanceCoverage, EveryRegistryRowHasAKernelOnEveryBackendOrAReason) {
  RegisterDevices();
  std::vector<DeviceType> types;  // every registered backend, cpu first
  for (const Device& d : RegisteredDevices()) {
    if (std::find(types.begin(), types.end(), d.type) == types.end()) types.push_back(d.type);
  }
  ASSERT_GE(types.size(), 2u);
  for (DeviceType type : types) {
    RegisterBackend(std::make_unique<RecordingBackend>(&GetBackend(type)));
    auto* recorder = static_cast<RecordingBackend*>(&GetBackend(type));
    recorder->TakeExecuted();
    const Device device(type, 0);
    for (const OpCase& c : Cases()) ExpectCaseOn(c, device, Expected(c));
    ExpectMemoryOpsOn(device);
    synchronize(device);
    const std::set<OpId> executed = recorder->TakeExecuted();
    for (int i = 0; i < kNumOps; ++i) {
      const OpInfo& info = GetOpInfo(static_cast<OpId>(i));
      if (info.kernel == KernelKind::kNone) {
        EXPECT_STRNE(info.no_kernel, "") << info.name << " has no kernel and no reason";
        EXPECT_FALSE(executed.count(info.id)) << info.name << " reached Execute without a kernel";
      } else {
        EXPECT_TRUE(executed.count(info.id))
            << info.name << "'s kernel did not run on " << device.str()
            << ": add a conformance case that reaches it";
      }
    }
  }
}

}  // namespace
}  // namespace opscope
