// The compiled RMSNorm variant of `opscope demo rmsnorm` (demo_compiled.h).
#include "tools/demo_compiled.h"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "opscope/compile.h"

namespace opscope::tools {

DemoVariant CompiledRmsNormVariant(std::string cache_dir) {
  struct Holder {
    std::unique_ptr<CompiledFunction> fn;
    double eps = 0;
  };
  auto holder = std::make_shared<Holder>();
  DemoVariant v;
  v.name = "compiled";
  v.description =
      "compile(naive) (backend \"neuron\" on neuron, \"cpu\" on cpu): one Torch-Compiled Region, "
      "one generated kernel, one device execution";
  v.run = [holder, cache_dir](const Tensor& x, const Tensor& w, double eps) -> Tensor {
    if (!holder->fn || holder->eps != eps) {
      CompileOptions options;
      options.backend = x.device().type == DeviceType::kPrivateUse1 ? "neuron" : "cpu";
      options.cache_dir = cache_dir;
      holder->eps = eps;
      holder->fn = std::make_unique<CompiledFunction>(
          [eps](std::span<const Tensor> in) -> std::vector<Tensor> {
            const Tensor& x = in[0];
            Tensor r = rsqrt(mean(x * x, {-1}, /*keepdim=*/true) + eps);
            return {x * r * in[1]};
          },
          options);
    }
    return (*holder->fn)({x, w})[0];
  };
  return v;
}

std::string CompiledVsFusedLine(const DemoReport& report) {
  const VariantResult* fused = nullptr;
  const VariantResult* compiled = nullptr;
  for (const VariantResult& r : report.variants) {
    if (r.name == "fused") fused = &r;
    if (r.name == "compiled") compiled = &r;
  }
  if (!fused || !compiled) return "";
  const bool dev = !report.model.empty();
  double f = dev ? fused->device_us_per_call : fused->wall_us_per_call;
  double c = dev ? compiled->device_us_per_call : compiled->wall_us_per_call;
  if (f <= 0 || c <= 0) return "";
  return fmt::format(
      "compiled / fused {} time = {:.3f} (compile() target: within +-15 % of the "
      "hand-fused op)\n",
      dev ? "device" : "wall", c / f);
}

}  // namespace opscope::tools
