// Lowering of a Program into engine instructions, and the list scheduler that times them.
//
// Lower() tiles every op over `partitions` rows and `free_tile_bytes` per partition and emits, per
// tile, the compute instruction on the op's engine (an accumulation group per output tile on
// TensorE, after TensorE transposes of the stationary operand and their PSUM evictions) and the
// DMA transfers it needs. Every tile lives in SBUF while in use: inputs are loaded on first use,
// outputs stored when produced, and when a physical core's SBUF is full the least recently used
// tile is evicted (an intermediate still needed later is spilled to HBM and reloaded), so reuse
// degrades gradually with capacity instead of all at once. A logical core of several physical
// cores (trn2's LNC=2) spreads row tiles over them, each with its own engines, DMA queues, SBUF
// and PSUM.
//
// Schedule() runs the instructions as the hardware does: every engine and DMA queue executes one
// instruction at a time, all concurrently; an instruction starts once its engine is free and its
// dependencies' results are ready; an op that may run on several engines takes the one that
// finishes it first; a DMA transfer's setup latency overlaps the transfers before it on its queue
// (up to dma_inflight outstanding).
//
// Not thread-safe: one graph per worker, reused across executions to avoid allocation.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_
#define OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "device/neuron/engine_model.h"
#include "device/neuron/program.h"

namespace opscope::neuron {

// Returns a pointer with static storage duration for `name` (DeviceActivity names need one).
// Thread-safe.
const char* InternName(std::string_view name);

// The phases of one execution of `program` whose engines take `makespan_ns` (ExecPhase order).
std::array<int64_t, kNumExecPhases> ExecPhaseNs(const Program& program, const Params& params,
                                                EstimateOptions options, int64_t makespan_ns);

// Instructions one program may lower to; a larger one is rejected (std::invalid_argument) rather
// than modelled for minutes.
inline constexpr int64_t kMaxInstructions = 8'000'000;

struct Instruction {
  const char* name = "";
  int64_t duration_ns = 0;  // engine occupancy (DMA: the data phase); set by Schedule for flexible
  int64_t bytes = 0;        // DMA: bytes moved; 0 for compute
  int64_t chunks = 0;       // DMA: contiguous chunks (descriptors)
  int64_t start_ns = 0;     // set by Schedule(), relative to the first instruction's start
  int64_t end_ns = 0;       // start + duration
  int64_t ready_ns = 0;     // when dependents may start (end + static overhead for compute)
  ComputeWork work;         // vector-class compute: what the engine streams
  uint32_t dep_begin = 0;   // range in InstructionGraph::deps
  uint32_t dep_count = 0;
  int32_t op = -1;  // index of the program op it belongs to (-1: none)
  Engine engine = Engine::kVector;
  uint8_t engines = 0;   // candidate engines (0: `engine` only); Schedule() picks one
  uint8_t pcore = 0;     // physical core within the logical core
  uint16_t queue = 0;    // DMA queue within the physical core
  bool is_load = false;  // DMA direction: HBM -> SBUF
};

class InstructionGraph {
 public:
  // Replaces the graph with the instructions of `program`. Throws std::invalid_argument for a
  // program whose ops do not fit their buffers or that is too large to model.
  void Lower(const Program& program, const Params& params);
  // Assigns engine, start, end and ready to every instruction; returns the makespan in ns.
  int64_t Schedule(const Params& params);

  const std::vector<Instruction>& instructions() const { return instrs_; }
  int64_t dma_bytes() const { return dma_bytes_; }
  int64_t spill_bytes() const { return spill_bytes_; }
  int physical_cores() const { return pcores_; }
  // Busy time per engine kind after Schedule() (summed over queues and physical cores).
  const std::array<int64_t, kNumEngines>& busy_ns() const { return busy_ns_; }

