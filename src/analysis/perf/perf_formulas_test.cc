// The FLOP/byte formulas on small shapes whose counts are worked out by hand in the comments,
// and the op models reading args the way TraceLens's classes do.
#include "analysis/perf/perf_formulas.h"

#include <gtest/gtest.h>

#include "analysis/perf/op_args.h"
#include "analysis/perf/op_models.h"

namespace opscope {
namespace {

using perf::Attention;
using perf::Conv;
using perf::Norm;

TEST(PerfFormulas, DtypeSizesAndPrecisions) {
  EXPECT_EQ(perf::BytesPerElement("c10::BFloat16"), 2);
  EXPECT_EQ(perf::BytesPerElement("float"), 4);
  EXPECT_EQ(perf::BytesPerElement("Scalar"), 4);  // TraceLens counts scalars as 4 bytes
  EXPECT_EQ(perf::BytesPerElement("long int"), 8);
  EXPECT_EQ(perf::BytesPerElement("int"), 0);
  EXPECT_EQ(perf::PrecisionOf("c10::Half"), "fp16");
  EXPECT_EQ(perf::PrecisionOf("double"), "fp64");
  EXPECT_EQ(perf::PrecisionOf("bool"), "");
}

TEST(PerfFormulas, Gemm) {
  const perf::Gemm g{.b = 1, .m = 2, .n = 3, .k = 4, .bias = true};
  EXPECT_EQ(perf::GemmFlops(g), 2 * 2 * 3 * 4 + 2 * 3);             // 54
  EXPECT_EQ(perf::GemmBytes(g, 2, 2, 2, 2), (8 + 12 + 6 + 3) * 2);  // A, W, out, bias[N]
  EXPECT_EQ(perf::GemmFlops({.b = 5, .m = 2, .n = 3, .k = 4}), 5 * 48);
}

TEST(PerfFormulas, Convolution) {
  Conv c;
  c.x = {1, 1, 5, 5};
  c.w = {1, 1, 3, 3};
  c.stride = {1, 1};
  c.padding = {0, 0};
  c.dilation = {1, 1};
  c.output_padding = {0, 0};
  const auto out = perf::ConvOutputShape(c);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(perf::ConvFlops(c, *out), 9 * 2 * 9);            // 9 outputs x 2 x 3x3 taps
  EXPECT_EQ(perf::ConvBytes(c, *out, 4), (25 + 9 + 9) * 4);  // x, w, out
  EXPECT_EQ(perf::ConvBwdFlops(c, *out), 162 + 162);         // dX + dW
  c.bias = true;
  EXPECT_EQ(perf::ConvFlops(c, *out), 162 + 9);
  // Transposed: (3-1)*2 - 2*1 + 1*(3-1) + 1 + 1 = 6 per spatial dim.
  Conv t;
  t.x = {1, 2, 3, 3};
  t.w = {2, 1, 3, 3};
  t.stride = {2, 2};
  t.padding = {1, 1};
  t.dilation = {1, 1};
  t.output_padding = {1, 1};
  t.transposed = true;
  const auto tout = perf::ConvOutputShape(t);
  ASSERT_TRUE(tout);
  EXPECT_EQ(*tout, (std::vector<int64_t>{1, 1, 6, 6}));
  EXPECT_EQ(perf::ConvFlops(t, *tout), 18 * 2 * 9);  // transposed counts per input element
}

TEST(PerfFormulas, Attention) {
  Attention a{.b = 1, .n_q = 4, .h_q = 2, .n_kv = 4, .h_kv = 2, .d_qk = 8, .d_v = 8};
  EXPECT_EQ(*perf::SdpaFlops(a), 2 * (1 * 2 * 2 * 4 * 4 * 8));  // QK^T and PV
  EXPECT_EQ(perf::SdpaBytes(a, 2), 4 * 64 * 2);                 // Q, K, V, O of 64 elements
  EXPECT_EQ(*perf::SdpaBwdFlops(a, true), 5 * 512);             // recompute, dV, dP, dQ, dK
  a.causal = true;
  EXPECT_EQ(*perf::SdpaFlops(a), 512);
  a.n_kv = 8;
  EXPECT_FALSE(perf::SdpaFlops(a).has_value());  // causal needs square attention
}

TEST(PerfFormulas, ElementwiseAndReduce) {
  EXPECT_EQ(perf::BroadcastShape({3, 1}, {1, 4}), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(perf::BroadcastShape({5, 3, 1}, {4}), (std::vector<int64_t>{5, 3, 4}));
  EXPECT_FALSE(perf::BroadcastShape({2, 3}, {4}).has_value());
  EXPECT_EQ(perf::BinaryBytes(12, 1, 12, 4, 8, 4), 12 * 4 + 8 + 12 * 4);
  EXPECT_EQ(perf::UnaryBytes(10, 4, 2), 60);
  EXPECT_EQ(perf::ReduceBytes(100, 1, 4, 4), 404);
}

TEST(PerfFormulas, Normalization) {
  const Norm n{
      .elements = 24, .channels = 4, .has_bias = true, .is_affine = true, .is_training = true};
  // 4*3 + 4*3 per-channel terms, 24*3 statistics, 2*24 multiply-add.
  EXPECT_EQ(perf::NormFlops(n), 12 + 12 + 72 + 48);
  // In and out, plus mean, var, weight, bias and the two running statistics per channel.
  EXPECT_EQ(perf::NormBytes(n, 2, 2), 24 * 2 * 2 + 6 * 4 * 2);
  EXPECT_EQ(perf::NormBwdFlops(n, true), 4 * (4 * 6 + 5 * 6));
  EXPECT_EQ(perf::NormBwdBytes(n, 2, 2, true), 48 + 96 + 8 + 8 + 16);
  const Norm rms{.elements = 24, .channels = 4, .is_affine = true};
  EXPECT_EQ(perf::RmsNormFlops(rms), 6 * (2 * 4 + 2) + 24 * 2);
  EXPECT_EQ(perf::RmsNormBytes(rms, 4, 4), 24 * 4 * 2 + 4 * 4);
}

analysis::OpArgs Parse(std::string_view json) {
  analysis::OpArgsParser parser;
  analysis::OpArgs args;
  EXPECT_TRUE(parser.Parse(json, &args)) << json;
  return args;
}

TEST(OpArgs, ParsesRecordShapesArgs) {
  analysis::OpArgsParser parser;
  analysis::OpArgs a;
  ASSERT_TRUE(parser.Parse(R"({"External id": 7, "Input Dims": [[2, 3], [], [[1], [4, 5]]],
      "Input type": ["float", "Scalar", "TensorList"], "Concrete Inputs": ["", "1", ""]})",
                           &a));
  EXPECT_TRUE(a.has_dims && a.has_types && a.has_concrete);
  EXPECT_FALSE(a.has_strides);
  EXPECT_EQ(a.dims[0].sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(a.dims[1].empty());
  EXPECT_TRUE(a.dims[2].is_list);
  EXPECT_EQ(analysis::FormatShapes(a.dims), "[[2, 3], [], [[1], [4, 5]]]");
  const std::string key(parser.key());
  // The per-event keys do not change the key; other values do.
  ASSERT_TRUE(parser.Parse(R"({"External id": 9, "Input Dims": [[2, 3], [], [[1], [4, 5]]],
      "Input type": ["float", "Scalar", "TensorList"], "Concrete Inputs": ["", "1", ""], "Ev Idx": 3})",
                           &a));
  EXPECT_EQ(parser.key(), key);
  ASSERT_TRUE(parser.Parse(R"({"Input Dims": [[2, 3], [], [[1], [4, 5]]],
      "Input type": ["float", "Scalar", "TensorList"], "Concrete Inputs": ["", "2", ""]})",
                           &a));
  EXPECT_NE(parser.key(), key);
  // Escaped quotes inside strings do not end them.
  ASSERT_TRUE(parser.Parse(R"({"name": "a \"quoted\" }", "Input type": ["float"]})", &a));
  EXPECT_EQ(a.types, (std::vector<std::string>{"float"}));
  EXPECT_FALSE(parser.Parse("[1, 2]", &a));
  EXPECT_FALSE(parser.Parse("{\"Input Dims\": [[1, 2]", &a));
}

