// Building and running one guard entry of a compiled function. The backend comes from the
// registry by name (CompileOptions::backend): one that runs device programs gets the whole graph
// as one program (DeviceBackend::BuildProgram / ExecuteProgram); one that runs host code (cpu)
// gets the generated kernels called directly, with extern ops between them.
#ifndef OPSCOPE_SRC_COMPILE_RUNTIME_H_
#define OPSCOPE_SRC_COMPILE_RUNTIME_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compile/capture.h"
#include "compile/kernel_cache.h"
#include "compile/program.h"
#include "opscope/compile.h"
#include "opscope/device.h"
#include "opscope/tensor.h"

namespace opscope::compiler {

struct CompiledEntry {
  DeviceBackend* backend = nullptr;  // owned by the registry (never freed)
  Device device;
  std::shared_ptr<const Program> program;
  std::vector<ExternCall> externs;
  std::vector<Tensor> lifted;  // closed-over tensors, graph inputs after the call's inputs
  std::shared_ptr<const CompiledModule> module;  // null when the program has no kernels
  std::vector<uint32_t> kernel_names;            // profiler names, one per kernel
  // Backends that run device programs: the program, and the values each call passes to
  // ExecuteProgram as its inputs (graph inputs, constants) and outputs (outputs, slots).
  std::shared_ptr<const DeviceProgram> device_program;
  std::vector<int> program_inputs, program_outputs;
};

// Captures `fn` on `inputs`, plans, generates and compiles (or loads) the code. On any failure
// fills info->fallback_reason (the entry then runs eagerly) instead of throwing.
void BuildEntry(const CompileFn& fn, std::span<const Tensor> inputs, const CompileOptions& options,
                CompiledEntry* entry, CompiledGraphInfo* info);

// Runs a built entry on inputs that passed its guards.
std::vector<Tensor> RunEntry(const CompiledEntry& entry, std::span<const Tensor> inputs);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_RUNTIME_H_
