// The CPU reference kernels, callable by any backend whose memory is host memory (the simulated
// Neuron device runs them on its HBM buffers to compute real results while it models time).
//
//   opscope::cpu::RunKernel(call);  // synchronous; call satisfies its KernelKind contract (ops.h)
//
// Kernels have contiguous fast paths written as simple loops the compiler vectorizes, and strided
// fallbacks for every layout. Thread safety: kernels share no state.
#ifndef OPSCOPE_SRC_DEVICE_CPU_CPU_KERNELS_H_
#define OPSCOPE_SRC_DEVICE_CPU_CPU_KERNELS_H_

#include "opscope/device.h"

namespace opscope::cpu {

// Hot row kernels are compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OPSCOPE_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OPSCOPE_CPU_CLONES
#endif

// Runs call.op's kernel now, reading call.inputs and writing call.outputs through their data
// pointers (host memory). Throws TensorError for an op without a kernel or an unsupported dtype.
void RunKernel(const OpCall& call);

// Kernel families (cpu_*.cc); RunKernel dispatches to them.
void BinaryKernel(const OpCall& call);
void UnaryKernel(const OpCall& call);
void CopyKernel(const OpCall& call);
void FillKernel(const OpCall& call);
void ReduceKernel(const OpCall& call);
void MatmulKernel(const OpCall& call);
void SoftmaxKernel(const OpCall& call);
void LayerNormKernel(const OpCall& call);
void RmsNormKernel(const OpCall& call);

// Sum of x[i] * x[i] and of x[i] over n floats, with enough independent accumulators that the
// loop runs at load throughput rather than at the latency of one add chain.
float SumOfSquares(const float* x, int64_t n);
float Sum(const float* x, int64_t n);

// Row kernels of the fused normalizations on contiguous memory: `rows` rows of `n` floats.
// weight/bias may be null. y may not alias x.
void RmsNormRows(const float* x, const float* weight, float* y, int64_t rows, int64_t n, float eps);
void LayerNormRows(const float* x, const float* weight, const float* bias, float* y, int64_t rows,
                   int64_t n, float eps);

}  // namespace opscope::cpu

#endif  // OPSCOPE_SRC_DEVICE_CPU_CPU_KERNELS_H_
