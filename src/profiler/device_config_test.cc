// Tests of the device config (core lists, NeuronConfig defaults) and of schedules against torch's.
#include <gtest/gtest.h>

#include "opscope/profiler.h"

namespace opscope {
namespace {

TEST(ParseCoreListTest, AcceptsListsAndRanges) {
  EXPECT_EQ(ParseCoreList("0,1,2-5"), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ParseCoreList(" 3 , 1-2 ,3"), (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(ParseCoreList("").empty());
}

TEST(ParseCoreListTest, RejectsBadInputWithPosition) {
  for (const char* bad : {"3-1", "x", "1,,2", "1-", "-1", "1;2"}) {
    try {
      ParseCoreList(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ProfilerError& e) {
      EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(DeviceConfigTest, DefaultsMirrorNeuronConfig) {
  DeviceConfig c;
  EXPECT_TRUE(c.HasMode(ProfileMode::kDevice));
  EXPECT_TRUE(c.HasMode(ProfileMode::kRuntime));
  EXPECT_FALSE(c.HasMode(ProfileMode::kCpuUtil));
  EXPECT_EQ(c.max_events_per_nc, 1'000'000);
  EXPECT_TRUE(c.CaptureEnabledFor(7));
  c.capture_enabled_for_nc = "0,2-3";
  EXPECT_TRUE(c.CaptureEnabledFor(2));
  EXPECT_FALSE(c.CaptureEnabledFor(1));
}

// torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
TEST(ScheduleTest, MatchesTorchSchedule) {
  using A = Schedule::Action;
  Schedule s{.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 2};
  std::vector<A> expected = {A::kNone,          A::kNone, A::kWarmup, A::kRecord,
                             A::kRecordAndSave, A::kNone, A::kWarmup, A::kRecord,
                             A::kRecordAndSave, A::kNone, A::kNone};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s.At(static_cast<int64_t>(i)), expected[i]) << "step " << i;
  }
  Schedule forever{.wait = 0, .warmup = 0, .active = 1};
  EXPECT_EQ(forever.At(0), A::kRecordAndSave);
  EXPECT_EQ(forever.At(1000), A::kRecordAndSave);
}

}  // namespace
}  // namespace opscope
