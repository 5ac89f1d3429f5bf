// The op registry: names resolve both ways, every row agrees with the dispatcher's behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "opscope/device.h"
#include "opscope/ops.h"
#include "opscope/tensor.h"

namespace opscope {
namespace {

TEST(OpRegistryTest, NamesAreUniqueAndResolveToTheirOp) {
  std::set<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const auto id = static_cast<OpId>(i);
    const OpInfo& info = GetOpInfo(id);
    EXPECT_EQ(info.id, id);
    EXPECT_EQ(std::string(info.name).rfind("aten::", 0), 0u) << info.name;
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " is listed twice";
    ASSERT_TRUE(FindOp(info.name).has_value()) << info.name;
    EXPECT_EQ(*FindOp(info.name), id);
  }
  EXPECT_FALSE(FindOp("aten::frobnicate").has_value());
  EXPECT_THROW(GetOpInfo(OpId::kNumOps), TensorError);
  const std::vector<std::string_view> supported = SupportedOps();
  EXPECT_EQ(supported.size(), names.size());
  EXPECT_TRUE(std::equal(supported.begin(), supported.end(), names.begin(), names.end()));
}

TEST(OpRegistryTest, RowsDescribeTheOps) {
  EXPECT_STREQ(OpName(OpId::kFusedRmsNorm), "aten::_fused_rms_norm");
  EXPECT_EQ(GetOpInfo(OpId::kMul).kernel, KernelKind::kBinary);
  EXPECT_EQ(GetOpInfo(OpId::kMul).fusion, FusionClass::kPointwise);
  EXPECT_EQ(GetOpInfo(OpId::kMul).arity, 2);
  EXPECT_EQ(GetOpInfo(OpId::kMean).fusion, FusionClass::kReduction);
  EXPECT_EQ(GetOpInfo(OpId::kSoftmax).kernel, KernelKind::kNone);
  EXPECT_STREQ(GetOpInfo(OpId::kSoftmax).no_kernel, "composite: aten::_softmax");
  EXPECT_EQ(GetOpInfo(OpId::kSoftmaxKernel).kernel, KernelKind::kSoftmax);
  EXPECT_FALSE(GetOpInfo(OpId::kItem).interceptable);
  // The schema drives Input Dims: one entry per ATen argument.
  EXPECT_STREQ(GetOpInfo(OpId::kRmsNorm).schema, "TsTs");
}

TEST(OpRegistryTest, RunOpById) {
  RegisterCpuBackend();
  Tensor a = arange(1, 4);
  Tensor b = full({3}, 2.0);
  const Tensor in[] = {a, b};
  std::vector<Tensor> out = RunOp(OpId::kMul, in, OpAttrs{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ToVector(), (std::vector<float>{2, 4, 6}));
  EXPECT_THROW(RunOp(OpId::kNumOps, in, OpAttrs{}), TensorError);
}

}  // namespace
}  // namespace opscope
