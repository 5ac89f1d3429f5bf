// The list scheduler: engines (and DMA queues) run concurrently, each one instruction at a time.
//
// Instructions are taken in order of the time they become ready (all dependencies finished; ties
// by program order) and each starts on its engine -- for DMA, on the queue free earliest -- at
// max(ready, engine free). Because an instruction becomes ready only after its dependencies end,
// ready times are taken in non-decreasing order, so no engine ever needs backfilling.
#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "device/neuron/instruction_graph.h"

namespace opscope::neuron {

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
    std::vector<uint32_t>& fill = scratch_;
    fill.assign(succ_begin_.begin(), succ_begin_.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      const Instruction& ins = instrs_[i];
      for (uint32_t d = 0; d < ins.dep_count; ++d) succ_[fill[deps_[ins.dep_begin + d]]++] = i;
    }
  }
  ready_.assign(n, 0);

  const int queues = std::max(1, int(p.dma_queues));
  std::vector<int64_t> engine_free(kNumEngines, 0);
  std::vector<int64_t> queue_free(queues, 0);
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
    int64_t* free_at;
    if (ins.engine == Engine::kDma) {
      int q = int(std::min_element(queue_free.begin(), queue_free.end()) - queue_free.begin());
      ins.queue = static_cast<uint16_t>(q);
      free_at = &queue_free[q];
    } else {
      ins.queue = 0;
      free_at = &engine_free[int(ins.engine)];
    }
    ins.start_ns = std::max(ready, *free_at);
    ins.end_ns = ins.start_ns + ins.duration_ns;
    *free_at = ins.end_ns;
    busy_ns_[int(ins.engine)] += ins.duration_ns;
    makespan = std::max(makespan, ins.end_ns);
    for (uint32_t s = succ_begin_[i]; s < succ_begin_[i + 1]; ++s) {
      uint32_t j = succ_[s];
      ready_[j] = std::max(ready_[j], ins.end_ns);
      if (--indegree_[j] == 0) heap.emplace(ready_[j], j);
    }
  }
  return makespan;
}

}  // namespace opscope::neuron
