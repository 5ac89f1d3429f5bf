// Program -> engine instructions (tiling over partitions and the free dimension).
#include "device/neuron/instruction_graph.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace opscope::neuron {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Tile keys pack (buffer, scope, row tile, col tile) into 64 bits: 12 + 12 + 20 + 20. `scope` is 0
// for tiles shared across the program and 1 + op index for loads private to one op.
constexpr int64_t kMaxBuffers = 1 << 12;
constexpr int64_t kMaxTiles = 1 << 20;
uint64_t TileKey(int64_t buffer, int64_t scope, int64_t rt, int64_t ct) {
  return (uint64_t(buffer) << 52) | (uint64_t(scope & 0xfff) << 40) | (uint64_t(rt) << 20) |
         uint64_t(ct);
}

double EngineGhz(Engine e, const Params& p) {
  switch (e) {
    case Engine::kTensor:
      return p.tensor_ghz;
    case Engine::kVector:
      return p.vector_ghz;
    case Engine::kScalar:
      return p.scalar_ghz;
    case Engine::kGpSimd:
      return p.gpsimd_ghz;
    case Engine::kDma:
      return 1;
  }
  return 1;
}

}  // namespace

const char* InternName(std::string_view name) {
  static std::mutex mu;
  static std::unordered_set<std::string>* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mu);
  return names->emplace(name).first->c_str();  // node-based: c_str() stays valid
}

int64_t InstructionGraph::ComputeNs(Engine engine, double flops, const Params& p) const {
  double ghz = EngineGhz(engine, p);
  double overhead = 0, tflops = 1;
  switch (engine) {
    case Engine::kTensor:
      overhead = p.tensor_overhead_cycles;
      tflops = p.tensor_fp32_tflops;
      break;
    case Engine::kVector:
      overhead = p.vector_overhead_cycles;
      tflops = p.vector_fp32_tflops;
      break;
    case Engine::kScalar:
      overhead = p.scalar_overhead_cycles;
      tflops = p.scalar_fp32_tflops;
      break;
    case Engine::kGpSimd:
      overhead = p.gpsimd_overhead_cycles;
      tflops = p.gpsimd_fp32_tflops;
      break;
    case Engine::kDma:
      break;
  }
  // TFLOPS * 1e3 = FLOP per ns.
  return std::llround(overhead / ghz + flops / (tflops * 1e3));
}

uint32_t InstructionGraph::Emit(Instruction ins, const std::vector<uint32_t>& deps) {
  ins.dep_begin = static_cast<uint32_t>(deps_.size());
  ins.dep_count = static_cast<uint32_t>(deps.size());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  instrs_.push_back(ins);
  return static_cast<uint32_t>(instrs_.size() - 1);
}

InstructionGraph::TileRange InstructionGraph::EmitTransfer(const char* name, int64_t bytes,
                                                           int64_t partitions, bool is_load,
                                                           int32_t op,
                                                           const std::vector<uint32_t>& deps,
                                                           const Params& p) {
  // A tile's transfer is spread over the DMA queues, whole partitions per queue.
  int64_t pieces = std::max<int64_t>(1, std::min<int64_t>(int64_t(p.dma_queues), partitions));
  double gbps = std::min(p.dma_queue_gbps, p.hbm_gbps / p.dma_queues);
  TileRange range{static_cast<uint32_t>(instrs_.size()), static_cast<uint32_t>(pieces)};
  for (int64_t i = 0; i < pieces; ++i) {
    Instruction ins;
    ins.name = name;
    ins.engine = Engine::kDma;
    ins.bytes = bytes / pieces + (i < bytes % pieces ? 1 : 0);
    ins.duration_ns = std::llround(p.dma_setup_ns + double(ins.bytes) / gbps);
    ins.op = op;
    ins.is_load = is_load;
    Emit(ins, deps);
  }
  dma_bytes_ += bytes;
  return range;
}

void InstructionGraph::NeedTile(const Program& program, int b, int64_t rt, int64_t ct, int32_t op,
                                bool cache, const Params& p, std::vector<uint32_t>* deps) {
  const Buffer& buf = program.buffers[b];
  const int64_t P = int64_t(p.partitions);
  const int64_t F = std::max<int64_t>(1, int64_t(p.free_tile_bytes) / buf.elem_bytes);
  rt = buf.rows == 1 ? 0 : std::min(rt, CeilDiv(buf.rows, P) - 1);
  ct = buf.cols == 1 ? 0 : std::min(ct, CeilDiv(buf.cols, F) - 1);
  auto add = [deps](TileRange r) {
    for (uint32_t i = 0; i < r.count; ++i) deps->push_back(r.first + i);
  };
  if (auto it = tiles_.find(TileKey(b, 0, rt, ct)); it != tiles_.end()) return add(it->second);
  uint64_t load_key = TileKey(b, cache ? 0 : op + 1, rt, ct);
  if (auto it = tiles_.find(load_key); it != tiles_.end()) return add(it->second);
  if (buf.memory != Memory::kHbm) {
    throw std::invalid_argument("neuron program '" + program.name + "': op " + std::to_string(op) +
                                " reads SBUF buffer '" + buf.name + "' before any op writes it");
  }
  int64_t rows = std::min(P, buf.rows - rt * P);
  int64_t cols = std::min(F, buf.cols - ct * F);
  static const char* kLoad = InternName("dma_load");
  TileRange r = EmitTransfer(kLoad, rows * cols * buf.elem_bytes, rows, true, op, {}, p);
  tiles_[load_key] = r;
  add(r);
}

