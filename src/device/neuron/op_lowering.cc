// Program ops -> instructions: the order tiles are visited in, and each op class's instructions.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "device/neuron/instruction_graph.h"

namespace opscope::neuron {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMaxBuffers = 1 << 12;
constexpr int64_t kMaxTileIndex = 1 << 24;
constexpr int64_t kPsumCols = 512;  // a PSUM bank: 2 KiB of FP32 per partition
constexpr uint8_t kEvictEngines = EngineBit(Engine::kVector) | EngineBit(Engine::kScalar);

[[noreturn]] void Invalid(const Program& p, const std::string& what) {
  throw std::invalid_argument("neuron program '" + p.name + "': " + what);
}

// The rows an op iterates over: its output's (elementwise, matmul) or its first input's.
int64_t SpaceRows(const Program& p, const Op& op) {
  return op.op_class == OpClass::kRowReduce ? p.buffers[op.inputs[0]].rows
                                            : p.buffers[op.output].rows;
}

// The instruction of a vector-class op over one tile: `cols` columns of `streamed` inputs whose
// widest element is `elem_bytes`, on the op's engine (or one of its candidates).
Instruction OpInstruction(const Op& op, const char* name, int pcore, int64_t cols, int streamed,
                          int elem_bytes) {
  Instruction ins;
  ins.name = name;
  ins.engine = op.engine;
  ins.engines = op.engines;
  ins.pcore = uint8_t(pcore);
  ins.work = {cols, std::max(1, streamed), elem_bytes, op.passes, false};
  return ins;
}

// A copy of `cols` columns of `elem_bytes` out of PSUM into SBUF, on VectorE or ScalarE.
Instruction EvictCopy(int pcore, int64_t cols, int elem_bytes) {
  static const char* kCopy = InternName("tensor_copy");
  Instruction cp;
  cp.name = kCopy;
  cp.engine = Engine::kVector;
  cp.engines = kEvictEngines;
  cp.pcore = uint8_t(pcore);
  cp.work = {cols, 1, elem_bytes, 1, true};
  return cp;
}

}  // namespace

int64_t InstructionGraph::Units(int oi) const {
  const Op& op = program_->ops[oi];
  if (op.op_class != OpClass::kMatmul) return CeilDiv(SpaceRows(*program_, op), P_);
  const int64_t m = program_->buffers[op.inputs[0]].rows / op.batch;
  const int64_t n = program_->buffers[op.inputs[1]].cols;
  return CeilDiv(n, mm_block_cols_[size_t(oi)]) * op.batch * CeilDiv(m, P_);
}

// Figures CheckAndPlan sums over the ops: the instruction count estimate, and the DMA traffic
// of the two visiting orders (row unit by row unit through all ops, or op by op) to choose
// between them.
struct InstructionGraph::PlanTotals {
  double capacity = 0;                       // SBUF bytes per partition of one physical core
  double estimate = 0;                       // instructions
  double weights_pp = 0, weights_bytes = 0;  // every matmul's B: bytes per partition, in all
  double op_major_extra = 0;                 // bytes the op-by-op order moves beyond the minimum
};

// Fails when a buffer `op` reads or writes has more tiles than a tile index holds.
void InstructionGraph::CheckTileable(const Op& op) const {
  const Program& p = *program_;
  auto check = [&](const Buffer& buf) {
    if (CeilDiv(buf.rows, P_) >= kMaxTileIndex || CeilDiv(buf.cols, F_) >= kMaxTileIndex) {
      Invalid(p, "buffer '" + buf.name + "' is too large to tile");
    }
  };
  for (int b : op.inputs) check(p.buffers[b]);
  check(p.buffers[op.output]);
}

