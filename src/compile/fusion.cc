// Fusion (fusion.h): grouping graph nodes into loop nests by the legality predicate.
#include "compile/fusion.h"

#include <algorithm>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

// Broadcast that reports failure instead of throwing.
bool TryBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                  std::vector<int64_t>* out) {
  size_t n = std::max(a.size(), b.size());
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    (*out)[i] = x == 1 ? y : x;
  }
  return true;
}

bool IsReductionNode(const Node& n) { return n.is_op() && IsReduction(n.op); }

FusionDecision Illegal(std::string reason) {
  FusionDecision d;
  d.reason = std::move(reason);
  return d;
}

}  // namespace

bool FusedKernel::Contains(int node) const {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

FusionDecision CanFuse(const Graph& graph, const FusedKernel& kernel, int node) {
  const Node& n = graph.node(node);
  if (!n.is_op() || !IsFusible(n.op)) {
    return Illegal(std::string("L1: ") + n.name() + " is not a pointwise op or reduction");
  }
  const bool reduction = IsReduction(n.op);
  if (n.type.dtype != "f32") return Illegal("L2: dtype " + n.type.dtype + " is not f32");
  if (!kernel.nodes.empty() && n.type.device != kernel.device) {
    return Illegal("L2: device " + n.type.device + " differs from the kernel's " + kernel.device);
  }
  // L3: the new domain.
  std::vector<int64_t> domain = kernel.domain;
  std::vector<int64_t> tmp;
  for (const Operand& o : n.operands) {
    if (o.is_scalar()) continue;
    const Node& in = graph.node(o.value);
    if (in.type.dtype != "f32") return Illegal("L2: operand dtype " + in.type.dtype);
    if (in.type.device != n.type.device) return Illegal("L2: operand on another device");
    if (!TryBroadcast(domain, in.type.sizes, &tmp)) {
      return Illegal("L3: operand shape " + ShapeString(in.type.sizes) +
                     " does not broadcast with the domain " + ShapeString(domain));
    }
    domain = tmp;
  }
  if (!reduction) {
    if (!TryBroadcast(domain, n.type.sizes, &tmp)) {
      return Illegal("L3: output shape does not broadcast with the domain");
    }
    domain = tmp;
  }
  size_t shift = domain.size() - kernel.domain.size();
  std::vector<int> reduce_dims;
  for (int d : kernel.reduce_dims) {
    int nd = d + static_cast<int>(shift);
    if (domain[nd] != kernel.domain[d]) {
      return Illegal("L3: the node would change the extent of reduced dim " + std::to_string(d));
    }
    reduce_dims.push_back(nd);
  }
  // L4.
  if (reduction) {
    const Node& in = graph.node(n.operands[0].value);
    int rank = in.type.rank();
    int offset = static_cast<int>(domain.size()) - rank;
    std::vector<int> mine;
    for (int d : NormalizeDims(n.attrs.dims, rank)) mine.push_back(d + offset);
    if (mine.empty()) return Illegal("L4: reduction over no dims");
    for (int d : mine) {
      if (in.type.sizes[d - offset] != domain[d]) {
        return Illegal("L4: reduction over dim " + std::to_string(d - offset) +
                       " whose extent is broadcast in the domain");
      }
    }
    if (!reduce_dims.empty() && mine != reduce_dims) {
      return Illegal("L4: reduces dims other than the kernel's reduced dims");
    }
    reduce_dims = mine;
  }
  // L5.
  for (const Operand& o : n.operands) {
    if (o.is_scalar() || !kernel.Contains(o.value)) continue;
    const Node& in = graph.node(o.value);
    if (IsReductionNode(in) && !in.attrs.keepdim) {
      return Illegal("L5: operand %" + std::to_string(o.value) +
                     " is a keepdim=false reduction of this kernel");
    }
  }
  FusionDecision d;
  d.legal = true;
  d.domain = std::move(domain);
  d.reduce_dims = std::move(reduce_dims);
  return d;
}

FusedKernel SingleNodeKernel(const Graph& graph, int node) {
  FusedKernel empty;
  empty.device = graph.node(node).type.device;
  FusionDecision d = CanFuse(graph, empty, node);
  if (!d.legal)
    throw GraphError("opscope compile: node %" + std::to_string(node) + " (" +
                     graph.node(node).name() + ") cannot form a kernel: " + d.reason);
  empty.nodes = {node};
  empty.domain = d.domain;
  empty.reduce_dims = d.reduce_dims;
  return empty;
}

bool IsRowValue(const Graph& graph, const FusedKernel& kernel, int node) {
  if (kernel.reduce_dims.empty()) return false;
  const Node& n = graph.node(node);
  if (IsReductionNode(n) && kernel.Contains(node)) return true;
  const auto& sizes = n.type.sizes;
  int offset = static_cast<int>(kernel.domain.size()) - static_cast<int>(sizes.size());
  for (int d : kernel.reduce_dims) {
    int i = d - offset;
    if (i >= 0 && sizes[i] != 1) return false;
  }
  return true;
}

std::vector<int64_t> AlignedStrides(const Graph& graph, const FusedKernel& kernel, int node) {
  const Node& n = graph.node(node);
  size_t rank = kernel.domain.size();
  std::vector<int64_t> out(rank, 0);
  bool squeezed = IsReductionNode(n) && !n.attrs.keepdim && kernel.Contains(node);
  if (squeezed) {
    size_t j = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (std::find(kernel.reduce_dims.begin(), kernel.reduce_dims.end(), static_cast<int>(d)) !=
          kernel.reduce_dims.end())
        continue;
      if (j < n.type.sizes.size() && n.type.sizes[j] != 1) out[d] = n.type.strides[j];
      ++j;
    }
    return out;
  }
  size_t offset = rank - n.type.sizes.size();
  for (size_t i = 0; i < n.type.sizes.size(); ++i) {
    if (n.type.sizes[i] != 1) out[offset + i] = n.type.strides[i];
  }
  return out;
}

