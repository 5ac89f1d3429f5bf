// The per-core ring buffer of device activity (max_events_per_nc): overwrites the oldest, counts.
#include "device/neuron/event_ring.h"

#include <gtest/gtest.h>

#include <vector>

#include "opscope/activity.h"

namespace opscope::neuron {
namespace {

TEST(NeuronEventRing, OverwritesTheOldestAndCounts) {
  EventRing ring(3);
  for (int i = 0; i < 5; ++i) {
    DeviceActivity a;
    a.start = i;
    ring.Push(a);
  }
  std::vector<DeviceActivity> out;
  EXPECT_EQ(ring.Drain(&out), 2u);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].start, 2);
  EXPECT_EQ(out[2].start, 4);
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_EQ(ring.Drain(&out), 0u);
}

}  // namespace
}  // namespace opscope::neuron
