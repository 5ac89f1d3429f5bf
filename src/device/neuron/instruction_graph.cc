// Program -> engine instructions: tiling, SBUF residency with capacity, spills, PSUM banks.
#include "device/neuron/instruction_graph.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace opscope::neuron {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Tile keys pack (buffer, physical core, row tile, col tile) into 64 bits: 12 + 4 + 24 + 24.
// Buffers at or past the program's own are a matmul's transposed operand (one per op).
uint64_t TileKey(int64_t buffer, int64_t pcore, int64_t rt, int64_t ct) {
  return (uint64_t(buffer) << 52) | (uint64_t(pcore & 0xf) << 48) | (uint64_t(rt) << 24) |
         uint64_t(ct);
}

[[noreturn]] void Invalid(const Program& p, const std::string& what) {
  throw std::invalid_argument("neuron program '" + p.name + "': " + what);
}

}  // namespace

const char* InternName(std::string_view name) {
  static std::mutex mu;
  static std::unordered_set<std::string>* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  return names->emplace(name).first->c_str();  // node-based: c_str() stays valid
}

uint32_t InstructionGraph::Emit(Instruction ins) {
  if (int64_t(instrs_.size()) >= kMaxInstructions) {
    Invalid(*program_, "lowers to more than " + std::to_string(kMaxInstructions) +
                           " instructions, too large to model");
  }
  std::vector<uint32_t>& deps = pending_deps_;
  deps.insert(deps.end(), evict_deps_.begin(), evict_deps_.end());
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  ins.dep_begin = static_cast<uint32_t>(deps_.size());
  ins.dep_count = static_cast<uint32_t>(deps.size());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  ins.op = cur_op_;
  instrs_.push_back(ins);
  deps.clear();
  evict_deps_.clear();
  return static_cast<uint32_t>(instrs_.size() - 1);
}

void InstructionGraph::EmitTransfer(const char* name, uint32_t t, bool is_load,
                                    std::vector<uint32_t> deps, std::vector<uint32_t>* out) {
  // Emit() takes its deps from pending_deps_: keep the instruction under construction's aside.
  std::vector<uint32_t> saved_pending, saved_evict;
  saved_pending.swap(pending_deps_);
  saved_evict.swap(evict_deps_);
  const Tile tile = tiles_[t];
  const int32_t eb = program_->buffers[tile.buffer].elem_bytes;
  const DmaSplit split = SplitTransfer(tile.rows, *params_);
  for (int64_t j = 0; j < split.pieces; ++j) {
    const int64_t rows = std::min(split.rows_per_piece, tile.rows - j * split.rows_per_piece);
    if (rows <= 0) break;
    Instruction ins;
    ins.name = name;
    ins.engine = Engine::kDma;
    ins.pcore = tile.pcore;
    ins.queue = static_cast<uint16_t>(j % int64_t(params_->dma_queues));
    ins.bytes = rows * tile.cols * eb;
    ins.chunks = rows;
    ins.duration_ns = DmaDataNs(ins.bytes, ins.chunks, *params_);
    ins.is_load = is_load;
    pending_deps_ = deps;
    out->push_back(Emit(ins));
    dma_bytes_ += ins.bytes;
  }
  pending_deps_.swap(saved_pending);
  evict_deps_.swap(saved_evict);
}

uint32_t InstructionGraph::TileIndex(int buffer, int pcore, int64_t rt, int64_t ct) {
  const uint64_t key = TileKey(buffer, pcore, rt, ct);
  auto [it, inserted] = tile_index_.try_emplace(key, uint32_t(tiles_.size()));
  if (!inserted) return it->second;
  Tile t;
  t.buffer = buffer;
  t.pcore = uint8_t(pcore);
  const bool pseudo = buffer >= int(program_->buffers.size());
  if (!pseudo) {
    const Buffer& b = program_->buffers[buffer];
    t.rows = std::min(P_, b.rows - rt * P_);
    const int64_t f = tile_cols_[size_t(buffer)];
    t.cols = std::min(f, b.cols - ct * f);
    t.bytes_pp = t.cols * b.elem_bytes;
    t.in_hbm = b.memory == Memory::kHbm && !written_[buffer];  // a program input
  }
  tiles_.push_back(std::move(t));
  return it->second;
}

void InstructionGraph::Unlink(uint32_t i) {
  Tile& t = tiles_[i];
  Core& c = cores_[t.pcore];
  if (t.prev != UINT32_MAX) tiles_[t.prev].next = t.next;
  if (t.next != UINT32_MAX) tiles_[t.next].prev = t.prev;
  if (c.lru_head == i) c.lru_head = t.next;
  if (c.lru_tail == i) c.lru_tail = t.prev;
  t.prev = t.next = UINT32_MAX;
}

void InstructionGraph::Touch(uint32_t i) {
  Tile& t = tiles_[i];
  Core& c = cores_[t.pcore];
  if (c.lru_head == i) return;
  Unlink(i);
  t.next = c.lru_head;
  if (c.lru_head != UINT32_MAX) tiles_[c.lru_head].prev = i;
  c.lru_head = i;
  if (c.lru_tail == UINT32_MAX) c.lru_tail = i;
}

