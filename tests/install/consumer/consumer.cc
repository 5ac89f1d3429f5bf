// Profiles a few ops on the cpu and on the simulated NeuronCore through the installed library and
// prints the key_averages table. Exits 1 when a row the ops must produce is missing.
#include <iostream>
#include <string>

#include "opscope/opscope.h"

namespace {

bool HasRow(const opscope::KeyAverages& averages, const std::string& key) {
  for (const opscope::KeyAverage& row : averages.rows()) {
    if (row.key == key && row.count > 0) return true;
  }
  std::cerr << "consumer: no key_averages row for " << key << "\n";
  return false;
}

}  // namespace

int main() {
  opscope::RegisterCpuBackend();
  opscope::RegisterNeuronBackend();
  opscope::ProfilerOptions options;
  options.activities = {opscope::ProfilerActivity::kCPU, opscope::ProfilerActivity::kPrivateUse1};
  opscope::Profiler prof(options);
  prof.Start();
  {
    opscope::RecordFunction block("consumer_block");
    opscope::Tensor x = opscope::randn({64, 256}, /*seed=*/0);
    opscope::Tensor w = opscope::ones({256});
    opscope::Tensor y = opscope::rms_norm(x, {256}, w, 1e-6);
    opscope::Tensor n = y.to("neuron:0");
    opscope::Tensor m = n * n;
    opscope::neuron::synchronize();
  }
  prof.Stop();
  const opscope::KeyAverages averages = prof.key_averages();
  std::cout << averages.Table("self_cpu_time_total", 12);
  const bool ok = HasRow(averages, "consumer_block") && HasRow(averages, "aten::rms_norm") &&
                  HasRow(averages, "aten::mul") && averages.device_name() == "NEURON";
  return ok ? 0 : 1;
}
