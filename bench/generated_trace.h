// A generated Kineto-shaped trace of any size, for the benchmarks that time importing or exporting
// a large trace (import_bench, perfetto_bench): per step, a cpu_op with record_shapes args, a child
// op, a runtime launch, its kernel on a device stream with CUDA-style args, and the ac2g flow pair,
// as torch.profiler writes them.
#ifndef OPSCOPE_BENCH_GENERATED_TRACE_H_
#define OPSCOPE_BENCH_GENERATED_TRACE_H_

#include <cstdint>
#include <string>

namespace opscope::bench {

// Writes a trace of about `target_bytes` of JSON to `path`; returns the bytes written (0 when the
// file cannot be written).
uint64_t GenerateKinetoTrace(const std::string& path, uint64_t target_bytes);

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_GENERATED_TRACE_H_
