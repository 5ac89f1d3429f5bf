// The RMSNorm case study's third variant: the naive code under compile(), next to naive and
// fused, on the Neuron model (model facts) and on cpu (correctness only; no timings asserted).
#include "tools/demo_compiled.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tools/demo_rmsnorm.h"

namespace opscope::tools {
namespace {

const VariantResult& Find(const DemoReport& r, const std::string& name) {
  for (const auto& v : r.variants) {
    if (v.name == name) return v;
  }
  throw std::runtime_error("no variant " + name);
}

std::string CacheDir() {
  return (std::filesystem::temp_directory_path() /
          ("opscope-demo-compiled-test-" + std::to_string(::getpid())))
      .string();
}

TEST(DemoCompiled, NeuronCompiledIsOneExecutionWithinFifteenPercentOfFused) {
  DemoOptions o;  // the default shape
  o.iters = 2;
  o.warmup = 1;
  std::vector<DemoVariant> variants = RmsNormVariants();
  variants.push_back(CompiledRmsNormVariant(CacheDir()));
  DemoReport report = RunRmsNormDemo(o, variants);
  ASSERT_EQ(report.variants.size(), 3u);
  const VariantResult& naive = Find(report, "naive");
  const VariantResult& fused = Find(report, "fused");
  const VariantResult& compiled = Find(report, "compiled");
  EXPECT_DOUBLE_EQ(compiled.device_executions_per_call, 1);
  EXPECT_NEAR(compiled.device_us_per_call / fused.device_us_per_call, 1.0, 0.15);
  EXPECT_GT(naive.device_us_per_call / compiled.device_us_per_call, 4.0);
  EXPECT_LT(compiled.max_abs_error, 1e-4);
  EXPECT_LE(compiled.bytes_per_call, fused.bytes_per_call * 1.01);
  bool region = false;
  for (const auto& row : compiled.averages.rows()) {
    region = region || row.key.starts_with("Torch-Compiled Region: ");
    EXPECT_NE(row.key, "aten::mul") << "the compiled call must not run eager ops";
  }
  EXPECT_TRUE(region);
  std::string line = CompiledVsFusedLine(report);
  EXPECT_NE(line.find("compiled / fused device time = "), std::string::npos) << line;
  std::string json = FormatDemoJson(report);
  EXPECT_NE(json.find("\"comparison\": [{\"variant\": \"naive\""), std::string::npos);
  EXPECT_NE(json.find("{\"variant\": \"compiled\", \"time\": \"device\""), std::string::npos);
  std::filesystem::remove_all(CacheDir());
}

TEST(DemoCompiled, CpuCompiledMatchesTheReference) {
  DemoOptions o;
  o.device = "cpu";
  o.rows = 8;
  o.hidden = 256;
  o.iters = 2;
  o.warmup = 1;
  std::vector<DemoVariant> variants = RmsNormVariants();
  variants.push_back(CompiledRmsNormVariant(CacheDir()));
  DemoReport report = RunRmsNormDemo(o, variants);
  const VariantResult& compiled = Find(report, "compiled");
  EXPECT_LT(compiled.max_abs_error, 1e-4);
  EXPECT_GT(compiled.wall_us_per_call, 0);
  EXPECT_NE(CompiledVsFusedLine(report).find("wall time"), std::string::npos);
  std::filesystem::remove_all(CacheDir());
}

}  // namespace
}  // namespace opscope::tools
