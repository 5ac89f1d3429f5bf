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
#include <vector>

#include "device/neuron/instruction_graph.h"

namespace opscope::neuron {
namespace {

constexpr Engine kComputeEngines[] = {Engine::kVector, Engine::kScalar, Engine::kGpSimd};

// The successor lists of `instrs` in CSR form (`succ` from `begin[i]` to `begin[i + 1]`) and
// their in-degrees, from each instruction's dependencies in `deps`.
void BuildSuccessors(const std::vector<Instruction>& instrs, const std::vector<uint32_t>& deps,
                     std::vector<uint32_t>* begin, std::vector<uint32_t>* succ,
                     std::vector<uint32_t>* indegree) {
  const uint32_t n = static_cast<uint32_t>(instrs.size());
  begin->assign(n + 1, 0);
  indegree->assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& ins = instrs[i];
    (*indegree)[i] = ins.dep_count;
    for (uint32_t d = 0; d < ins.dep_count; ++d) ++(*begin)[deps[ins.dep_begin + d] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) (*begin)[i + 1] += (*begin)[i];
  succ->resize(deps.size());
  std::vector<uint32_t> fill(begin->begin(), begin->end() - 1);
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& ins = instrs[i];
    for (uint32_t d = 0; d < ins.dep_count; ++d) (*succ)[fill[deps[ins.dep_begin + d]]++] = i;
  }
}

// When each resource of `pcores` physical cores is next free, while one graph is scheduled:
// engine free times, and per DMA queue its data-phase free time and the completion times of its
// outstanding transfers (a ring of `inflight`). Each Place* puts an instruction that is ready at
// `ready` on its resource and sets its start_ns, end_ns and ready_ns.
class Timelines {
 public:
  Timelines(const Params& p, int pcores)
      : p_(p),
        queues_(std::max(1, int(p.dma_queues))),
        inflight_(size_t(std::max(1.0, p.dma_inflight))),
        latency_(std::llround(p.dma_latency_ns)),
        shared_port_(p.vector_gpsimd_shared_port != 0),
        engine_free_(size_t(pcores) * kNumEngines, 0),
        queue_free_(size_t(pcores) * queues_, 0),
        outstanding_(size_t(pcores) * queues_ * inflight_, 0),
        issued_(size_t(pcores) * queues_, 0) {}

  void PlaceDma(Instruction& ins, int64_t ready) {
    const size_t q = size_t(ins.pcore) * queues_ + ins.queue;
    int64_t* ring = &outstanding_[q * inflight_];
    const size_t slot = issued_[q]++ % inflight_;
    const int64_t issue = std::max(ready, ring[slot]);  // the transfer `inflight` ago is done
    ins.start_ns = std::max(issue + latency_, queue_free_[q]);
    ins.end_ns = ins.start_ns + ins.duration_ns;
    ins.ready_ns = ins.end_ns;
    queue_free_[q] = ins.end_ns;
    ring[slot] = ins.end_ns;
  }

  void PlaceTensor(Instruction& ins, int64_t ready) {
    int64_t& free_at = engine_free_[Resource(ins.pcore, Engine::kTensor)];
    ins.start_ns = std::max(ready, free_at);
    ins.end_ns = ins.start_ns + ins.duration_ns;
    ins.ready_ns = ins.end_ns;
    free_at = ins.end_ns;
  }

  // Picks the engine (among the candidates) that finishes the instruction first; the preferred
  // engine wins ties. Also sets the instruction's engine and duration_ns.
  void PlaceCompute(Instruction& ins, int64_t ready) {
    Engine best = ins.engine;
    ComputeTime best_time = VectorClassTime(best, ins.work, p_);
    int64_t best_start = std::max(ready, engine_free_[Resource(ins.pcore, best)]);
    for (Engine e : kComputeEngines) {
      if (e == ins.engine || (ins.engines & EngineBit(e)) == 0) continue;
      const ComputeTime t = VectorClassTime(e, ins.work, p_);
      const int64_t start = std::max(ready, engine_free_[Resource(ins.pcore, e)]);
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
    engine_free_[Resource(ins.pcore, best)] = ins.end_ns;
  }

 private:
  size_t Resource(int pcore, Engine e) const {
    if (shared_port_ && e == Engine::kGpSimd) e = Engine::kVector;  // one SBUF port
    return size_t(pcore) * kNumEngines + size_t(e);
  }

  const Params& p_;
  const int queues_;
  const size_t inflight_;
  const int64_t latency_;
  const bool shared_port_;
  std::vector<int64_t> engine_free_, queue_free_, outstanding_;
  std::vector<uint32_t> issued_;
};

}  // namespace

int64_t InstructionGraph::Schedule(const Params& p) {
  const uint32_t n = static_cast<uint32_t>(instrs_.size());
  busy_ns_.fill(0);
  if (n == 0) return 0;
  BuildSuccessors(instrs_, deps_, &succ_begin_, &succ_, &indegree_);
  ready_.assign(n, 0);
  Timelines timelines(p, pcores_);

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
      timelines.PlaceDma(ins, ready);
    } else if (ins.engine == Engine::kTensor) {
      timelines.PlaceTensor(ins, ready);
    } else {
      timelines.PlaceCompute(ins, ready);
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
