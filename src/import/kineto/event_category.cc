// Categories: activity kinds and the device family (see event_category.h).
#include "import/kineto/event_category.h"

#include <algorithm>
#include <cctype>

namespace opscope::import {

ActivityKind KindFromCategory(std::string_view cat) {
  // Legacy exports (torch.autograd.profiler without Kineto: a top-level array, pid "CPU
  // functions") carry no cat: their complete events are the ops.
  if (cat.empty() || cat == "cpu_op" || cat == "Operator") return ActivityKind::kCpuOp;
  if (cat == "user_annotation") return ActivityKind::kUserAnnotation;
  if (cat == "python_function") return ActivityKind::kPythonFunction;
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") return ActivityKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return ActivityKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return ActivityKind::kMemset;
  if (cat == "gpu_user_annotation") return ActivityKind::kDeviceAnnotation;
  if (cat == "device_instruction") return ActivityKind::kInstruction;
  if (cat == "collective_comm") return ActivityKind::kCollective;
  if (cat == "cuda_sync") return ActivityKind::kSync;
  if (cat == "overhead") return ActivityKind::kOverhead;
  if (cat == "Runtime" || (cat.size() > 8 && cat.substr(cat.size() - 8) == "_runtime")) {
    return ActivityKind::kRuntime;
  }
  if (cat == "Driver" || (cat.size() > 7 && cat.substr(cat.size() - 7) == "_driver")) {
    return ActivityKind::kDriver;
  }
  return ActivityKind::kOther;
}

void DeviceFamily::NoteCategory(std::string_view cat) {
  if (cat.substr(0, 5) == "cuda_" || cat == "kernel" || cat == "gpu_memcpy") cuda_ = true;
  if (cat.substr(0, 5) == "mtia_") mtia_ = true;
  if (cat.substr(0, 4) == "xpu_") xpu_ = true;
  if (cat.substr(0, 12) == "privateuse1_") privateuse1_ = true;
  if (cat == "Kernel" || cat == "Runtime") cuda_ = true;
}

std::string DeviceFamily::DeviceType(const Trace& trace) const {
  if (!hint_.empty()) return hint_;
  if (mtia_) return "MTIA";
  if (xpu_) return "XPU";
  if (privateuse1_) {
    std::string type = "PRIVATEUSE1";
    for (const Process& p : trace.processes()) {
      std::string both = std::string(trace.Str(p.name)) + " " + std::string(trace.Str(p.labels));
      std::transform(both.begin(), both.end(), both.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (both.find("neuron") != std::string::npos) type = "NEURON";
    }
    return type;
  }
  if (cuda_ || device_properties_) return "CUDA";
  return "";
}

}  // namespace opscope::import
