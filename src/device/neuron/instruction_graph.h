// Lowering of a Program into engine instructions, and the list scheduler that times them.
//
// Lower() tiles every op over `partitions` rows and `free_tile_bytes` per partition, emitting one
// compute instruction per tile on the op's engine and DMA transfers for the tiles of HBM buffers
// (each split into up to `dma_queues` pieces, one per queue). Schedule() runs the instructions as
// the hardware does: every engine (and every DMA queue) executes one instruction at a time, all
// engines concurrently, an instruction starting once its engine is free and its dependencies have
// finished.
//
// Not thread-safe: one graph per worker, reused across executions to avoid allocation.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_
#define OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_

#include <cstdint>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opscope/neuron.h"

namespace opscope::neuron {

// Returns a pointer with static storage duration for `name` (DeviceActivity names need one).
// Thread-safe.
const char* InternName(std::string_view name);

struct Instruction {
  const char* name = "";
  int64_t duration_ns = 0;
  int64_t bytes = 0;     // DMA: bytes moved; 0 for compute
  int64_t start_ns = 0;  // set by Schedule(), relative to the first instruction's start
  int64_t end_ns = 0;
  uint32_t dep_begin = 0;  // range in InstructionGraph::deps
  uint32_t dep_count = 0;
  int32_t op = -1;  // index of the program op it belongs to
  Engine engine = Engine::kVector;
  uint16_t queue = 0;    // lane within the engine kind (DMA queue index), set by Schedule()
  bool is_load = false;  // DMA direction: HBM -> SBUF
};

class InstructionGraph {
 public:
  // Replaces the graph with the instructions of `program`. Throws std::invalid_argument for a
  // program whose ops do not fit their buffers.
  void Lower(const Program& program, const Params& params);
  // Assigns start/end/queue to every instruction; returns the makespan in ns.
  int64_t Schedule(const Params& params);

  const std::vector<Instruction>& instructions() const { return instrs_; }
  int64_t dma_bytes() const { return dma_bytes_; }
  // Busy time per engine kind after Schedule() (DMA summed over its queues).
  const std::array<int64_t, kNumEngines>& busy_ns() const { return busy_ns_; }

 private:
  struct TileRange {
    uint32_t first;
    uint32_t count;
  };
  uint32_t Emit(Instruction ins, const std::vector<uint32_t>& deps);
  TileRange EmitTransfer(const char* name, int64_t bytes, int64_t partitions, bool is_load,
                         int32_t op, const std::vector<uint32_t>& deps, const Params& params);
  // Adds to `deps` the instructions that make tile (rt, ct) of input buffer `b` available,
  // loading it from HBM first when nothing has.
  void NeedTile(const Program& program, int b, int64_t rt, int64_t ct, int32_t op, bool cache,
                const Params& params, std::vector<uint32_t>* deps);
  int64_t ComputeNs(Engine engine, double flops, const Params& params) const;

  std::vector<Instruction> instrs_;
  std::vector<uint32_t> deps_;
  std::unordered_map<uint64_t, TileRange> tiles_;  // (buffer, op?, rt, ct) -> producers
  std::vector<uint32_t> scratch_;
  int64_t dma_bytes_ = 0;
  std::array<int64_t, kNumEngines> busy_ns_{};
  // Scheduler scratch.
  std::vector<uint32_t> succ_begin_, succ_, indegree_;
  std::vector<int64_t> ready_;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_
