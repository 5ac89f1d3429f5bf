// The Neuron model's parameters: every number the cost model, the executor and the device clock
// use, their presets, valid ranges and the key=value override format (params.cc). The public
// face of a configuration is opscope::neuron::ModelConfig (opscope/neuron.h), which holds one.
//
// Thread-safe: plain values and pure functions.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_PARAMS_H_
#define OPSCOPE_SRC_DEVICE_NEURON_PARAMS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/neuron.h"

namespace opscope::neuron {

// Every number the model uses. Presets come from public NeuronCore figures (docs/neuron-model.md
// gives each one's source and its valid range); any field can be overridden by name from a
// key=value file (the key is the field name). Times in the unit their name says.
struct Params {
  std::string preset = "trn1";
  // Chip and core.
  double num_cores = 2;                    // physical NeuronCores on the simulated chip
  double logical_core_size = 1;            // physical cores per logical core (trn2's LNC=2)
  double partitions = 128;                 // SBUF partitions = rows per tile
  double free_tile_bytes = 8192;           // bytes per partition per tile along the free dimension
  double sbuf_bytes = 24.0 * 1024 * 1024;  // per physical core
  double psum_banks = 8;                   // PSUM accumulation banks (2 KiB per partition each)
  double hbm_gib = 16;                     // device memory per logical core (allocator capacity)
  // TensorE: initiation interval max(N, tensor_mm_min_cycles) cycles per matmul instruction of
  // moving free size N for 16-bit inputs, times the factor of the input dtype.
  double tensor_ghz = 2.8;
  double tensor_mm_min_cycles = 64;
  double tensor_fp32_factor = 4;            // FP32 inputs vs BF16/FP16
  double tensor_fp8_factor = 1;             // FP8 inputs vs BF16 (trn2: 0.5, double-row mode)
  double tensor_transpose_fp32_factor = 4;  // FP32 transpose vs BF16 (trn2: 2, transpose mode)
  // Vector-class engines (NKI cost model): an instruction streams its input tiles through the
  // engine at *_elems_per_cycle input elements per cycle over all partitions (128 lanes: N
  // cycles for one tile of N elements per partition, 2N for two), costs at least
  // *_overhead_cycles, and its result is ready *_overhead_cycles after its data.
  double vector_ghz = 1.12;
  double vector_elems_per_cycle = 128;           // 32-bit data
  double vector_elems_per_cycle_16bit = 128;     // one-input instructions on BF16/FP16 (trn2: 512)
  double vector_tt_elems_per_cycle_16bit = 128;  // two-input instructions on 16-bit (trn2: 256)
  double vector_overhead_cycles = 100;
  double scalar_ghz = 1.4;
  double scalar_elems_per_cycle = 128;
  double scalar_overhead_cycles = 264;
  double gpsimd_ghz = 1.4;
  double gpsimd_elems_per_cycle = 128;
  double gpsimd_overhead_cycles = 100;
  double vector_gpsimd_shared_port = 1;  // 1: VectorE and GpSimdE cannot access SBUF in parallel
  // Memory and DMA: each DMA queue serves `dma_partitions_per_queue` partitions of a tile; a
  // transfer's data phase costs bytes / bandwidth plus `dma_descriptor_ns` per contiguous chunk
  // (one per partition row), after `dma_latency_ns` of setup that overlaps earlier transfers for
  // up to `dma_inflight` transfers outstanding per queue.
  double hbm_gbps = 410;  // per physical core (GB/s = bytes/ns)
  double dma_queues = 16;
  double dma_partitions_per_queue = 8;
  double dma_queue_gbps = 17;
  double dma_latency_ns = 1300;
  double dma_descriptor_ns = 30;
  double dma_inflight = 4;
  // Runtime, per execution: switching the core to a different program than its last, launch and
  // completion, binding I/O tensors (eager path), and the eager path's remaining cost; the
  // one-time library load of a program's first execution; executions queued per core before the
  // host blocks.
  double program_switch_us = 10;
  double exec_launch_us = 12;
  double exec_complete_us = 2;
  double tensor_bind_us = 1;
  double eager_dispatch_us = 361;
  double first_exec_load_us = 1000;
  double max_inflight_executions = 8;
  // The device clock domain: device_ticks = clock_offset_ns + host_ns * (1 + clock_drift_ppm/1e6).
  double clock_offset_ns = 5e11;
  double clock_drift_ppm = 25;
};

// "trn1" (NeuronCore-v2, the default) or "trn2" (NeuronCore-v3).
Params Preset(std::string_view name);
std::vector<std::string> PresetNames();
// Applies `key = value` lines ('#' starts a comment; `preset = trn2` first resets to a preset),
// checking each value against its documented range. `source` names the text in errors.
void ApplyOverrides(std::string_view text, std::string_view source, Params* params);
// Reads `path` (a regular file of at most kMaxConfigBytes) and applies it.
void ApplyOverridesFile(const std::string& path, Params* params);
inline constexpr size_t kMaxConfigBytes = 1 << 20;
// Throws ParamsError naming the first field outside its valid range (and the cross-field rules:
// logical_core_size divides num_cores). NeuronDevice and EstimateProgram call it.
void ValidateParams(const Params& params);
// The preset, then the file named by $OPSCOPE_NEURON_CONFIG when set.
Params ParamsFromEnvironment();
// All fields as `key = value` lines, in the file format ApplyOverrides reads.
std::string FormatParams(const Params& params);
// The value of the field named `key`; throws ParamsError for an unknown key.
double ParamValue(const Params& params, std::string_view key);
// The valid range of every key, one `key: [min, max]` line each (docs and errors use it).
std::string FormatParamRanges();

// The parameters a configuration holds (model_config.cc).
const Params& ParamsOf(const ModelConfig& config);
// A configuration holding `params` (checked with ValidateParams).
ModelConfig ConfigOf(const Params& params);

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_PARAMS_H_
