// ActivityKind's names: Kineto's category spellings, the Explorer's kind names, device or host.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "opscope/trace.h"

namespace opscope {
namespace {

TEST(ActivityKindTest, KinetoCategoriesAreKinetosSpellings) {
  EXPECT_EQ(KinetoCategory(ActivityKind::kCpuOp), "cpu_op");
  EXPECT_EQ(KinetoCategory(ActivityKind::kUserAnnotation), "user_annotation");
  EXPECT_EQ(KinetoCategory(ActivityKind::kRuntime), "privateuse1_runtime");
  EXPECT_EQ(KinetoCategory(ActivityKind::kDriver), "privateuse1_driver");
  EXPECT_EQ(KinetoCategory(ActivityKind::kMemcpy), "gpu_memcpy");
  EXPECT_EQ(KinetoCategory(ActivityKind::kDeviceAnnotation), "gpu_user_annotation");
  EXPECT_EQ(KinetoCategory(ActivityKind::kCollective), "collective_comm");
  EXPECT_EQ(KinetoCategory(ActivityKind::kSync), "cuda_sync");
}

TEST(ActivityKindTest, NamesAreTheEnumeratorsAndDistinct) {
  EXPECT_EQ(ActivityKindName(ActivityKind::kRuntime), "runtime");
  EXPECT_EQ(ActivityKindName(ActivityKind::kMemset), "memset");
  EXPECT_EQ(ActivityKindName(ActivityKind::kDeviceAnnotation), "device_annotation");
  EXPECT_EQ(ActivityKindName(ActivityKind::kInstruction), "instruction");
  std::set<std::string> names;
  const int kinds = static_cast<int>(ActivityKind::kOther) + 1;
  for (int k = 0; k < kinds; ++k) names.insert(std::string(ActivityKindName(ActivityKind(k))));
  EXPECT_EQ(static_cast<int>(names.size()), kinds);
  // A value outside the enum (a corrupt record) reads as kOther.
  EXPECT_EQ(ActivityKindName(static_cast<ActivityKind>(200)), "other");
  EXPECT_EQ(KinetoCategory(static_cast<ActivityKind>(200)), "other");
}

TEST(ActivityKindTest, DeviceActivityIsWhatRunsOnTheDevice) {
  for (ActivityKind k : {ActivityKind::kKernel, ActivityKind::kMemcpy, ActivityKind::kMemset,
                         ActivityKind::kDeviceAnnotation, ActivityKind::kInstruction}) {
    EXPECT_TRUE(IsDeviceActivity(k)) << ActivityKindName(k);
  }
  for (ActivityKind k : {ActivityKind::kCpuOp, ActivityKind::kRuntime, ActivityKind::kDriver,
                         ActivityKind::kCollective, ActivityKind::kSync, ActivityKind::kOther}) {
    EXPECT_FALSE(IsDeviceActivity(k)) << ActivityKindName(k);
  }
}

}  // namespace
}  // namespace opscope