TEST(OpModels, ReadsArgsLikeTraceLens) {
  using analysis::ModelKind;
  // aten::addmm(bias[N], A[M,K], B[K,N]): M=8, N=4, K=16 in bf16.
  auto m = analysis::EvaluateOpModel(ModelKind::kAddmm, "aten::addmm",
                                     Parse(R"({"Input Dims": [[4], [8, 16], [16, 4], [], []],
                "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"],
                "Input Strides": [[1], [16, 1], [4, 1], [], []]})"));
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(m.flops, 2 * 8 * 4 * 16 + 8 * 4);
  EXPECT_EQ(*m.bytes, (8 * 16 + 16 * 4 + 8 * 4 + 4) * 2);
  EXPECT_EQ(m.compute_spec, "matrix_bf16");
  EXPECT_EQ(m.params[6].second, "('c10::BFloat16', 'c10::BFloat16')");
  // No Input type: the model cannot apply, and says why.
  m = analysis::EvaluateOpModel(ModelKind::kMm, "aten::mm",
                                Parse(R"({"Input Dims": [[8, 16], [16, 4]]})"));
  EXPECT_FALSE(m.status.ok());
  EXPECT_NE(m.status.message().find("Input type"), std::string::npos);
  // A scalar second operand keeps the tensor's dtype for the output.
  m = analysis::EvaluateOpModel(
      ModelKind::kBinary, "aten::add",
      Parse(R"({"Input Dims": [[16, 1], [], []], "Input type": ["float", "double", "Scalar"],
                "Input Strides": [[1, 1], [], []]})"));
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(*m.bytes, 16 * 4 + 1 * 8 + 16 * 4);
}

