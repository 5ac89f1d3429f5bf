// FLOP and byte formulas (see perf_formulas.h and docs/perf-model.md).
#include "analysis/perf/perf_formulas.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace opscope::perf {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

double Prod(const std::vector<int64_t>& v, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= static_cast<double>(v[i]);
  return p;
}

// (s1, s0, s2, ...): the shape with its first two dimensions swapped.
std::vector<int64_t> SwapFirstTwo(std::vector<int64_t> s) {
  if (s.size() >= 2) std::swap(s[0], s[1]);
  return s;
}

// TraceLens CONV.flops_func(x, w, out, bias, transposed).
double ConvFlopsOf(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                   const std::vector<int64_t>& out, bool bias, bool transposed) {
  const double per_element = 2 * Prod(w, 1);  // w[1] already counts grouped input channels
  const double conv = (transposed ? Prod(x) : Prod(out)) * per_element;
  return conv + (bias ? Prod(out) : 0);
}

// TraceLens CONV.bytes_func(x, w, out, bias, bpe): every tensor read or written once.
double ConvBytesOf(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                   const std::vector<int64_t>& out, bool bias, int bpe) {
  const double bias_elems = bias && out.size() > 1 ? static_cast<double>(out[1]) : 0;
  return (Prod(x) + Prod(w) + bias_elems + Prod(out)) * bpe;
}

}  // namespace

int BytesPerElement(std::string_view dtype) {
  const std::string d = Lower(dtype);
  if (d == "double" || d == "long int") return 8;
  if (d == "float" || d == "scalar") return 4;
  if (d == "c10::half" || d == "c10::bfloat16") return 2;
  if (d == "c10::float8_e4m3fnuz" || d == "c10::float8_e4m3fn" || d == "c10::float8_e5m2" ||
      d == "unsigned char" || d == "signed char" || d == "fp8") {
    return 1;
  }
  return 0;
}

std::string_view PrecisionOf(std::string_view dtype) {
  const std::string d = Lower(dtype);
  if (d == "float") return "fp32";
  if (d == "double") return "fp64";
  if (d == "c10::half") return "fp16";
  if (d == "c10::bfloat16") return "bf16";
  if (d == "c10::float8_e4m3fnuz" || d == "unsigned char" || d == "fp8") return "fp8";
  return "";
}

double Elements(const std::vector<int64_t>& sizes) { return Prod(sizes); }

double GemmFlops(const Gemm& g) { return g.b * (2 * g.m * g.n * g.k + (g.bias ? g.m * g.n : 0)); }

double GemmBytes(const Gemm& g, int bpe_a, int bpe_b, int bpe_bias, int bpe_out) {
  // The bias is taken as [N] (TraceLens: "we just assume bias shape as 1xN").
  return g.b * (g.m * g.k * bpe_a + g.k * g.n * bpe_b + g.m * g.n * bpe_out +
                (g.bias ? g.n * bpe_bias : 0));
}

std::optional<std::vector<int64_t>> ConvOutputShape(const Conv& c) {
  if (c.x.size() < 3 || c.w.size() != c.x.size()) return std::nullopt;
  const size_t nd = c.x.size() - 2;
  if (c.stride.size() < nd || c.padding.size() < nd || c.dilation.size() < nd) return std::nullopt;
  if (c.transposed && c.output_padding.size() < nd) return std::nullopt;
  std::vector<int64_t> out = {c.x[0], c.transposed ? c.w[1] : c.w[0]};
  for (size_t i = 0; i < nd; ++i) {
    const double in = static_cast<double>(c.x[i + 2]), k = static_cast<double>(c.w[i + 2]);
    const double s = static_cast<double>(c.stride[i]), p = static_cast<double>(c.padding[i]);
    const double d = static_cast<double>(c.dilation[i]);
    if (c.transposed) {
      out.push_back(static_cast<int64_t>((in - 1) * s - 2 * p + d * (k - 1) +
                                         static_cast<double>(c.output_padding[i]) + 1));
    } else {
      if (s == 0) return std::nullopt;
      out.push_back(static_cast<int64_t>((in + 2 * p - d * (k - 1) - 1) / s + 1));
    }
  }
  return out;
}

double ConvFlops(const Conv& c, const std::vector<int64_t>& out) {
  return ConvFlopsOf(c.x, c.w, out, c.bias, c.transposed);
}

double ConvBytes(const Conv& c, const std::vector<int64_t>& out, int bpe) {
  return ConvBytesOf(c.x, c.w, out, c.bias, bpe);
}

double ConvBwdFlops(const Conv& c, const std::vector<int64_t>& out) {
  const double input_grad = ConvFlopsOf(out, c.w, c.x, false, !c.transposed);
  const double weight_grad =
      c.transposed
          ? ConvFlopsOf(SwapFirstTwo(out), SwapFirstTwo(c.x), SwapFirstTwo(c.w), false, false)
          : ConvFlopsOf(SwapFirstTwo(c.x), SwapFirstTwo(out), SwapFirstTwo(c.w), false, false);
  return input_grad + weight_grad + (c.bias ? Prod(out) : 0);
}

double ConvBwdBytes(const Conv& c, const std::vector<int64_t>& out, int bpe) {
  const double input_grad = ConvBytesOf(out, c.w, c.x, false, bpe);
  const double weight_grad = ConvBytesOf(out, c.x, c.w, false, bpe);
  // As TraceLens writes it: the bias gradient adds elements, not bytes.
  const double bias_grad = c.bias && out.size() > 1 ? Prod(out) + static_cast<double>(out[1]) : 0;
  return input_grad + weight_grad + bias_grad;
}