// A matmul's B block width, its tiles' columns, its share of the totals, and whether it keeps
// the ops aligned. `b_only`: per buffer, read only as a matmul's B operand.
void InstructionGraph::PlanMatmul(int oi, const std::vector<bool>& b_only, PlanTotals* t) {
  const Program& p = *program_;
  const Op& op = p.ops[oi];
  const Buffer& a = p.buffers[op.inputs[0]];
  const Buffer& b = p.buffers[op.inputs[1]];
  const int64_t m = a.rows / op.batch, k = a.cols, n = b.cols;
  const int64_t kt_n = CeilDiv(k, P_), nt_n = CeilDiv(n, kPsumCols);
  // B stays resident in blocks of columns that fit in half of SBUF; A streams past each.
  const double b_pp = double(kt_n) * double(op.batch) * double(n) * b.elem_bytes;
  int64_t block = n;
  if (b_pp > t->capacity / 2) {
    const double cols = t->capacity / 2 / (double(kt_n) * double(op.batch) * b.elem_bytes);
    block = std::max<int64_t>(kPsumCols, int64_t(cols / kPsumCols) * kPsumCols);
  }
  mm_block_cols_[size_t(oi)] = block;
  if (b_only[size_t(op.inputs[1])] && !written_[op.inputs[1]]) {
    tile_cols_[size_t(op.inputs[1])] = std::min(F_, block);  // load B block by block
  }
  // Output tiles complete within one block (a pending tile cannot leave SBUF).
  tile_cols_[size_t(op.output)] = std::min(F_, block);
  const double blocks = double(CeilDiv(n, block));
  const double a_bytes = double(a.rows) * double(a.cols) * a.elem_bytes;
  const double b_bytes = double(b.rows) * double(b.cols) * b.elem_bytes;
  t->weights_pp += b_pp;
  t->weights_bytes += b_bytes;
  t->op_major_extra += (blocks - 1) * a_bytes;
  const double units = blocks * double(op.batch) * double(CeilDiv(m, P_));
  // Transposes, matmuls, evictions, and the loads of B reloaded per unit at worst.
  t->estimate += units * (2.0 * kt_n + 2.0 * nt_n + double(kt_n) * double(CeilDiv(n, F_)));
  if (written_[op.inputs[1]] || (op.batch > 1 && m % P_ != 0) || blocks > 1) aligned_ = false;
  PlanMatmulPieces(oi);
}

// How many (row piece, column piece) results make up each of a matmul's output tiles.
void InstructionGraph::PlanMatmulPieces(int oi) {
  const Program& p = *program_;
  const Op& op = p.ops[oi];
  const Buffer& out = p.buffers[op.output];
  const int64_t m = p.buffers[op.inputs[0]].rows / op.batch, n = p.buffers[op.inputs[1]].cols;
  const int64_t fo = tile_cols_[size_t(op.output)];
  auto& rows = mm_row_pieces_[oi];
  auto& cols = mm_col_pieces_[oi];
  rows.assign(size_t(CeilDiv(out.rows, P_)), 0);
  cols.assign(size_t(CeilDiv(out.cols, fo)), 0);
  for (int64_t bi = 0; bi < op.batch; ++bi) {
    for (int64_t mt = 0; mt * P_ < m; ++mt) {
      const int64_t r0 = bi * m + mt * P_, r1 = std::min(r0 + P_, (bi + 1) * m);
      for (int64_t rt = r0 / P_; rt <= (r1 - 1) / P_; ++rt) ++rows[size_t(rt)];
    }
  }
  for (int64_t nt = 0; nt < CeilDiv(n, kPsumCols); ++nt) {
    const int64_t c0 = nt * kPsumCols, c1 = std::min(c0 + kPsumCols, n);
    for (int64_t ct = c0 / fo; ct <= (c1 - 1) / fo; ++ct) ++cols[size_t(ct)];
  }
}

// An elementwise op's or row reduction's instructions, and whether it keeps the ops aligned.
void InstructionGraph::PlanSpaceOp(int oi, PlanTotals* t) {
  const Program& p = *program_;
  const Op& op = p.ops[oi];
  const int64_t space_cols =
      op.op_class == OpClass::kRowReduce ? p.buffers[op.inputs[0]].cols : p.buffers[op.output].cols;
  t->estimate += double(Units(oi)) * double(CeilDiv(space_cols, F_)) *
                 (1.0 + double(op.inputs.size() + 1) * double(params_->dma_queues));
  const int64_t rows = SpaceRows(p, op);
  for (int in : op.inputs) {
    const Buffer& b = p.buffers[in];
    if (written_[in] && b.rows != 1 && b.rows != rows) aligned_ = false;
  }
}

