// The list scheduler: engines and DMA queues run concurrently, each one instruction at a time.
//
// Instructions are taken in order of the time they become ready (all dependencies' results
// ready; ties by program order). A compute instruction starts on its engine -- for one that may
// run on several, on the engine that finishes it first -- at max(ready, engine free). A DMA
// transfer is issued when ready and when fewer than dma_inflight earlier transfers of its queue
// are outstanding; its data phase starts dma_latency_ns after issue or when the queue's previous
// data phase ends, whichever is later. Because an instruction becomes ready only after its
// dependencies, ready times are taken in non-decreasing order and no resource needs backfilling.
#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <utility>

#include "device/neuron/instruction_graph.h"

namespace opscope::neuron {
namespace {

constexpr Engine kComputeEngines[] = {Engine::kVector, Engine::kScalar, Engine::kGpSimd};

}  // namespace

int64_t InstructionGraph::Schedule(const Params& p) {
  const uint32_t n = static_cast<uint32_t>(instrs_.size());
  busy_ns_.fill(0);
  if (n == 0) return 0;
  // Successor lists (CSR) and in-degrees.
  succ_begin_.assign(n + 1, 0);
  indegree_.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& ins = instrs_[i];
    indegree_[i] = ins.dep_count;
    for (uint32_t d = 0; d < ins.dep_count; ++d) ++succ_begin_[deps_[ins.dep_begin + d] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(deps_.size());
  {
    std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      const Instruction& ins = instrs_[i];
      for (uint32_t d = 0; d < ins.dep_count; ++d) succ_[fill[deps_[ins.dep_begin + d]]++] = i;
    }
  }
  ready_.assign(n, 0);

  const int queues = std::max(1, int(p.dma_queues));
  const size_t inflight = size_t(std::max(1.0, p.dma_inflight));
  const int64_t latency = std::llround(p.dma_latency_ns);
  const bool shared_port = p.vector_gpsimd_shared_port != 0;
  // Per physical core: engine free times, and per DMA queue its data-phase free time and the
  // completion times of its outstanding transfers (a ring of `inflight`).
  std::vector<int64_t> engine_free(size_t(pcores_) * kNumEngines, 0);
  std::vector<int64_t> queue_free(size_t(pcores_) * queues, 0);
  std::vector<int64_t> outstanding(size_t(pcores_) * queues * inflight, 0);
  std::vector<uint32_t> issued(size_t(pcores_) * queues, 0);
  auto resource = [&](int pcore, Engine e) {
    if (shared_port && e == Engine::kGpSimd) e = Engine::kVector;  // one SBUF port
    return size_t(pcore) * kNumEngines + size_t(e);
  };

  using Entry = std::pair<int64_t, uint32_t>;  // (ready time, index)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (uint32_t i = 0; i < n; ++i) {
    if (indegree_[i] == 0) heap.emplace(0, i);
  }
  int64_t makespan = 0;
  while (!heap.empty()) {
    auto [ready, i] = heap.top();
    heap.pop();
    Instruction& ins = instrs_[i];
    if (ins.engine == Engine::kDma) {
      const size_t q = size_t(ins.pcore) * queues + ins.queue;
      int64_t* ring = &outstanding[q * inflight];
      const size_t slot = issued[q]++ % inflight;
      const int64_t issue = std::max(ready, ring[slot]);  // the transfer `inflight` ago is done
      ins.start_ns = std::max(issue + latency, queue_free[q]);
      ins.end_ns = ins.start_ns + ins.duration_ns;
      ins.ready_ns = ins.end_ns;
      queue_free[q] = ins.end_ns;
      ring[slot] = ins.end_ns;
    } else if (ins.engine == Engine::kTensor) {
      int64_t& free_at = engine_free[resource(ins.pcore, Engine::kTensor)];
      ins.start_ns = std::max(ready, free_at);
      ins.end_ns = ins.start_ns + ins.duration_ns;
      ins.ready_ns = ins.end_ns;
      free_at = ins.end_ns;
    } else {
      // Pick the engine (among the candidates) that finishes the instruction first; the
      // preferred engine wins ties.
      Engine best = ins.engine;
      ComputeTime best_time = VectorClassTime(best, ins.work, p);
      int64_t best_start = std::max(ready, engine_free[resource(ins.pcore, best)]);
      for (Engine e : kComputeEngines) {
        if (e == ins.engine || (ins.engines & EngineBit(e)) == 0) continue;
        const ComputeTime t = VectorClassTime(e, ins.work, p);
        const int64_t start = std::max(ready, engine_free[resource(ins.pcore, e)]);
        if (start + t.occupancy_ns < best_start + best_time.occupancy_ns) {
          best = e;
          best_time = t;
          best_start = start;
        }
      }
      ins.engine = best;
      ins.duration_ns = best_time.occupancy_ns;
      ins.start_ns = best_start;
      ins.end_ns = best_start + best_time.occupancy_ns;
      ins.ready_ns = best_start + best_time.ready_ns;
      engine_free[resource(ins.pcore, best)] = ins.end_ns;
    }
    busy_ns_[int(ins.engine)] += ins.duration_ns;
    makespan = std::max(makespan, ins.ready_ns);
    for (uint32_t s = succ_begin_[i]; s < succ_begin_[i + 1]; ++s) {
      const uint32_t j = succ_[s];
      ready_[j] = std::max(ready_[j], ins.ready_ns);
      if (--indegree_[j] == 0) heap.emplace(ready_[j], j);
    }
  }
  return makespan;
}

}  // namespace opscope::neuron