std::optional<double> SdpaFlops(const Attention& a) {
  // Flash-attention's benchmark count; softmax is left out (order d smaller).
  double flops =
      a.b * a.h_q * 2 * a.n_q * a.n_kv * a.d_qk + a.b * a.h_q * 2 * a.n_q * a.d_v * a.n_kv;
  if (a.causal) {
    if (a.n_q != a.n_kv) return std::nullopt;
    flops /= 2;
  }
  return flops;
}

double SdpaBytes(const Attention& a, int bpe) {
  const double q = a.b * a.n_q * a.h_q * a.d_qk, k = a.b * a.n_kv * a.h_kv * a.d_qk;
  const double v = a.b * a.n_kv * a.h_kv * a.d_v, o = a.b * a.n_q * a.h_q * a.d_v;
  return (q + k + v + o) * bpe;
}

std::optional<double> SdpaBwdFlops(const Attention& a, bool flash_recompute) {
  const double gqa = a.h_kv > 0 ? static_cast<double>(static_cast<int64_t>(a.h_q / a.h_kv)) : 1;
  double flops = 0;
  if (flash_recompute) flops += a.b * a.h_q * 2 * a.n_q * a.n_kv * a.d_qk;  // recompute QK^T
  flops += a.b * a.h_q * 2 * a.n_kv * a.n_q * a.d_v + a.b * a.n_kv * a.d_v * (gqa - 1);    // dV
  flops += a.b * a.h_q * 2 * a.n_q * a.n_kv * a.d_v;                                       // dP
  flops += a.b * a.h_q * 2 * a.n_q * a.n_kv * a.d_qk;                                      // dQ
  flops += a.b * a.h_q * 2 * a.n_kv * a.n_q * a.d_qk + a.b * a.n_kv * a.d_qk * (gqa - 1);  // dK
  if (a.causal) {
    if (a.n_q != a.n_kv) return std::nullopt;
    flops /= 2;
  }
  return flops;
}

double SdpaBwdBytes(const Attention& a, int bpe) {
  const double q = a.b * a.n_q * a.h_q * a.d_qk, k = a.b * a.n_kv * a.h_kv * a.d_qk;
  const double v = a.b * a.n_kv * a.h_kv * a.d_v, d_o = a.b * a.n_q * a.h_q * a.d_v;
  return (2 * (q + k + v) + d_o) * bpe;  // read Q, K, V, dO; write dQ, dK, dV
}

double UnaryFlops(double elements) { return elements; }

double UnaryBytes(double elements, int bpe_in, int bpe_out) {
  return elements * bpe_in + elements * bpe_out;
}

std::optional<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b) {
  const size_t nd = std::max(a.size(), b.size());
  std::vector<int64_t> out(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t da = i + a.size() >= nd ? a[i + a.size() - nd] : 1;
    const int64_t db = i + b.size() >= nd ? b[i + b.size() - nd] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = std::max(da, db);
  }
  return out;
}

double BinaryFlops(double out_elements) { return out_elements; }

double BinaryBytes(double in1, double in2, double out, int bpe_in1, int bpe_in2, int bpe_out) {
  return in1 * bpe_in1 + in2 * bpe_in2 + out * bpe_out;
}

double NormFlops(const Norm& n) {
  // Per channel: 3 ops to fold mean/std into scale and shift, 3 for 1/std; per element: the
  // multiply-add, and in training 3 more for the statistics.
  double param = n.channels * 3 + n.channels * 3;
  if (n.is_training) param += n.elements * 3;
  return param + 2 * n.elements;
}

double NormBytes(const Norm& n, int bpe_in, int bpe_out) {
  int tensors = 2;  // mean and variance
  if (n.is_affine) tensors += n.has_bias ? 2 : 1;
  if (n.is_training) tensors += 2;  // running statistics written back
  return n.elements * bpe_in + n.elements * bpe_out + tensors * n.channels * bpe_in;
}

double NormBwdFlops(const Norm& n, bool grad_input) {
  const double per_channel_elems = n.channels > 0 ? n.elements / n.channels : 0;
  double per_channel = (n.is_training ? 0 : 3) + 4 * per_channel_elems;
  // As TraceLens writes it: 5 ops per element for dx in training, 2 when no grad_input is asked.
  if (grad_input) {
    if (n.is_training) per_channel += 5 * per_channel_elems;
  } else {
    per_channel += 2 * per_channel_elems;
  }
  return n.channels * per_channel;
}

double NormBwdBytes(const Norm& n, int bpe_in, int bpe_out, bool grad_input) {
  double bytes = n.elements * bpe_out + n.elements * bpe_in * (grad_input && n.is_training ? 2 : 1);
  if (n.is_training) bytes += n.channels * bpe_in;  // saved 1/std
  if (n.is_affine) {
    bytes += n.channels * bpe_in;  // weight
    if (n.is_training) bytes += n.channels * bpe_in * (n.has_bias ? 2 : 1);
  }
  return bytes;
}

double RmsNormFlops(const Norm& n) {
  const double rows = n.channels > 0 ? n.elements / n.channels : 0;
  return rows * (2 * n.channels + 2) + n.elements * (n.is_affine ? 2 : 1);
}

double RmsNormBytes(const Norm& n, int bpe_in, int bpe_out) {
  return n.elements * bpe_in + n.elements * bpe_out + (n.is_affine ? n.channels * bpe_in : 0);
}

double ReduceFlops(double in_elements) { return in_elements; }

double ReduceBytes(double in_elements, double out_elements, int bpe_in, int bpe_out) {
  return in_elements * bpe_in + out_elements * bpe_out;
}

}  // namespace opscope::perf