// Row unit by row unit, every matmul's B must stay resident together or be reloaded per row
// tile; op by op, intermediates that do not fit in SBUF are spilled and reloaded. The order that
// moves fewer bytes wins (aligned_ only stays true when it was possible).
void InstructionGraph::ChooseOrder(const PlanTotals& t) {
  const Program& p = *program_;
  int64_t row_units = 0;
  for (int oi = 0; oi < int(p.ops.size()); ++oi) row_units = std::max(row_units, Units(oi));
  double aligned_extra = 0, op_major_extra = t.op_major_extra;
  if (t.weights_pp > t.capacity * 0.75) aligned_extra = t.weights_bytes * double(row_units - 1);
  for (const Buffer& b : p.buffers) {
    const double bytes_pp = double(CeilDiv(b.rows, P_)) * double(b.cols) * b.elem_bytes;
    if (b.memory == Memory::kSbuf && bytes_pp > t.capacity / 2) {
      op_major_extra += 2 * double(b.rows) * double(b.cols) * b.elem_bytes;
    }
  }
  if (aligned_ && aligned_extra > op_major_extra) aligned_ = false;
}

void InstructionGraph::CheckAndPlan() {
  const Program& p = *program_;
  if (int64_t(p.buffers.size() + p.ops.size()) >= kMaxBuffers) {
    Invalid(p, "has too many buffers and ops (at most " + std::to_string(kMaxBuffers) + ")");
  }
  written_.assign(p.buffers.size(), false);
  last_reader_.assign(p.buffers.size(), -1);
  mm_row_pieces_.assign(p.ops.size(), {});
  mm_col_pieces_.assign(p.ops.size(), {});
  mm_block_cols_.assign(p.ops.size(), 1);
  tile_cols_.assign(p.buffers.size(), F_);
  std::vector<bool> b_only(p.buffers.size(), true);  // read only as a matmul's B operand
  for (const Op& op : p.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.op_class != OpClass::kMatmul || i != 1) b_only[size_t(op.inputs[i])] = false;
    }
  }
  aligned_ = true;
  PlanTotals totals;
  totals.capacity = params_->sbuf_bytes / params_->partitions;
  for (int oi = 0; oi < int(p.ops.size()); ++oi) {
    const Op& op = p.ops[oi];
    written_[op.output] = true;
    for (int in : op.inputs) last_reader_[in] = oi;
    CheckTileable(op);
    if (op.op_class == OpClass::kMatmul) {
      PlanMatmul(oi, b_only, &totals);
    } else {
      PlanSpaceOp(oi, &totals);
    }
  }
  ChooseOrder(totals);
  if (totals.estimate > double(kMaxInstructions)) {
    Invalid(p, "would lower to about " + std::to_string(int64_t(totals.estimate)) +
                   " instructions, more than the " + std::to_string(kMaxInstructions) +
                   " the model handles");
  }
}

void InstructionGraph::Lower(const Program& program, const Params& params) {
  program_ = &program;
  params_ = &params;
  instrs_.clear();
  deps_.clear();
  tiles_.clear();
  tile_index_.clear();
  pending_deps_.clear();
  pinned_.clear();
  evict_deps_.clear();
  dma_bytes_ = 0;
  spill_bytes_ = 0;
  P_ = std::max<int64_t>(1, int64_t(params.partitions));
  int64_t max_eb = 1;
  for (const Buffer& b : program.buffers) max_eb = std::max<int64_t>(max_eb, b.elem_bytes);
  F_ = std::max<int64_t>(1, int64_t(params.free_tile_bytes) / max_eb);
  pcores_ = std::max(1, int(params.logical_core_size));
  cores_.assign(size_t(pcores_), Core{});
  for (Core& c : cores_) c.psum_free.assign(size_t(std::max(1.0, params.psum_banks)), UINT32_MAX);
  CheckAndPlan();
  const int n = int(program.ops.size());
  if (aligned_) {
    // Row unit by row unit through every op: a tile's intermediates are consumed while they are
    // still in SBUF (what a fused kernel's loop nest does).
    int64_t units = 0;
    for (int oi = 0; oi < n; ++oi) units = std::max(units, Units(oi));
    for (int64_t u = 0; u < units; ++u) {
      for (int oi = 0; oi < n; ++oi) {
        if (u < Units(oi)) LowerUnit(oi, u);
      }
    }
  } else {
    for (int oi = 0; oi < n; ++oi) {
      for (int64_t u = 0; u < Units(oi); ++u) LowerUnit(oi, u);
    }
  }
}

