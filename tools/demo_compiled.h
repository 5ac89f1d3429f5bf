// The third RMSNorm variant of `opscope demo rmsnorm`: the naive code under compile().
#ifndef OPSCOPE_TOOLS_DEMO_COMPILED_H_
#define OPSCOPE_TOOLS_DEMO_COMPILED_H_

#include <string>

#include "tools/demo_rmsnorm.h"

namespace opscope::tools {

// "compiled": the naive implementation (x*x, mean, +eps, rsqrt, x*r, *w) passed through
// opscope::compile() with backend "neuron" for neuron tensors and "cpu" otherwise (chosen on the
// first call). The compile happens in the demo's warm-up iterations; each profiled call is one
// "Torch-Compiled Region" with one device execution. `cache_dir` empty = the default cache.
DemoVariant CompiledRmsNormVariant(std::string cache_dir = "");

// "compiled / fused = 0.93 (compile() target: within ±15 % of the hand-fused op)" when the
// report has both variants with device (or, on cpu, wall) time; "" otherwise.
std::string CompiledVsFusedLine(const DemoReport& report);

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_DEMO_COMPILED_H_
