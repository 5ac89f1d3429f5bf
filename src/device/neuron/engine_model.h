// The per-instruction cost model of a NeuronCore (NKI cost model), pure functions of the
// parameters: what one compute instruction or one DMA transfer occupies its engine for, and how
// long after its data its result is ready. The lowering and the list scheduler use them; so can
// any other model of NeuronCore work (collectives, for instance) that needs engine or DMA times.
//
// Thread-safe (no state).
#ifndef OPSCOPE_SRC_DEVICE_NEURON_ENGINE_MODEL_H_
#define OPSCOPE_SRC_DEVICE_NEURON_ENGINE_MODEL_H_

#include <cstdint>

#include "device/neuron/program.h"

namespace opscope::neuron {

// What a vector-class instruction (VectorE, ScalarE, GpSimdE) processes: `streamed` input tiles
// of `free_elems` elements per partition, all partitions in parallel, `passes` times.
struct ComputeWork {
  int64_t free_elems = 1;    // N: elements per partition of each streamed input tile
  int streamed = 1;          // input tiles streamed (per-partition scalars do not count); >= 1
  int elem_bytes = 4;        // of the data: 4 = FP32, 2 = BF16 (performance modes), 1 = FP8
  int passes = 1;            // back-to-back instructions of this size
  bool psum_source = false;  // reads PSUM (TensorE output): no 4x 16-bit performance mode
};

// Engine time of a compute instruction: the engine is busy `occupancy_ns` (the data streaming,
// at least the static overhead per instruction); its result is ready `ready_ns` after it starts
// (the streaming plus the static overhead: a dependent instruction pays the overhead, an
// independent one behind it does not). Engine must be kVector, kScalar or kGpSimd.
struct ComputeTime {
  int64_t occupancy_ns = 0;
  int64_t ready_ns = 0;
};
ComputeTime VectorClassTime(Engine engine, const ComputeWork& work, const Params& params);

// TensorE: one matmul accumulation group of `k_tiles` instructions, each moving a tile of
// `moving_free` columns (<= 512): initiation interval max(N, tensor_mm_min_cycles) cycles times
// the input dtype's factor. `transpose` uses the transpose-mode factor for FP32.
int64_t TensorTimeNs(int64_t k_tiles, int64_t moving_free, int elem_bytes, bool transpose,
                     const Params& params);

// One DMA queue's share of a transfer: `bytes` in `chunks` contiguous pieces (one per partition
// row). The data phase costs bytes at the queue's bandwidth (its share of HBM bandwidth when
// that is lower) plus the per-chunk descriptor cost; the setup latency (dma_latency_ns) comes
// before it and overlaps earlier transfers (the scheduler applies it).
int64_t DmaDataNs(int64_t bytes, int64_t chunks, const Params& params);

// How a tile of `rows` partitions is split over DMA queues: `pieces` transfers of up to
// `rows_per_piece` partitions, piece j on queue j (each queue serves its group of partitions).
struct DmaSplit {
  int64_t pieces = 1;
  int64_t rows_per_piece = 1;
};
DmaSplit SplitTransfer(int64_t rows, const Params& params);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_ENGINE_MODEL_H_
