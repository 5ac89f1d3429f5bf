// compile(): capture a function's op calls as a graph, fuse it, and run it as generated kernels
// (opscope's torch.compile).
//
//   opscope::CompiledFunction rms = opscope::compile(
//       [](std::span<const opscope::Tensor> in) -> std::vector<opscope::Tensor> {
//         const opscope::Tensor& x = in[0];
//         opscope::Tensor r = opscope::rsqrt(opscope::mean(x * x, {-1}, true) + 1e-6);
//         return {x * r * in[1]};
//       },
//       {.backend = "neuron"});                  // or "cpu" (the default)
//   opscope::Tensor y = rms({x, w})[0];          // first call: capture + compile; later: cached
//
// The first call with new input shapes, dtypes, strides or devices (the guards) captures `fn` by
// running it on meta tensors through a dispatch interceptor, runs the passes (dead code, common
// subexpressions, constant folding), fuses pointwise ops and reductions into loop nests, plans
// memory so fused intermediates are never materialized, and builds the backend's code:
//   - "cpu": C++ for each fused kernel, compiled by the system C++ compiler ($OPSCOPE_CXX
//     overrides) into a shared object that is dlopen()ed. Cached in memory and on disk
//     ($OPSCOPE_CACHE_DIR, default ~/.cache/opscope/compile), keyed by graph + shapes + backend +
//     compiler version, so another process reuses it.
//   - "neuron": one device program for the simulated NeuronCore: one nrta_execute_schedule and one
//     nc_exec_running per call (results computed by the same generated kernels).
// Ops compile() does not fuse (mm, views, ...) run eagerly between kernels (cpu backend).
// When compiling fails (no compiler, a compiler error, an unsupported op on "neuron", an in-place
// or data-dependent op during capture) the function runs eagerly; the reason, naming the
// generated file where there is one, is printed once to stderr and kept in last().
//
// In the profiler each call is one user-annotation range "Torch-Compiled Region: F/C" (F: this
// function's id, C: the compile id of the guard entry that matched), preceded by "TorchDynamo
// Cache Lookup"; device activity links to the region. The first call's work shows as
// "_compile.compile_inner" containing "opscope::compile::capture", "opscope::compile::passes",
// "opscope::compile::codegen" and "opscope::compile::cxx" (the compiler run or cache load).
//
// Thread safety: a CompiledFunction may be called from one thread at a time.
#ifndef OPSCOPE_COMPILE_H_
#define OPSCOPE_COMPILE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "opscope/tensor.h"

namespace opscope {

struct CompileOptions {
  std::string backend = "cpu";   // "cpu" or "neuron"
  std::string cache_dir;         // "" = $OPSCOPE_CACHE_DIR, else ~/.cache/opscope/compile
  bool disk_cache = true;        // reuse objects compiled by other processes
  bool warn_on_fallback = true;  // print why a function runs eagerly (once per guard entry)
};

using CompileFn = std::function<std::vector<Tensor>(std::span<const Tensor>)>;

// Counters over a CompiledFunction's life.
struct CompileStats {
  int64_t calls = 0;
  int64_t compiles = 0;     // guard entries built (first call + recompiles)
  int64_t recompiles = 0;   // entries built after the first (a guard failed)
  int64_t memory_hits = 0;  // entries whose code came from this process's cache
  int64_t disk_hits = 0;    // ... from the on-disk cache
  int64_t cxx_runs = 0;     // ... from running the C++ compiler
  int64_t eager_calls = 0;  // calls that ran eagerly (fallback)
};

// What compile() made of the graph for the entry that served the latest call.
struct CompiledGraphInfo {
  std::string region_name;      // "Torch-Compiled Region: 0/0"
  std::string graph;            // the IR after the passes
  std::string fusion;           // kernels and extern ops, in order
  std::string memory;           // the memory plan
  std::string source_path;      // generated C++ ("" for none)
  std::string cache;            // "memory", "disk", "compiled" or "" (no code)
  std::string fallback_reason;  // non-empty when the entry runs eagerly
  int kernels = 0;
  int extern_ops = 0;
  int captured_ops = 0;            // op calls seen during capture
  int64_t materialized_bytes = 0;  // bytes the compiled code writes to memory per call
  int64_t eager_bytes = 0;         // bytes the eager ops would allocate
};

class CompiledFunction {
 public:
  CompiledFunction(CompileFn fn, CompileOptions options);
  std::vector<Tensor> operator()(std::span<const Tensor> inputs);
  std::vector<Tensor> operator()(std::initializer_list<Tensor> inputs) {
    return (*this)(std::span<const Tensor>(inputs.begin(), inputs.size()));
  }

  const CompileStats& stats() const;
  const CompiledGraphInfo& last() const;
  int frame_id() const;
  const CompileOptions& options() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

CompiledFunction compile(CompileFn fn, CompileOptions options = {});

// Drops this process's in-memory cache of compiled code (the disk cache stays). For tests and
// benchmarks measuring cold / disk-cached compiles.
void ClearCompileMemoryCache();

}  // namespace opscope

#endif  // OPSCOPE_COMPILE_H_
