#include "compile/program.h"

#include "compile/cpp_codegen.h"

namespace opscope::compiler {

Program PlanProgram(Graph graph, const std::string& backend,
                    const std::string& toolchain_identity) {
  Program p;
  graph.Validate();
  p.pass_stats = RunPasses(graph);
  p.graph = std::move(graph);
  p.fusion = PlanFusion(p.graph);
  p.memory = PlanMemory(p.graph, p.fusion);
  std::string printed = p.graph.ToString();
  p.key = HexHash(StableHash(printed + "\nbackend=" + backend +
                             "\ntoolchain=" + toolchain_identity + "\ncodegen=" + kCodegenVersion));
  return p;
}

void GenerateSource(Program* p) {
  p->source = GenerateCpp(p->graph, p->fusion, "key " + p->key + "\n" + p->graph.ToString());
}

Program BuildProgram(Graph graph, const std::string& backend,
                     const std::string& toolchain_identity) {
  Program p = PlanProgram(std::move(graph), backend, toolchain_identity);
  GenerateSource(&p);
  return p;
}

void RunSteps(const Program& program, const CompiledModule& module,
              const std::function<float*(int value)>& address,
              const std::function<void(int node)>& run_extern) {
  std::vector<const float*> in;
  std::vector<float*> out;
  for (const Step& step : program.fusion.steps) {
    if (step.kind == Step::kExtern) {
      run_extern(step.index);
      continue;
    }
    const FusedKernel& k = program.fusion.kernels[step.index];
    in.clear();
    out.clear();
    for (int v : k.inputs) in.push_back(address(v));
    for (int v : k.outputs) out.push_back(address(v));
    module.kernels.at(step.index)(in.data(), out.data());
  }
}

}  // namespace opscope::compiler
