// The NeuronLink ring all-reduce (RingAllReduce in opscope/neuron.h): the chunked reduction
// between the ranks' threads and its modeled time.
#include <algorithm>
#include <barrier>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

int64_t StepNs(int64_t chunk_bytes, const NeuronLinkParams& link) {
  return static_cast<int64_t>(
      std::llround(link.hop_latency_ns + static_cast<double>(chunk_bytes) / link.link_gbps));
}

}  // namespace

struct RingAllReduce::State {
  State(int ranks, NeuronLinkParams link)
      : ranks(ranks), link(link), barrier(ranks), buffers(size_t(ranks)), step_end(size_t(ranks)) {}

  // Chunk c of a buffer of n floats: [begin, end).
  std::pair<size_t, size_t> Chunk(size_t n, int c) const {
    const size_t per = (n + static_cast<size_t>(ranks) - 1) / static_cast<size_t>(ranks);
    const size_t begin = std::min(n, per * static_cast<size_t>(c));
    return {begin, std::min(n, begin + per)};
  }

  const int ranks;
  const NeuronLinkParams link;
  std::barrier<> barrier;
  std::vector<std::span<float>> buffers;  // each rank's data for the running collective
  std::vector<int64_t> step_end;          // each rank's modeled end of the step just finished
};

NeuronLinkParams NeuronLinkPreset(std::string_view preset) {
  if (preset == "trn1" || preset == "trn2") return NeuronLinkParams{};
  throw std::invalid_argument("unknown NeuronLink preset '" + std::string(preset) +
                              "' (known: trn1, trn2)");
}

int64_t RingAllReduceNs(int64_t bytes, int ranks, const NeuronLinkParams& link) {
  if (ranks <= 1) return 0;
  return 2 * (ranks - 1) * StepNs((bytes + ranks - 1) / ranks, link);
}

RingAllReduce::RingAllReduce(int ranks, NeuronLinkParams link)
    : state_(std::make_unique<State>(
          ranks > 0 ? ranks : throw std::invalid_argument("a ring needs at least one rank"),
          link)) {}

RingAllReduce::~RingAllReduce() = default;

int RingAllReduce::ranks() const { return state_->ranks; }

int64_t RingAllReduce::Run(int rank, std::span<float> data, int64_t arrive_ns) {
  State& st = *state_;
  const auto me = static_cast<size_t>(rank);
  st.buffers[me] = data;
  st.step_end[me] = arrive_ns;
  st.barrier.arrive_and_wait();  // every rank's buffer and arrival are published
  const int n = st.ranks;
  const int prev = (rank + n - 1) % n;
  const auto [b0, e0] = st.Chunk(data.size(), 0);
  const int64_t step_ns = StepNs(static_cast<int64_t>((e0 - b0) * sizeof(float)), st.link);
  int64_t now = arrive_ns;
  for (int s = 0; s < 2 * (n - 1); ++s) {
    // Reduce-scatter (s < n-1): receive chunk (rank-s-1) from prev and add it to ours.
    // All-gather: receive the fully reduced chunk (rank-s') from prev and keep it.
    const bool reduce = s < n - 1;
    const int c = reduce ? ((rank - s - 1) % n + n) % n : ((rank - (s - (n - 1))) % n + n) % n;
    const auto [begin, end] = st.Chunk(data.size(), c);
    const std::span<float> from = st.buffers[static_cast<size_t>(prev)];
    for (size_t i = begin; i < end; ++i) data[i] = reduce ? data[i] + from[i] : from[i];
    now = std::max(now, st.step_end[static_cast<size_t>(prev)]) + step_ns;
    st.barrier.arrive_and_wait();  // everyone has read the previous step's times and chunks
    st.step_end[me] = now;
    st.barrier.arrive_and_wait();  // everyone's step end is published
  }
  return now;
}

}  // namespace opscope::neuron