void InstructionGraph::LowerUnit(int oi, int64_t unit) {
  cur_op_ = oi;
  cur_unit_ = int(unit);
  const Op& op = program_->ops[oi];
  switch (op.op_class) {
    case OpClass::kElementwise:
      return LowerElementwise(oi, unit, int(unit));
    case OpClass::kRowReduce:
      return LowerRowReduce(oi, unit, int(unit));
    case OpClass::kMatmul: {
      // Units run block of B's columns by block, each over every row tile of every batch.
      const int64_t m = program_->buffers[op.inputs[0]].rows / op.batch;
      const int64_t n = program_->buffers[op.inputs[1]].cols;
      const int64_t mt_n = CeilDiv(m, P_), per_block = op.batch * mt_n;
      const int64_t block = mm_block_cols_[size_t(oi)];
      const int64_t nb = unit / per_block, rest = unit % per_block;
      return LowerMatmulUnit(oi, rest / mt_n, rest % mt_n, nb * block,
                             std::min(n, (nb + 1) * block), int(unit));
    }
  }
}

int InstructionGraph::ReadInputs(const Op& op, int pcore, int64_t r0, int64_t r1, int64_t c0,
                                 int64_t c1, int unit) {
  int streamed = 0;
  for (int in : op.inputs) {
    Read(in, pcore, r0, r1, c0, c1, unit);
    streamed += program_->buffers[in].cols > 1 ? 1 : 0;
  }
  return streamed;
}

void InstructionGraph::LowerElementwise(int oi, int64_t rt, int unit) {
  const Op& op = program_->ops[oi];
  const Buffer& out = program_->buffers[op.output];
  const int pcore = unit % pcores_;
  const int64_t r0 = rt * P_, r1 = std::min(r0 + P_, out.rows);
  int eb = out.elem_bytes;
  for (int in : op.inputs) eb = std::max(eb, program_->buffers[in].elem_bytes);
  const char* name = InternName(op.name);
  for (int64_t ct = 0; ct * F_ < out.cols; ++ct) {
    const int64_t c0 = ct * F_, c1 = std::min(c0 + F_, out.cols);
    const int streamed = ReadInputs(op, pcore, r0, r1, c0, c1, unit);
    const uint32_t t = Write(op.output, pcore, rt, ct, unit);
    const uint32_t id = Emit(OpInstruction(op, name, pcore, c1 - c0, streamed, eb));
    Finish(id);
    Produced(t, id);
  }
}

void InstructionGraph::LowerRowReduce(int oi, int64_t rt, int unit) {
  const Op& op = program_->ops[oi];
  const Buffer& in0 = program_->buffers[op.inputs[0]];
  const Buffer& out = program_->buffers[op.output];
  const int pcore = unit % pcores_;
  const int64_t r0 = rt * P_, r1 = std::min(r0 + P_, in0.rows);
  int eb = in0.elem_bytes;
  for (int in : op.inputs) eb = std::max(eb, program_->buffers[in].elem_bytes);
  const char* name = InternName(op.name);
  const int64_t out_rt = std::min(rt, CeilDiv(out.rows, P_) - 1);
  uint32_t prev = UINT32_MAX, t = UINT32_MAX;
  for (int64_t ct = 0; ct * F_ < in0.cols; ++ct) {
    const int64_t c0 = ct * F_, c1 = std::min(c0 + F_, in0.cols);
    const int streamed = ReadInputs(op, pcore, r0, r1, c0, c1, unit);
    if (prev != UINT32_MAX) pending_deps_.push_back(prev);  // the running accumulation
    if ((ct + 1) * F_ >= in0.cols) t = Write(op.output, pcore, out_rt, 0, unit);
    prev = Emit(OpInstruction(op, name, pcore, c1 - c0, streamed, eb));
    Finish(prev);
  }
  if (t != UINT32_MAX) Produced(t, prev);
}

