// FLOP and byte counts per op category, as TraceLens's performance model defines them
// (TraceLens/PerfModel/perf_model.py: GEMM, CONV, SDPA, UnaryElementwise, BinaryElementwise,
// Normalization, Reduce). One function per category and quantity, on plain numbers, so any
// analysis (the perf model here, key_averages' FLOP columns) counts the same way.
// docs/perf-model.md lists each formula with its source and where opscope departs from it.
//
//   GemmFlops({.m = 8944, .n = 2816, .k = 1024})  -> 2 * 8944 * 2816 * 1024
//
// Counts are doubles: exact up to 2^53, and FLOP counts of large ops pass 2^31 easily.
#ifndef OPSCOPE_ANALYSIS_PERF_PERF_FORMULAS_H_
#define OPSCOPE_ANALYSIS_PERF_PERF_FORMULAS_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace opscope::perf {

// Bytes per element of a PyTorch dtype name as the profiler records it ("float" -> 4,
// "c10::BFloat16" -> 2, "long int" -> 8, "Scalar" -> 4), case-insensitive; 0 when unknown
// ("int", "bool"). TraceLens's name2bpe.
int BytesPerElement(std::string_view dtype);
// The precision a dtype computes in, for compute specs ("float" -> "fp32", "c10::BFloat16" ->
// "bf16", "c10::Half" -> "fp16", "double" -> "fp64", float8 kinds -> "fp8"); "" when unknown.
// TraceLens's torch_dtype_map.
std::string_view PrecisionOf(std::string_view dtype);

// Product of sizes (1 for a 0-d shape).
double Elements(const std::vector<int64_t>& sizes);

// ---- GEMM: out[B, M, N] = A[B, M, K] x W[B, K, N] (+ bias[N]) ----
struct Gemm {
  double b = 1, m = 0, n = 0, k = 0;
  bool bias = false;
};
double GemmFlops(const Gemm& g);  // B * (2MNK + (bias ? MN : 0))
// B * (MK*bpe_a + KN*bpe_b + MN*bpe_out + (bias ? N*bpe_bias : 0))
double GemmBytes(const Gemm& g, int bpe_a, int bpe_b, int bpe_bias, int bpe_out);

// ---- Convolution (N-d, as torch.utils.flop_counter counts it) ----
struct Conv {
  std::vector<int64_t> x, w;  // input [N, C, ...], filter [C_out, C_in/groups, ...]
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  bool bias = false;
};
// [N, C_out (C_in of w for transposed), spatial...]; nullopt when the ranks do not agree.
std::optional<std::vector<int64_t>> ConvOutputShape(const Conv& c);
// 2 * prod(w[1:]) * prod(out or, transposed, x) + (bias ? prod(out) : 0)
double ConvFlops(const Conv& c, const std::vector<int64_t>& out);
double ConvBytes(const Conv& c, const std::vector<int64_t>& out, int bpe);
double ConvBwdFlops(const Conv& c, const std::vector<int64_t>& out);
double ConvBwdBytes(const Conv& c, const std::vector<int64_t>& out, int bpe);

// ---- Scaled dot-product attention: S = QK^T, P = softmax(S), O = PV ----
struct Attention {
  double b = 0, n_q = 0, h_q = 0, n_kv = 0, h_kv = 0, d_qk = 0, d_v = 0;
  bool causal = false;
};
// B*H_Q*2*N_Q*N_KV*(d_qk + d_v), halved when causal. Causal needs N_Q == N_KV (nullopt).
std::optional<double> SdpaFlops(const Attention& a);
double SdpaBytes(const Attention& a, int bpe);  // read Q, K, V, write O
std::optional<double> SdpaBwdFlops(const Attention& a, bool flash_recompute);
double SdpaBwdBytes(const Attention& a, int bpe);

// ---- Elementwise ----
double UnaryFlops(double elements);  // one op per element
double UnaryBytes(double elements, int bpe_in, int bpe_out);
// numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b);
double BinaryFlops(double out_elements);
double BinaryBytes(double in1, double in2, double out, int bpe_in1, int bpe_in2, int bpe_out);

// ---- Normalization (batch, layer, group, instance norm share one form; RMS norm its own) ----
struct Norm {
  double elements = 0, channels = 0;
  bool has_bias = false, is_affine = false, is_training = false;
};
double NormFlops(const Norm& n);
double NormBytes(const Norm& n, int bpe_in, int bpe_out);
double NormBwdFlops(const Norm& n, bool grad_input);
double NormBwdBytes(const Norm& n, int bpe_in, int bpe_out, bool grad_input);
double RmsNormFlops(const Norm& n);
double RmsNormBytes(const Norm& n, int bpe_in, int bpe_out);

// ---- Reduce (sum, mean, max, ...) ----
double ReduceFlops(double in_elements);  // one op per input element
double ReduceBytes(double in_elements, double out_elements, int bpe_in, int bpe_out);

}  // namespace opscope::perf

#endif  // OPSCOPE_ANALYSIS_PERF_PERF_FORMULAS_H_
