// NeuronTraceBuilder's execution lookup: the hinted search answers as the plain one does, whatever
// order the times come in.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "import/neuron/neuron_trace_builder.h"
#include "opscope/trace.h"

namespace opscope::import::neuron {
namespace {

TEST(NeuronTraceBuilder, HintedExecutionLookupAnswersAsTheSearch) {
  Trace trace;
  NeuronTraceBuilder builder(&trace);
  const uint32_t device = builder.Device("i-0", 0);
  // Gaps between executions, two that overlap, two that start together.
  for (const Execution& e : std::vector<Execution>{{100, 200, 1, 0},
                                                   {300, 400, 2, 0},
                                                   {350, 500, 3, 0},
                                                   {600, 600, 4, 0},
                                                   {600, 700, 5, 0},
                                                   {900, 1000, 6, 0}}) {
    builder.AddExecution(device, e);
  }
  builder.SortExecutions();
  // The answer is the last execution starting at or before the time, when it still runs then.
  const auto id_at = [&](int64_t t) {
    const Execution* e = builder.FindExecution(device, t);
    return e != nullptr ? e->external_id : 0;
  };
  EXPECT_EQ(id_at(50), 0);
  EXPECT_EQ(id_at(150), 1);
  EXPECT_EQ(id_at(250), 0);
  EXPECT_EQ(id_at(320), 2);
  EXPECT_EQ(id_at(380), 3);
  EXPECT_EQ(id_at(450), 3);
  EXPECT_EQ(id_at(600), 5);
  EXPECT_EQ(id_at(800), 0);
  EXPECT_EQ(id_at(1000), 6);
  std::vector<int64_t> times;
  for (int64_t t = 0; t <= 1100; t += 10) times.push_back(t);  // in time order
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i)
    times.push_back(std::uniform_int_distribution<int64_t>(0, 1100)(rng));
  size_t hint = 0;
  for (int64_t t : times) {
    EXPECT_EQ(builder.FindExecution(device, t, &hint), builder.FindExecution(device, t))
        << "at " << t;
  }
  size_t stale = 1000;  // a hint past the end is searched, not read
  EXPECT_EQ(builder.FindExecution(device, 150, &stale), builder.FindExecution(device, 150));
}

TEST(NeuronTraceBuilder, HintedLookupOnADeviceWithoutExecutions) {
  Trace trace;
  NeuronTraceBuilder builder(&trace);
  const uint32_t device = builder.Device("i-0", 0);
  size_t hint = 0;
  EXPECT_EQ(builder.FindExecution(device, 5, &hint), nullptr);
  const Execution& only = builder.SynthesizedExecution(device);
  EXPECT_EQ(builder.FindExecution(device, 5, &hint), &only);
}

}  // namespace
}  // namespace opscope::import::neuron
