// The NeuronLink ring: real sums, the modeled time, and how a late rank holds the ring back.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

// Runs one all-reduce with `arrive[r]` per rank over rank-specific data; returns each rank's end.
std::vector<int64_t> RunRing(int n, size_t elems, const std::vector<int64_t>& arrive,
                             std::vector<std::vector<float>>* data) {
  RingAllReduce ring(n, NeuronLinkPreset("trn1"));
  data->assign(static_cast<size_t>(n), std::vector<float>(elems));
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < elems; ++i) (*data)[r][i] = static_cast<float>(r * 1000 + i % 97);
  }
  std::vector<int64_t> end(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { end[r] = ring.Run(r, (*data)[r], arrive[r]); });
  }
  for (auto& t : threads) t.join();
  return end;
}

TEST(RingAllReduce, SumsOnEveryRank) {
  for (int n : {1, 2, 3, 5, 8}) {
    for (size_t elems : {size_t{1}, size_t{7}, size_t{1000}}) {
      std::vector<std::vector<float>> data;
      RunRing(n, elems, std::vector<int64_t>(static_cast<size_t>(n), 0), &data);
      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < elems; ++i) {
          float want = 0;
          for (int q = 0; q < n; ++q) want += static_cast<float>(q * 1000 + i % 97);
          ASSERT_EQ(data[r][i], want) << "n=" << n << " elems=" << elems << " rank " << r;
        }
      }
    }
  }
}

TEST(RingAllReduce, TimeIsTwoNMinusOneSteps) {
  // 2(n-1) steps of (hop latency + chunk / link bandwidth), everyone on time.
  const NeuronLinkParams link = NeuronLinkPreset("trn1");
  const int n = 4;
  const size_t elems = 1 << 16;  // 256 KiB, 64 KiB chunks
  std::vector<std::vector<float>> data;
  const auto end = RunRing(n, elems, {1000, 1000, 1000, 1000}, &data);
  const double step = link.hop_latency_ns + 65536.0 / link.link_gbps;
  for (int64_t e : end) EXPECT_NEAR(static_cast<double>(e - 1000), 6 * step, 6);
  EXPECT_NEAR(static_cast<double>(RingAllReduceNs(int64_t{elems} * 4, n, link)), 6 * step, 6);
}

TEST(RingAllReduce, CalibratedOnNccomTest) {
  // Neuron's nccom-test documentation: 2 ranks, 32 MiB all-reduce, 768 us.
  EXPECT_NEAR(static_cast<double>(RingAllReduceNs(33554432, 2, NeuronLinkPreset("trn1"))), 768e3,
              2e3);
}

TEST(RingAllReduce, ALateRankHoldsEveryoneBack) {
  const int n = 5;
  std::vector<std::vector<float>> data;
  const auto on_time = RunRing(n, 4096, {0, 0, 0, 0, 0}, &data);
  const auto late = RunRing(n, 4096, {0, 0, 300'000, 0, 0}, &data);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(late[r], on_time[r] + 300'000) << r;  // everyone ends together, 300 us later
  }
}

TEST(RingAllReduce, RejectsAnEmptyRingAndUnknownPresets) {
  EXPECT_THROW(RingAllReduce(0, NeuronLinkParams{}), std::invalid_argument);
  EXPECT_THROW(NeuronLinkPreset("inf1"), std::invalid_argument);
}

}  // namespace
}  // namespace opscope::neuron
