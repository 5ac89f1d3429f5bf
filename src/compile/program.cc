// A compiled Program (program.h): the passes, fusion and memory plans and generated code together.
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

ProgramGraph DescribeProgram(const Program& p) {
  const Graph& g = p.graph;
  ProgramGraph out;
  std::vector<bool> is_output(g.nodes().size(), false);
  for (int o : g.outputs()) is_output[o] = true;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    ProgramGraph::Value v;
    switch (n.kind) {
      case NodeKind::kInput:
        v.kind = ProgramGraph::Value::Kind::kInput;
        break;
      case NodeKind::kConstant:
        v.kind = ProgramGraph::Value::Kind::kConstant;
        break;
      case NodeKind::kOp:
        v.kind = ProgramGraph::Value::Kind::kOp;
        v.op = n.op;
        break;
    }
    for (const Operand& o : n.operands) {
      if (!o.is_scalar()) v.operands.push_back(o.value);
    }
    v.sizes = n.type.sizes;
    v.output = is_output[i];
    out.values.push_back(std::move(v));
  }
  for (const Step& s : p.fusion.steps) {
    if (s.kind == Step::kExtern) {
      throw GraphError(std::string(g.node(s.index).name()) +
                       " runs on the host dispatcher and cannot be part of a device program");
    }
    const FusedKernel& k = p.fusion.kernels[s.index];
    ProgramGraph::Kernel pk{k.domain, k.reduce_dims, k.nodes, {}, k.outputs};
    for (int n : k.nodes) {
      if (IsRowValue(g, k, n)) pk.row_values.push_back(n);
    }
    out.kernels.push_back(std::move(pk));
  }
  return out;
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