TEST(OpModels, UpsampleAndPadFromConcreteInputs) {
  using analysis::ModelKind;
  // upsample_nearest2d of [2, 3, 4, 5] floats to [8, 10]: 2*3*8*10 = 480 output elements, one
  // FLOP each; 120 read and 480 written, 4 bytes each.
  auto m = analysis::EvaluateOpModel(
      ModelKind::kUpsampleNearest, "aten::upsample_nearest2d",
      Parse(R"({"Input Dims": [[2, 3, 4, 5], [], [], []], "Input type": ["float", "", "", ""],
                "Input Strides": [[60, 20, 5, 1], [], [], []],
                "Concrete Inputs": ["", "[8, 10]", "", ""]})"));
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(m.flops, 480);
  EXPECT_EQ(*m.bytes, (120 + 480) * 4);
  EXPECT_EQ(m.compute_spec, "vector_fp32");
  EXPECT_EQ(m.params[1].second, "(2, 3, 8, 10)");
  // Recorded with scale factors (no output size): the model does not apply, as in TraceLens.
  m = analysis::EvaluateOpModel(
      ModelKind::kUpsampleNearest, "aten::upsample_nearest2d",
      Parse(R"({"Input Dims": [[2, 3, 4, 5], [], [], []], "Input type": ["float", "", "", ""],
                "Input Strides": [[60, 20, 5, 1], [], [], []],
                "Concrete Inputs": ["", "", "[2.0, 2.0]", ""]})"));
  EXPECT_FALSE(m.status.ok());
  // replication_pad2d [1, 2, 4, 5] by (left 1, right 2, top 0, bottom 3): W 5 -> 8, H 4 -> 7.
  m = analysis::EvaluateOpModel(
      ModelKind::kReplicationPad, "aten::replication_pad2d",
      Parse(R"({"Input Dims": [[1, 2, 4, 5], []], "Input type": ["c10::BFloat16", ""],
                "Input Strides": [[40, 20, 5, 1], []], "Concrete Inputs": ["", "[1, 2, 0, 3]"]})"));
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(m.flops, 1 * 2 * 7 * 8);
  EXPECT_EQ(*m.bytes, (40 + 112) * 2);
  EXPECT_EQ(m.params[2].second, "[1, 2, 0, 3]");
}

TEST(OpModels, CategoriesWithKernelFallback) {
  EXPECT_EQ(analysis::CategorizeOp("aten::mm", ""), "GEMM");
  EXPECT_EQ(analysis::CategorizeOp("aten::miopen_convolution", ""), "CONV_fwd");
  EXPECT_EQ(analysis::CategorizeOp("aten::gelu", "void at::native::vectorized_elementwise_kernel"),
            "elementwise");
  EXPECT_EQ(analysis::CategorizeOp("aten::all", "void at::native::reduce_kernel<512>"), "reduce");
  EXPECT_EQ(analysis::CategorizeOp("aten::cat", "void at::native::CatArrayBatchedCopy"), "other");
  EXPECT_EQ(analysis::CategorizeOp("triton_poi_fused_add_0", ""), "triton");
}

}  // namespace
}  // namespace opscope
