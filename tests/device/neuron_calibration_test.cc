// Calibration: every figure of ../shared/hardware/public-measurements.md that the model can
// express, run through the programs `opscope model` costs, printed as published | model | ratio.
// The model must come within a geometric-mean error of 1.3x and no case worse than 2x, while the
// reference story's structure still holds in `opscope demo rmsnorm`. The figures are public
// measurements of real Trainium hardware; the model reaches them through documented mechanisms,
// not through constants fitted to each (docs/neuron-model.md, "Calibration").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "device/neuron/model_graph.h"
#include "opscope/neuron.h"
#include "tools/demo_compiled.h"
#include "tools/demo_rmsnorm.h"

namespace opscope::neuron {
namespace {

constexpr char kAdamw[] =
    R"(# AdamW step: NKIBench adamw reference (the kernel stores the new parameters)
input theta 10944,2048
input g 10944,2048
input m 10944,2048
input v 10944,2048
decay = mul theta 0.00001
theta_t = sub theta decay
m1 = mul m 0.9
g1 = mul g 0.1
m_t = add m1 g1
v1 = mul v 0.999
g2 = mul g 0.001
g3 = mul g2 g
v_t = add v1 g3
v_hat = mul v_t 1000
root = sqrt v_hat
den = add root 0.00000001
inv = reciprocal den
lr_m = mul m_t 0.01
step = mul lr_m inv
out = sub theta_t step
output out
)";

constexpr char kRmsNormMatmul[] = R"(input x 4096,1024
input w 1024,2048
h = rmsnorm x
y = mm h w
output y
)";

constexpr char kSwiglu[] = R"(input x 4096,1024
input w_up 1024,3072
input w_gate 1024,3072
input w_down 3072,1024
up = mm x w_up
gate = mm x w_gate
act = silu gate
h = mul act up
y = mm h w_down
output y
)";

struct Figure {
  const char* row;  // row of public-measurements.md
  const char* what;
  double published;  // in `unit`
  const char* unit;
  std::function<double()> model;
};

double DeviceUs(const Program& p, const char* preset) {
  return double(EstimateProgram(p, Preset(preset)).device_ns) / 1e3;
}

// Achieved DMA bandwidth of one physical core on a large copy (GB/s).
double CopyGbps(const char* preset) {
  const Params p = Preset(preset);
  const ProgramCost c =
      EstimateProgram(ParseModelGraph("input x 8192,8192\ny = copy x\noutput y\n", "copy", 4), p);
  return double(c.dma_bytes) / double(c.makespan_ns) / p.logical_core_size;
}

std::vector<Figure> Figures() {
  return {
      {"1", "add [128, 200] f32, trn1, whole execution", 19, "us",
       [] {
         return DeviceUs(ModelOpProgram("add", {128, 200}, 4), "trn1");
       }},
      {"2", "add [128, 200] f32, trn2, whole execution", 15, "us",
       [] {
         return DeviceUs(ModelOpProgram("add", {128, 200}, 4), "trn2");
       }},
      {"5", "SiLU [4096, 7168] f32, trn1", 1333, "us",
       [] {
         return DeviceUs(ModelOpProgram("silu", {4096, 7168}, 4), "trn1");
       }},
      {"6", "AdamW step [10944, 2048] f32, trn1", 1888, "us",
       [] { return DeviceUs(ParseModelGraph(kAdamw, "adamw", 4), "trn1"); }},
      {"8", "matmul M4096 K5120 N12288 f32, trn1", 35200, "us",
       [] {
         return DeviceUs(ModelOpProgram("mm", {4096, 5120, 12288}, 4), "trn1");
       }},
      {"9", "RMSNorm then matmul M4096 K1024 N2048 f32, trn1", 1000, "us",
       [] { return DeviceUs(ParseModelGraph(kRmsNormMatmul, "rmsnorm_mm", 4), "trn1"); }},
      {"10", "SwiGLU M4096 K1024 N3072 f32, trn1", 4223, "us",
       [] { return DeviceUs(ParseModelGraph(kSwiglu, "swiglu", 4), "trn1"); }},
      {"11", "DMA bandwidth per NeuronCore, large copy, trn1", 272, "GB/s",
       [] { return CopyGbps("trn1"); }},
      {"11", "DMA bandwidth per NeuronCore, large copy, trn2", 368, "GB/s",
       [] { return CopyGbps("trn2"); }},
      {"14", "VectorE tensor_tensor, N = 65536 per partition (2N cycles at 1.12 GHz)",
       2 * 65536 / 1.12 / 1e3, "us",
       [] {
         const ProgramCost c =
             EstimateProgram(ModelOpProgram("add", {128, 65536}, 4), Preset("trn1"));
         return double(c.busy_ns[int(Engine::kVector)]) / 1e3;
       }},
  };
}

TEST(NeuronCalibration, PublicTrainiumFiguresWithinTheTargets) {
  double log_sum = 0, worst = 1;
  int n = 0;
  std::printf("%-4s %-70s %14s %14s %7s\n", "row", "what", "published", "model", "ratio");
  for (const Figure& f : Figures()) {
    const double model = f.model();
    const double ratio = model / f.published;
    const double error = std::max(ratio, 1 / ratio);
    log_sum += std::log(error);
    worst = std::max(worst, error);
    ++n;
    std::printf("%-4s %-70s %9.1f %-4s %9.1f %-4s %6.2fx\n", f.row, f.what, f.published, f.unit,
                model, f.unit, ratio);
    EXPECT_LE(error, 2.0) << "row " << f.row << ": " << f.what;
  }
  const double geomean = std::exp(log_sum / n);
  std::printf(
      "geometric-mean error %.3fx (target <= 1.3x), worst %.3fx (target <= 2x), %d "
      "figures\n",
      geomean, worst, n);
  std::printf(
      "not expressible: rows 3-4 (Mamba: a sequential scan), 7 (RoPE: half-partition "
      "slices), 12 (host time: measured, not modelled), 13 (a release note bounding "
      "program_switch_us)\n");
  EXPECT_LE(geomean, 1.3);
}

// The story's structure in `opscope demo rmsnorm` at its default shape, from the same model.
TEST(NeuronCalibration, StoryStructureHoldsInTheDemo) {
  tools::DemoOptions o;
  o.iters = 3;
  o.warmup = 1;
  std::vector<tools::DemoVariant> variants = tools::RmsNormVariants();
  variants.push_back(tools::CompiledRmsNormVariant(::testing::TempDir() + "/calibration_cache"));
  const tools::DemoReport report = tools::RunRmsNormDemo(o, variants);
  double naive = 0, fused = 0, compiled = 0, mul = 0;
  for (const auto& v : report.variants) {
    if (v.name == "naive") {
      naive = v.device_us_per_call;
      for (const auto& [key, share] : v.device_share) mul = key == "aten::mul" ? share : mul;
    }
    if (v.name == "fused") fused = v.device_us_per_call;
    if (v.name == "compiled") compiled = v.device_us_per_call;
  }
  std::printf(
      "demo rmsnorm: naive %.1f us, fused %.1f us (%.2fx), compiled %.1f us (%.3f of "
      "fused), aten::mul %.1f%% of naive's device time\n",
      naive, fused, naive / fused, compiled, compiled / fused, 100 * mul);
  EXPECT_GE(naive / fused, 4.0);
  EXPECT_LE(naive / fused, 8.0);
  EXPECT_GE(mul, 0.40);
  EXPECT_LE(mul, 0.60);
  EXPECT_NEAR(compiled / fused, 1.0, 0.15);
}

}  // namespace
}  // namespace opscope::neuron
