// What each ActivityKind is called and where it runs: one row per kind, in enum order.
#include <array>
#include <cstddef>
#include <string_view>

#include "opscope/trace.h"

namespace opscope {
namespace {

struct KindRow {
  ActivityKind kind;
  std::string_view name;      // ActivityKindName
  std::string_view category;  // KinetoCategory
  bool on_device;             // IsDeviceActivity
};

constexpr std::array kKinds = {
    KindRow{ActivityKind::kCpuOp, "cpu_op", "cpu_op", false},
    KindRow{ActivityKind::kUserAnnotation, "user_annotation", "user_annotation", false},
    KindRow{ActivityKind::kPythonFunction, "python_function", "python_function", false},
    KindRow{ActivityKind::kRuntime, "runtime", "privateuse1_runtime", false},
    KindRow{ActivityKind::kDriver, "driver", "privateuse1_driver", false},
    KindRow{ActivityKind::kKernel, "kernel", "kernel", true},
    KindRow{ActivityKind::kMemcpy, "memcpy", "gpu_memcpy", true},
    KindRow{ActivityKind::kMemset, "memset", "gpu_memset", true},
    KindRow{ActivityKind::kDeviceAnnotation, "device_annotation", "gpu_user_annotation", true},
    KindRow{ActivityKind::kInstruction, "instruction", "device_instruction", true},
    KindRow{ActivityKind::kCollective, "collective", "collective_comm", false},
    KindRow{ActivityKind::kSync, "sync", "cuda_sync", false},
    KindRow{ActivityKind::kOverhead, "overhead", "overhead", false},
    KindRow{ActivityKind::kOther, "other", "other", false},
};

constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (static_cast<size_t>(kKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(RowsInEnumOrder(), "kKinds: row i must describe ActivityKind i");
static_assert(kKinds.size() == static_cast<size_t>(ActivityKind::kOther) + 1,
              "kKinds: one row per ActivityKind (kOther is the last)");

// The row of `kind`; kOther's for a value outside the enum (a corrupt or newer record).
const KindRow& RowOf(ActivityKind kind) {
  const size_t i = static_cast<size_t>(kind);
  return i < kKinds.size() ? kKinds[i] : kKinds.back();
}

}  // namespace

std::string_view ActivityKindName(ActivityKind kind) { return RowOf(kind).name; }
std::string_view KinetoCategory(ActivityKind kind) { return RowOf(kind).category; }
bool IsDeviceActivity(ActivityKind kind) { return RowOf(kind).on_device; }

}  // namespace opscope