void InstructionGraph::Evict(uint32_t i) {
  Tile& t = tiles_[i];
  evict_deps_.insert(evict_deps_.end(), t.readers.begin(), t.readers.end());
  evict_deps_.insert(evict_deps_.end(), t.producers.begin(), t.producers.end());
  const bool pseudo = t.buffer >= int(program_->buffers.size());
  if (!pseudo && !t.in_hbm && last_reader_[t.buffer] >= 0) {
    // An intermediate still needed: spill it to HBM (reloaded when read again).
    const bool needed = aligned_ ? (program_->buffers[t.buffer].rows == 1 ||
                                    (t.unit >= cur_unit_ && last_reader_[t.buffer] >= cur_op_))
                                 : last_reader_[t.buffer] >= cur_op_;
    if (needed) {
      static const char* kSpill = InternName("dma_spill");
      std::vector<uint32_t> stores;
      EmitTransfer(kSpill, i, false, t.producers, &stores);
      Tile& s = tiles_[i];  // tiles_ did not grow, but re-take the reference for clarity
      s.hbm_ready = stores;
      s.in_hbm = true;
      spill_bytes_ += s.rows * s.cols * program_->buffers[s.buffer].elem_bytes;
      evict_deps_.insert(evict_deps_.end(), stores.begin(), stores.end());
    }
  }
  Tile& e = tiles_[i];
  e.readers.clear();
  e.producers.clear();
  e.resident = false;
  Unlink(i);
  cores_[e.pcore].sbuf_used_pp -= e.bytes_pp;
}

void InstructionGraph::Allocate(uint32_t i, int unit) {
  Tile& t = tiles_[i];
  t.unit = unit;
  Core& c = cores_[t.pcore];
  const int64_t capacity = int64_t(params_->sbuf_bytes / params_->partitions);
  uint32_t victim = c.lru_tail;
  while (c.sbuf_used_pp + tiles_[i].bytes_pp > capacity && victim != UINT32_MAX) {
    const uint32_t prev = tiles_[victim].prev;
    const Tile& v = tiles_[victim];
    if (victim != i && !v.pinned && v.pending == 0 && !v.sticky) Evict(victim);
    victim = prev;
  }
  c.sbuf_used_pp += tiles_[i].bytes_pp;
  tiles_[i].resident = true;
  Touch(i);
}

void InstructionGraph::Read(int buffer, int pcore, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                            int unit) {
  const Buffer& b = program_->buffers[buffer];
  const int64_t f = tile_cols_[size_t(buffer)];
  const int64_t rt_last = CeilDiv(b.rows, P_) - 1, ct_last = CeilDiv(b.cols, f) - 1;
  const int64_t rt0 = b.rows == 1 ? 0 : std::min(r0 / P_, rt_last);
  const int64_t rt1 = b.rows == 1 ? 0 : std::min((r1 - 1) / P_, rt_last);
  const int64_t ct0 = b.cols == 1 ? 0 : std::min(c0 / f, ct_last);
  const int64_t ct1 = b.cols == 1 ? 0 : std::min((c1 - 1) / f, ct_last);
  for (int64_t rt = rt0; rt <= rt1; ++rt) {
    for (int64_t ct = ct0; ct <= ct1; ++ct) {
      const uint32_t i = TileIndex(buffer, pcore, rt, ct);
      if (!tiles_[i].resident) {
        if (!tiles_[i].in_hbm) {
          Invalid(*program_, "op " + std::to_string(cur_op_) + " reads buffer '" + b.name +
                                 "' before any op writes it");
        }
        // Load it; the space it takes may first have to be freed (its readers must be done).
        std::vector<uint32_t> saved;
        saved.swap(evict_deps_);
        Allocate(i, unit);
        std::vector<uint32_t> deps = tiles_[i].hbm_ready;
        deps.insert(deps.end(), evict_deps_.begin(), evict_deps_.end());
        evict_deps_.swap(saved);
        static const char* kLoad = InternName("dma_load");
        std::vector<uint32_t> loads;
        EmitTransfer(kLoad, i, true, std::move(deps), &loads);
        tiles_[i].producers = std::move(loads);
      }
      Tile& t = tiles_[i];
      Touch(i);
      pending_deps_.insert(pending_deps_.end(), t.producers.begin(), t.producers.end());
      if (!t.pinned) {
        t.pinned = true;
        pinned_.push_back(i);
      }
    }
  }
}

uint32_t InstructionGraph::Write(int buffer, int pcore, int64_t rt, int64_t ct, int unit) {
  const uint32_t i = TileIndex(buffer, pcore, rt, ct);
  if (!tiles_[i].resident) Allocate(i, unit);
  Touch(i);
  if (!tiles_[i].pinned) {
    tiles_[i].pinned = true;
    pinned_.push_back(i);
  }
  return i;
}

void InstructionGraph::Finish(uint32_t id) {
  for (uint32_t i : pinned_) {
    tiles_[i].readers.push_back(id);
    tiles_[i].pinned = false;
  }
  pinned_.clear();
}

void InstructionGraph::Produced(uint32_t i, uint32_t producer) {
  Tile& t = tiles_[i];
  std::erase(t.readers, producer);  // Finish() listed the producer among the tile's readers
  t.producers.push_back(producer);
  if (t.pending > 0 && --t.pending > 0) return;
  if (t.buffer >= int(program_->buffers.size())) return;  // a transposed operand
  if (program_->buffers[t.buffer].memory != Memory::kHbm) return;
  static const char* kStore = InternName("dma_store");
  std::vector<uint32_t> stores;
  EmitTransfer(kStore, i, false, t.producers, &stores);
  Tile& s = tiles_[i];
  s.hbm_ready = stores;
  s.in_hbm = true;
  s.readers.insert(s.readers.end(), stores.begin(), stores.end());
}

uint32_t InstructionGraph::PsumBank(int pcore) {
  Core& c = cores_[pcore];
  const size_t bank = c.psum_next++ % c.psum_free.size();
  if (c.psum_free[bank] != UINT32_MAX) pending_deps_.push_back(c.psum_free[bank]);
  return uint32_t(bank);
}

}  // namespace opscope::neuron