 private:
  // A tile of a buffer (or of a matmul's transposed operand) on one physical core.
  struct Tile {
    std::vector<uint32_t> producers;  // instructions whose results make up its SBUF copy
    std::vector<uint32_t> readers;    // instructions that read the SBUF copy (or store it)
    std::vector<uint32_t> hbm_ready;  // the stores that put it in HBM (empty: an input)
    int64_t bytes_pp = 0;             // SBUF bytes per partition
    int64_t rows = 0, cols = 0;       // extent of the tile
    uint32_t prev = UINT32_MAX, next = UINT32_MAX;  // LRU list (resident tiles only)
    int32_t buffer = -1;
    int32_t unit = -1;    // row unit it belongs to (spill decisions)
    int32_t pending = 0;  // pieces still to be written (matmul output tiles)
    uint8_t pcore = 0;
    bool resident = false;
    bool in_hbm = false;  // HBM holds a valid copy (inputs, stored outputs, spills)
    bool pinned = false;  // read by the instruction being emitted
    bool sticky = false;  // a transposed operand its matmul unit still needs
  };
  struct Core {  // lowering state of one physical core
    int64_t sbuf_used_pp = 0;
    uint32_t lru_head = UINT32_MAX, lru_tail = UINT32_MAX;  // head = most recent
    std::vector<uint32_t> psum_free;                        // per bank: its last releaser
    size_t psum_next = 0;
  };

  uint32_t Emit(Instruction ins);
  void EmitTransfer(const char* name, uint32_t tile, bool is_load, std::vector<uint32_t> deps,
                    std::vector<uint32_t>* out);
  uint32_t TileIndex(int buffer, int pcore, int64_t rt, int64_t ct);
  void Touch(uint32_t t);
  void Unlink(uint32_t t);
  void Allocate(uint32_t t, int unit);
  void Evict(uint32_t t);
  void Read(int buffer, int pcore, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int unit);
  uint32_t Write(int buffer, int pcore, int64_t rt, int64_t ct, int unit);
  void Produced(uint32_t t, uint32_t producer);
  void Finish(uint32_t id);
  // Reads every input of `op` over rows [r0, r1) and columns [c0, c1) for one tile; returns how
  // many of them stream (a one-column input is broadcast and does not).
  int ReadInputs(const Op& op, int pcore, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int unit);
  void LowerElementwise(int oi, int64_t rt, int unit);
  void LowerRowReduce(int oi, int64_t rt, int unit);
  void LowerMatmulUnit(int oi, int64_t b, int64_t mt, int64_t n_begin, int64_t n_end, int unit);
  uint32_t PsumBank(int pcore);
  // Checks the program against the model's limits and plans its lowering: matmul blocks, tile
  // widths, and whether ops interleave per row unit (aligned_).
  void CheckAndPlan();
  struct PlanTotals;
  void CheckTileable(const Op& op) const;
  void PlanMatmul(int oi, const std::vector<bool>& b_only, PlanTotals* t);
  void PlanMatmulPieces(int oi);
  void PlanSpaceOp(int oi, PlanTotals* t);
  void ChooseOrder(const PlanTotals& t);
  int64_t Units(int oi) const;
  void LowerUnit(int oi, int64_t unit);

  const Program* program_ = nullptr;
  const Params* params_ = nullptr;
  int64_t P_ = 128, F_ = 2048;
  int pcores_ = 1;
  int cur_op_ = 0;
  int cur_unit_ = 0;
  bool aligned_ = true;           // ops interleave per row unit (else one op after another)
  std::vector<int> last_reader_;  // per buffer: last op index reading it (-1: none)
  std::vector<bool> written_;     // per buffer: some op writes it
  std::vector<Instruction> instrs_;
  std::vector<uint32_t> deps_;
  std::vector<Tile> tiles_;
  std::unordered_map<uint64_t, uint32_t> tile_index_;
  std::vector<Core> cores_;
  // Per matmul op: how many (row piece, column piece) results make up each output tile.
  std::vector<std::vector<int32_t>> mm_row_pieces_, mm_col_pieces_;
  // Per matmul op: the columns of B kept resident while every row tile of A streams past them
  // (all of N when B fits in half of SBUF; else the widest multiple of 512 that does).
  std::vector<int64_t> mm_block_cols_;
  // Per buffer: columns per tile (F_, or a matmul's block width for a buffer only read as B).
  std::vector<int64_t> tile_cols_;
  std::vector<uint32_t> pending_deps_;  // deps of the instruction being emitted
  std::vector<uint32_t> pinned_;        // tiles it reads
  std::vector<uint32_t> evict_deps_;    // WAR deps from the space it reuses
  int64_t dma_bytes_ = 0;
  int64_t spill_bytes_ = 0;
  std::array<int64_t, kNumEngines> busy_ns_{};
  // Scheduler scratch.
  std::vector<uint32_t> succ_begin_, succ_, indegree_;
  std::vector<int64_t> ready_;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_INSTRUCTION_GRAPH_H_