void InstructionGraph::LowerMatmulUnit(int oi, int64_t b, int64_t mt, int64_t n_begin,
                                       int64_t n_end, int unit) {
  const Op& op = program_->ops[oi];
  const Buffer& a = program_->buffers[op.inputs[0]];
  const Buffer& bm = program_->buffers[op.inputs[1]];
  const Buffer& out = program_->buffers[op.output];
  const int pcore = unit % pcores_;
  const int64_t m = a.rows / op.batch, k = a.cols, n = bm.cols;
  const int64_t r0 = b * m + mt * P_, rows = std::min(P_, m - mt * P_);
  const int64_t kt_n = CeilDiv(k, P_);
  const int in_eb = std::max(a.elem_bytes, bm.elem_bytes);
  static const char* kTranspose = InternName("transpose");
  const char* name = InternName(op.name);
  // The stationary operand must have K on partitions: transpose each [rows, K-tile] block of A on
  // TensorE (into PSUM) and copy it back to SBUF, where it stays for this unit's matmuls.
  const int pseudo = int(program_->buffers.size()) + oi;
  std::vector<uint32_t> transposed;
  for (int64_t kt = 0; kt < kt_n; ++kt) {
    const int64_t k0 = kt * P_, kk = std::min(P_, k - k0);
    Read(op.inputs[0], pcore, r0, r0 + rows, k0, k0 + kk, unit);
    const uint32_t bank = PsumBank(pcore);
    Instruction tr;
    tr.name = kTranspose;
    tr.engine = Engine::kTensor;
    tr.pcore = uint8_t(pcore);
    tr.duration_ns = TensorTimeNs(1, rows, a.elem_bytes, true, *params_);
    const uint32_t tid = Emit(tr);
    Finish(tid);
    const uint32_t t = TileIndex(pseudo, pcore, unit, kt);
    tiles_[t].rows = kk;
    tiles_[t].cols = rows;
    tiles_[t].bytes_pp = rows * a.elem_bytes;
    pending_deps_.push_back(tid);
    Write(pseudo, pcore, unit, kt, unit);
    const uint32_t cid = Emit(EvictCopy(pcore, rows, a.elem_bytes));
    Finish(cid);
    cores_[pcore].psum_free[bank] = cid;
    Produced(t, cid);
    tiles_[t].sticky = true;
    transposed.push_back(t);
  }
  // One accumulation group per 512-column piece of the output, evicted from PSUM to SBUF.
  for (int64_t n0 = n_begin; n0 < n_end; n0 += kPsumCols) {
    const int64_t n1 = std::min(n0 + kPsumCols, n);
    for (int64_t kt = 0; kt < kt_n; ++kt) {
      const int64_t k0 = kt * P_, kk = std::min(P_, k - k0);
      const Tile& tt = tiles_[transposed[size_t(kt)]];
      pending_deps_.insert(pending_deps_.end(), tt.producers.begin(), tt.producers.end());
      Read(op.inputs[1], pcore, b * k + k0, b * k + k0 + kk, n0, n1, unit);
    }
    const uint32_t bank = PsumBank(pcore);
    Instruction mm;
    mm.name = name;
    mm.engine = Engine::kTensor;
    mm.pcore = uint8_t(pcore);
    mm.duration_ns = TensorTimeNs(kt_n, n1 - n0, in_eb, false, *params_);
    const uint32_t mid = Emit(mm);
    Finish(mid);
    for (uint32_t t : transposed) tiles_[t].readers.push_back(mid);
    pending_deps_.push_back(mid);
    std::vector<uint32_t> outs;
    for (int64_t rt = r0 / P_; rt <= (r0 + rows - 1) / P_; ++rt) {
      const int64_t fo = tile_cols_[size_t(op.output)];
      for (int64_t ct = n0 / fo; ct <= (n1 - 1) / fo; ++ct) {
        const uint32_t t = TileIndex(op.output, pcore, rt, ct);
        if (tiles_[t].pending == 0) {
          tiles_[t].producers.clear();
          tiles_[t].pending = mm_row_pieces_[oi][size_t(rt)] * mm_col_pieces_[oi][size_t(ct)];
        }
        outs.push_back(Write(op.output, pcore, rt, ct, unit));
      }
    }
    const uint32_t cid = Emit(EvictCopy(pcore, n1 - n0, out.elem_bytes));
    Finish(cid);
    cores_[pcore].psum_free[bank] = cid;
    for (uint32_t t : outs) Produced(t, cid);
  }
  for (uint32_t t : transposed) tiles_[t].sticky = false;
}

}  // namespace opscope::neuron
