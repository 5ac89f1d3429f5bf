// The default thread count: the machine's free cores, and an explicit count honoured.
#include "base/cores.h"

#include <gtest/gtest.h>

namespace opscope {
namespace {

// The default thread count takes only cores the machine's runnable threads leave free (the
// caller's own counted), and one thread unless it gets at least two; an explicit count is honoured
// whatever the load.
TEST(CoresTest, DefaultTakesFreeCoresExplicitIsHonoured) {
  using internal::ResolveDefaultThreads;
  EXPECT_EQ(ResolveDefaultThreads(0, 2, 1.0), 2);  // 2 idle cores (the caller running): both
  EXPECT_EQ(ResolveDefaultThreads(0, 2, 0.0), 2);
  EXPECT_EQ(ResolveDefaultThreads(0, 2, 2.0), 1);    // 2 cores, one busy: below the minimum
  EXPECT_EQ(ResolveDefaultThreads(0, 2, 1.4), 2);    // another thread runnable 40% of the time
  EXPECT_EQ(ResolveDefaultThreads(0, 1, 0.0), 1);    // 1 core
  EXPECT_EQ(ResolveDefaultThreads(0, 16, 1.0), 16);  // idle: every core
  EXPECT_EQ(ResolveDefaultThreads(0, 16, 9.0), 8);
  EXPECT_EQ(ResolveDefaultThreads(0, 16, 15.0), 2);  // two free cores
  EXPECT_EQ(ResolveDefaultThreads(0, 16, 16.0), 1);  // one free core
  EXPECT_EQ(ResolveDefaultThreads(0, 4, 40.0), 1);
  EXPECT_EQ(ResolveDefaultThreads(0, 0, 0.0), 1);
  EXPECT_EQ(ResolveDefaultThreads(2, 16, 40.0), 2);
  EXPECT_EQ(ResolveDefaultThreads(1, 64, 0.0), 1);
  EXPECT_EQ(ResolveDefaultThreads(8, 2, 0.0), 8);
  EXPECT_GE(internal::AffinityCores(), 1);
  EXPECT_GE(internal::RunnableNow(), 1.0);  // this thread is running
  EXPECT_GE(internal::DefaultThreadsNow(0), 1);
  EXPECT_EQ(internal::DefaultThreadsNow(3), 3);
}

}  // namespace
}  // namespace opscope
