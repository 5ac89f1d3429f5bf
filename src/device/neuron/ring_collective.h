// All-reduce over a ring of NeuronCores on NeuronLink: the real reduction, moved chunk by chunk
// between the ranks' threads, and its time from a link model.
//
// A ring all-reduce of S bytes over n ranks runs n-1 reduce-scatter steps then n-1 all-gather
// steps; in every step each rank sends one chunk of S/n bytes to the next rank and receives one
// from the previous. A step on rank r can start once r has finished its previous step and r-1 has
// finished its own (it sends what it has just reduced or received), and costs
// hop_latency + chunk / link bandwidth. So with every rank arriving together the collective takes
// 2(n-1) x (hop_latency + S / (n x link)), and a rank that arrives late holds every other rank
// back by its lateness: the delay travels the whole ring within the 2(n-1) steps, and all ranks
// finish together. docs/neuron-model.md gives the parameters' sources.
//
//   opscope::neuron::RingAllReduce ring(4, opscope::neuron::NeuronLinkPreset("trn1"));
//   // on rank r's thread, with its gradient and the model time its device reaches the collective:
//   int64_t end_ns = ring.Run(r, std::span<float>(grad), arrive_ns);  // grad now holds the sum
//
// Thread safety: Run is called once per collective by each of the n ranks' threads, concurrently;
// it blocks until the collective has finished on every rank. One collective at a time.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_RING_COLLECTIVE_H_
#define OPSCOPE_SRC_DEVICE_NEURON_RING_COLLECTIVE_H_

#include <barrier>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace opscope::neuron {

struct NeuronLinkParams {
  double link_gbps = 43.8;       // one ring link, GB/s = bytes per ns, reduction included
  double hop_latency_ns = 1300;  // per ring step: DMA descriptor + semaphore latency
};
// "trn1" (the only preset with a published collective measurement; used for trn2 too). Throws
// std::invalid_argument for another name.
NeuronLinkParams NeuronLinkPreset(std::string_view preset);

// Modeled duration of a ring all-reduce of `bytes` over `ranks` ranks arriving together.
int64_t RingAllReduceNs(int64_t bytes, int ranks, const NeuronLinkParams& link);

class RingAllReduce {
 public:
  // Throws std::invalid_argument for fewer than 1 rank.
  RingAllReduce(int ranks, NeuronLinkParams link);
  RingAllReduce(const RingAllReduce&) = delete;
  RingAllReduce& operator=(const RingAllReduce&) = delete;

  // Sums `data` over the ranks in place (every rank passes the same number of floats) and returns
  // the modeled time, in the caller's time base, at which the collective ends on `rank`.
  // `arrive_ns` is when the rank's device reaches the collective.
  int64_t Run(int rank, std::span<float> data, int64_t arrive_ns);

  int ranks() const { return ranks_; }

 private:
  // Chunk c of a buffer of n floats: [begin, end).
  std::pair<size_t, size_t> Chunk(size_t n, int c) const;

  const int ranks_;
  const NeuronLinkParams link_;
  std::barrier<> barrier_;
  std::vector<std::span<float>> buffers_;  // each rank's data for the running collective
  std::vector<int64_t> step_end_;          // each rank's modeled end of the step just finished
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_RING_COLLECTIVE_H_
