// The NKI cost model of one instruction (docs/neuron-model.md, "Engines" and "DMA").
#include "device/neuron/engine_model.h"

#include <algorithm>
#include <cmath>

namespace opscope::neuron {
namespace {

int64_t Ns(double v) { return std::llround(std::max(0.0, v)); }

// Input elements the engine streams per cycle over all its lanes, for this work.
double ElemsPerCycle(Engine engine, const ComputeWork& w, const Params& p) {
  const bool narrow = w.elem_bytes < 4;
  switch (engine) {
    case Engine::kVector:
      if (!narrow) return p.vector_elems_per_cycle;
      // trn2's performance mode: 16-bit one-input instructions from SBUF run up to 4x, two-input
      // ones and PSUM-sourced ones 2x (the *_16bit rates say how much, per preset).
      if (w.streamed >= 2 || w.psum_source) return p.vector_tt_elems_per_cycle_16bit;
      return p.vector_elems_per_cycle_16bit;
    case Engine::kScalar:
      return p.scalar_elems_per_cycle;
    case Engine::kGpSimd:
      // Each 512-bit processor does 16 FP32, 32 16-bit or 64 8-bit lanes.
      return p.gpsimd_elems_per_cycle * 4.0 / std::max(1, std::min(4, w.elem_bytes));
    default:
      return p.vector_elems_per_cycle;
  }
}

void EngineClock(Engine engine, const Params& p, double* ghz, double* overhead) {
  switch (engine) {
    case Engine::kScalar:
      *ghz = p.scalar_ghz;
      *overhead = p.scalar_overhead_cycles;
      return;
    case Engine::kGpSimd:
      *ghz = p.gpsimd_ghz;
      *overhead = p.gpsimd_overhead_cycles;
      return;
    default:
      *ghz = p.vector_ghz;
      *overhead = p.vector_overhead_cycles;
      return;
  }
}

}  // namespace

ComputeTime VectorClassTime(Engine engine, const ComputeWork& w, const Params& p) {
  double ghz = 1, overhead = 0;
  EngineClock(engine, p, &ghz, &overhead);
  const double streamed = std::max(1, w.streamed);
  const double cycles = streamed * double(std::max<int64_t>(1, w.free_elems)) * p.partitions /
                        ElemsPerCycle(engine, w, p);
  const double passes = std::max(1, w.passes);
  const double issue = std::max(cycles, overhead);
  ComputeTime t;
  t.occupancy_ns = Ns(passes * issue / ghz);
  t.ready_ns = Ns(((passes - 1) * issue + cycles + overhead) / ghz);
  return t;
}

int64_t TensorTimeNs(int64_t k_tiles, int64_t moving_free, int elem_bytes, bool transpose,
                     const Params& p) {
  double factor = 1;
  if (elem_bytes >= 4) factor = transpose ? p.tensor_transpose_fp32_factor : p.tensor_fp32_factor;
  if (elem_bytes == 1) factor = p.tensor_fp8_factor;
  const double cycles =
      double(k_tiles) * std::max(double(moving_free), p.tensor_mm_min_cycles) * factor;
  return Ns(cycles / p.tensor_ghz);
}

int64_t DmaDataNs(int64_t bytes, int64_t chunks, const Params& p) {
  const double gbps = std::min(p.dma_queue_gbps, p.hbm_gbps / p.dma_queues);
  return Ns(double(bytes) / gbps + double(chunks) * p.dma_descriptor_ns);
}

DmaSplit SplitTransfer(int64_t rows, const Params& p) {
  const int64_t per_queue = std::max<int64_t>(1, int64_t(p.dma_partitions_per_queue));
  const int64_t groups = (std::max<int64_t>(1, rows) + per_queue - 1) / per_queue;
  DmaSplit s;
  s.pieces = std::max<int64_t>(1, std::min<int64_t>(int64_t(p.dma_queues), groups));
  s.rows_per_piece = (std::max<int64_t>(1, rows) + s.pieces - 1) / s.pieces;
  return s;
}

}  // namespace opscope::neuron
