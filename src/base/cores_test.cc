// The default thread count: the machine's free cores, and an explicit count honoured.
#include "base/cores.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/parallel_for.h"

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

// The load the default reads: the median of its samples, so a burst at the start (the samples
// an `opscope explore` start read on an idle 2-core machine while its page polled) is not taken
// for load: both cores are used.
TEST(CoresTest, DefaultReadsTheMedianOfItsSamples) {
  std::vector<double> burst = {4, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(internal::MedianRunnable(burst), 1.0);
  EXPECT_EQ(internal::ResolveDefaultThreads(0, 2, internal::MedianRunnable(burst)), 2);
  std::vector<double> busy = {2, 3, 2, 2, 1, 2, 2};  // another thread running throughout
  EXPECT_EQ(internal::MedianRunnable(busy), 2.0);
  EXPECT_EQ(internal::ResolveDefaultThreads(0, 2, internal::MedianRunnable(busy)), 1);
  std::vector<double> even = {1, 3};
  EXPECT_EQ(internal::MedianRunnable(even), 2.0);
  EXPECT_EQ(internal::MedianRunnable({}), -1.0);
}

// No count runs more than kMaxThreads threads: an explicit count, the cores of a huge machine, or
// ParallelFor asked for a million threads over a million items.
TEST(CoresTest, ThreadCountsAreCapped) {
  using internal::kMaxThreads;
  using internal::ResolveDefaultThreads;
  EXPECT_EQ(internal::CapThreads(100000), kMaxThreads);
  EXPECT_EQ(internal::CapThreads(kMaxThreads), kMaxThreads);
  EXPECT_EQ(internal::CapThreads(-5), 1);
  EXPECT_EQ(ResolveDefaultThreads(100000, 2, 0.0), kMaxThreads);
  EXPECT_EQ(ResolveDefaultThreads(0, 4096, 1.0), kMaxThreads);
  EXPECT_EQ(internal::DefaultThreadsNow(1 << 30), kMaxThreads);
  std::mutex mu;
  std::set<std::thread::id> ran_on;
  std::atomic<size_t> ran{0};
  internal::ParallelFor(1 << 20, size_t{1} << 20, [&](size_t i) {
    ran.fetch_add(1, std::memory_order_relaxed);
    if (i % 64 != 0) return;
    std::lock_guard<std::mutex> lock(mu);
    ran_on.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ran.load(), size_t{1} << 20);
  EXPECT_LE(ran_on.size(), static_cast<size_t>(kMaxThreads));
}

}  // namespace
}  // namespace opscope