FusionPlan PlanFusion(const Graph& graph) {
  FusionPlan plan;
  bool open = false;
  auto close = [&] { open = false; };
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    int node = static_cast<int>(i);
    if (n.is_input() || n.is_constant()) continue;
    if (!IsFusible(n.op)) {  // an extern op
      close();
      plan.steps.push_back({Step::kExtern, node});
      continue;
    }
    if (open) {
      FusedKernel& k = plan.kernels.back();
      FusionDecision d = CanFuse(graph, k, node);
      if (d.legal) {
        k.nodes.push_back(node);
        k.domain = std::move(d.domain);
        k.reduce_dims = std::move(d.reduce_dims);
        continue;
      }
    }
    plan.kernels.push_back(SingleNodeKernel(graph, node));
    plan.steps.push_back({Step::kKernel, static_cast<int>(plan.kernels.size()) - 1});
    open = true;
  }
  // Inputs and outputs of each kernel.
  auto users = graph.Users();
  std::vector<bool> is_output(graph.nodes().size(), false);
  for (int o : graph.outputs()) is_output[o] = true;
  for (FusedKernel& k : plan.kernels) {
    for (int node : k.nodes) {
      for (const Operand& o : graph.node(node).operands) {
        if (o.is_scalar() || k.Contains(o.value) || graph.node(o.value).is_constant()) continue;
        if (std::find(k.inputs.begin(), k.inputs.end(), o.value) == k.inputs.end())
          k.inputs.push_back(o.value);
      }
      bool escapes = is_output[node];
      for (int u : users[node])
        if (!k.Contains(u)) escapes = true;
      if (escapes) k.outputs.push_back(node);
    }
  }
  return plan;
}

std::string FusionPlan::ToString(const Graph& graph) const {
  std::string s;
  for (const Step& step : steps) {
    if (step.kind == Step::kExtern) {
      s += "extern %" + std::to_string(step.index) + " " + graph.node(step.index).name() + "\n";
      continue;
    }
    const FusedKernel& k = kernels[step.index];
    s += "kernel " + std::to_string(step.index) + " domain=" + ShapeString(k.domain) + " reduce=" +
         ShapeString(std::vector<int64_t>(k.reduce_dims.begin(), k.reduce_dims.end())) + " nodes=";
    for (size_t i = 0; i < k.nodes.size(); ++i)
      s += (i ? "," : "") + std::string("%") + std::to_string(k.nodes[i]);
    s += " in=";
    for (size_t i = 0; i < k.inputs.size(); ++i)
      s += (i ? "," : "") + std::string("%") + std::to_string(k.inputs[i]);
    s += " out=";
    for (size_t i = 0; i < k.outputs.size(); ++i)
      s += (i ? "," : "") + std::string("%") + std::to_string(k.outputs[i]);
    s += "\n";
  }
  return s;
}

}  // namespace opscope::compiler
