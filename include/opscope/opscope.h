// Everything opscope offers, in one include: the profiler, the tensor runtime and its devices,
// compile(), trace analysis and the Explorer. Link opscope::opscope (CMake: find_package(opscope)).
//
//   #include "opscope/opscope.h"
//
//   opscope::RegisterCpuBackend();
//   opscope::Profiler prof({.activities = {opscope::ProfilerActivity::kCPU}});
//   prof.Start();
//   opscope::Tensor y = opscope::rms_norm(opscope::randn({64, 256}, 0), {256},
//                                         opscope::ones({256}), 1e-6);
//   prof.Stop();
//   std::cout << prof.key_averages().Table("self_cpu_time_total", 10);
//
// A program that uses one part can include that part's header alone and link its component
// (opscope::profiler, opscope::tensor, ...); docs/architecture.md lists which header is whose.
#ifndef OPSCOPE_OPSCOPE_H_
#define OPSCOPE_OPSCOPE_H_

#include "opscope/activity.h"
#include "opscope/analysis.h"
#include "opscope/compile.h"
#include "opscope/device.h"
#include "opscope/device_config.h"
#include "opscope/explorer.h"
#include "opscope/export.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "opscope/key_averages.h"
#include "opscope/neuron.h"
#include "opscope/neuron_device.h"
#include "opscope/ops.h"
#include "opscope/perf_analysis.h"
#include "opscope/profiler.h"
#include "opscope/record.h"
#include "opscope/status.h"
#include "opscope/tensor.h"
#include "opscope/trace.h"

#endif  // OPSCOPE_OPSCOPE_H_
