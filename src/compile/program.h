// A Program: a captured graph after the passes, with its fusion plan, memory plan, generated
// source and cache key — everything a backend needs to execute it.
#ifndef OPSCOPE_SRC_COMPILE_PROGRAM_H_
#define OPSCOPE_SRC_COMPILE_PROGRAM_H_

#include <functional>
#include <string>

#include "compile/fusion.h"
#include "compile/graph.h"
#include "compile/kernel_cache.h"
#include "compile/memory_plan.h"
#include "compile/passes.h"
#include "opscope/device.h"

namespace opscope::compiler {

struct Program {
  Graph graph;  // after the passes
  PassStats pass_stats;
  FusionPlan fusion;
  MemoryPlan memory;
  std::string source;  // generated C++ (cpu backend)
  std::string key;     // cache key (hex)
};

// Runs the passes, plans fusion and memory, and computes the key. `toolchain_identity` goes into
// the key.
Program PlanProgram(Graph graph, const std::string& backend, const std::string& toolchain_identity);
// Fills program->source with the C++ of its kernels.
void GenerateSource(Program* program);
// PlanProgram + GenerateSource.
Program BuildProgram(Graph graph, const std::string& backend,
                     const std::string& toolchain_identity);

// The program as a backend that runs device programs receives it (DeviceBackend::BuildProgram):
// its values and its fused kernels in execution order. Throws GraphError for a program with
// extern ops (they run on the host dispatcher, outside any device program).
ProgramGraph DescribeProgram(const Program& program);

// Executes the program's steps in order. `address(value)` gives the memory of each
// materialized value (inputs, outputs, slots); `run_extern(node)` runs an extern op.
void RunSteps(const Program& program, const CompiledModule& module,
              const std::function<float*(int value)>& address,
              const std::function<void(int node)>& run_extern);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_PROGRAM_H_