void InstructionGraph::Lower(const Program& program, const Params& p) {
  instrs_.clear();
  deps_.clear();
  tiles_.clear();
  dma_bytes_ = 0;
  if (int64_t(program.buffers.size()) >= kMaxBuffers) {
    throw std::invalid_argument("neuron program '" + program.name + "' has too many buffers");
  }
  const int64_t P = int64_t(p.partitions);
  // Loads stay in SBUF for later ops of the program when every HBM input fits at once.
  int64_t input_bytes = 0;
  for (const auto& b : program.buffers) {
    if (b.memory == Memory::kHbm) input_bytes += b.rows * b.cols * b.elem_bytes;
  }
  const bool cache = double(input_bytes) <= p.sbuf_bytes;
  static const char* kStore = InternName("dma_store");
  std::vector<uint32_t>& deps = scratch_;

  for (int32_t oi = 0; oi < int32_t(program.ops.size()); ++oi) {
    const Op& op = program.ops[oi];
    const char* name = InternName(op.name);
    const Buffer& out = program.buffers[op.output];
    const int64_t F = std::max<int64_t>(1, int64_t(p.free_tile_bytes) / out.elem_bytes);
    auto store = [&](int64_t rows, int64_t cols, uint32_t producer) {
      if (out.memory == Memory::kHbm) {
        EmitTransfer(kStore, rows * cols * out.elem_bytes, rows, false, oi, {producer}, p);
      }
    };

    if (op.op_class == OpClass::kMatmul) {
      const Buffer& a = program.buffers[op.inputs[0]];
      const Buffer& bm = program.buffers[op.inputs[1]];
      const int64_t M = a.rows, K = a.cols, N = bm.cols;
      const int64_t kN = 512;  // PSUM bank: 2 KiB of FP32 per partition
      const int64_t mt_n = CeilDiv(M, P), kt_n = CeilDiv(K, P), nt_n = CeilDiv(N, kN);
      if (mt_n >= kMaxTiles || nt_n >= kMaxTiles || kt_n >= kMaxTiles) {
        throw std::invalid_argument("neuron program '" + program.name + "': matmul too large");
      }
      // FP32 runs the systolic array at (BF16 peak / FP32 peak) cycles per row.
      const double fp32_factor =
          std::max(1.0, 2 * P * P * p.tensor_ghz / 1e3 / p.tensor_fp32_tflops);
      static const char* kLoad = InternName("dma_load");
      std::unordered_map<uint64_t, TileRange> local;
      auto load = [&](int bi, int64_t r, int64_t c, int64_t rows, int64_t cols) {
        uint64_t key = TileKey(bi, oi + 1, r, c);
        auto it = local.find(key);
        if (it != local.end()) return it->second;
        const Buffer& buf = program.buffers[bi];
        TileRange tr = EmitTransfer(kLoad, rows * cols * buf.elem_bytes, rows, true, oi, {}, p);
        local[key] = tr;
        return tr;
      };
      for (int64_t mt = 0; mt < mt_n; ++mt) {
        const int64_t rows = std::min(P, M - mt * P);
        for (int64_t nt = 0; nt < nt_n; ++nt) {
          const int64_t cols = std::min(kN, N - nt * kN);
          deps.clear();
          for (int64_t kt = 0; kt < kt_n; ++kt) {
            const int64_t kk = std::min(P, K - kt * P);
            for (TileRange tr :
                 {load(op.inputs[0], mt, kt, rows, kk), load(op.inputs[1], kt, nt, kk, cols)}) {
              for (uint32_t i = 0; i < tr.count; ++i) deps.push_back(tr.first + i);
            }
          }
          Instruction ins;
          ins.name = name;
          ins.engine = Engine::kTensor;
          ins.op = oi;
          double cycles = p.tensor_overhead_cycles +
                          double(kt_n) * std::max<double>(double(cols), 64) * fp32_factor;
          ins.duration_ns = std::llround(cycles / p.tensor_ghz);
          uint32_t id = Emit(ins, deps);
          tiles_[TileKey(op.output, 0, mt, nt)] = {id, 1};
          store(rows, cols, id);
        }
      }
      continue;
    }

    const bool reduce = op.op_class == OpClass::kRowReduce;
    const Buffer& space = reduce ? program.buffers[op.inputs.at(0)] : out;
    const int64_t rt_n = CeilDiv(space.rows, P), ct_n = CeilDiv(space.cols, F);
    if (rt_n >= kMaxTiles || ct_n >= kMaxTiles) {
      throw std::invalid_argument("neuron program '" + program.name + "': op '" + op.name +
                                  "' is too large to tile");
    }
    for (int64_t rt = 0; rt < rt_n; ++rt) {
      const int64_t rows = std::min(P, space.rows - rt * P);
      uint32_t prev = UINT32_MAX;  // the previous chunk of a reduction (the accumulator)
      for (int64_t ct = 0; ct < ct_n; ++ct) {
        const int64_t cols = std::min(F, space.cols - ct * F);
        deps.clear();
        for (int in : op.inputs) NeedTile(program, in, rt, ct, oi, cache, p, &deps);
        if (prev != UINT32_MAX) deps.push_back(prev);
        Instruction ins;
        ins.name = name;
        ins.engine = op.engine;
        ins.op = oi;
        // The engine processes all partitions in parallel: a tile costs P rows' worth.
        ins.duration_ns = ComputeNs(op.engine, double(P * cols) * op.flops_per_element, p);
        // deps may name `scratch_` itself; Emit copies it before instrs_ grows.
        uint32_t id = Emit(ins, deps);
        if (reduce) {
          prev = id;
        } else {
          tiles_[TileKey(op.output, 0, rt, ct)] = {id, 1};
          store(rows, cols, id);
        }
      }
      if (reduce) {
        tiles_[TileKey(op.output, 0, rt, 0)] = {prev, 1};
        store(rows, 1, prev);
      }
    }
  }
}

}  // namespace opscope::neuron
