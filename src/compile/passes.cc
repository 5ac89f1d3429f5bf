// Graph-to-graph passes before fusion (passes.h): dead code, common subexpressions, constants.
#include "compile/passes.h"

#include <map>
#include <tuple>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

// Rewrites every use of node `from` as node `to` (operands and outputs).
void ReplaceUses(Graph& graph, int from, int to, bool outputs_too) {
  for (Node& n : graph.mutable_nodes())
    for (Operand& o : n.operands)
      if (o.value == from) o.value = to;
  if (outputs_too)
    for (int& o : graph.mutable_outputs())
      if (o == from) o = to;
}

// In-place ops (ATen names ending in '_') may have effects: never removed or merged.
bool IsInPlace(const Node& n) {
  if (!n.is_op()) return false;
  const std::string_view name = OpName(n.op);
  return !name.empty() && name.back() == '_';
}

bool IsOutput(const Graph& graph, int node) {
  for (int o : graph.outputs())
    if (o == node) return true;
  return false;
}

}  // namespace

int EliminateDeadCode(Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<bool> live(nodes.size(), false);
  for (int o : graph.outputs()) live[o] = true;
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& n = nodes[i];
    if (n.is_input() || IsInPlace(n)) live[i] = true;
    if (!live[i]) continue;
    for (const Operand& o : n.operands)
      if (!o.is_scalar()) live[o.value] = true;
  }
  std::vector<int> remap(nodes.size(), -1);
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(nodes[i]);
  }
  int removed = static_cast<int>(nodes.size() - kept.size());
  if (removed == 0) return 0;
  for (Node& n : kept)
    for (Operand& o : n.operands)
      if (!o.is_scalar()) o.value = remap[o.value];
  for (int& o : graph.mutable_outputs()) o = remap[o];
  graph.mutable_nodes() = std::move(kept);
  return removed;
}

int EliminateCommonSubexpressions(Graph& graph) {
  // Key: node kind and op, operands (value or scalar bits), attrs, constant value, type.
  using Key = std::tuple<int, std::vector<std::pair<int, double>>, std::vector<int64_t>, bool,
                         double, double, std::vector<int64_t>, std::vector<int64_t>, std::string>;
  std::map<Key, int> seen;
  int merged = 0;
  auto& nodes = graph.mutable_nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    if (n.is_input() || IsInPlace(n)) continue;
    std::vector<std::pair<int, double>> ops;
    for (const Operand& o : n.operands) ops.emplace_back(o.value, o.is_scalar() ? o.scalar : 0.0);
    const int kind_and_op = n.is_op() ? static_cast<int>(n.op) : -1 - static_cast<int>(n.kind);
    Key key{kind_and_op,
            ops,
            n.attrs.dims,
            n.attrs.keepdim,
            n.attrs.alpha,
            n.constant,
            n.type.sizes,
            n.type.strides,
            n.attrs.text + "@" + n.type.device};
    auto [it, inserted] = seen.emplace(std::move(key), static_cast<int>(i));
    if (inserted) continue;
    // Outputs may alias: two identical outputs become one value returned twice.
    ReplaceUses(graph, static_cast<int>(i), it->second, /*outputs_too=*/true);
    ++merged;
  }
  if (merged) EliminateDeadCode(graph);
  return merged;
}

int FoldConstants(Graph& graph) {
  int changed = 0;
  auto& nodes = graph.mutable_nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    if (!n.is_op() || !IsFusible(n.op)) continue;
    const bool reduction = IsReduction(n.op);
    // 1. All tensor operands constant: the node is a constant.
    bool all_const = true;
    for (const Operand& o : n.operands)
      if (!o.is_scalar() && !nodes[o.value].is_constant()) all_const = false;
    if (all_const) {
      auto scalar = [&](size_t k) {
        if (k >= n.operands.size()) return 0.0;
        const Operand& o = n.operands[k];
        return o.is_scalar() ? o.scalar : nodes[o.value].constant;
      };
      double v;
      if (reduction) {
        // sum of `count` copies; mean, amax, amin of equal elements: the element.
        const Node& in = nodes[n.operands[0].value];
        int64_t count = 1;
        for (int d : NormalizeDims(n.attrs.dims, in.type.rank())) count *= in.type.sizes[d];
        const Reduction r = ReductionOf(n.op);
        v = r.combine == Reduction::kSum && !r.mean ? scalar(0) * static_cast<double>(count)
                                                    : scalar(0);
      } else {
        // Fold in float, as the kernel would compute it.
        v = static_cast<float>(EvalPointwise(n.op, static_cast<float>(scalar(0)),
                                             static_cast<float>(scalar(1)), n.attrs.alpha));
      }
      n.kind = NodeKind::kConstant;
      n.op = OpId::kAdd;  // unused by constants
      n.operands.clear();
      n.attrs = {};
      n.constant = v;
      n.type = TensorType::Contiguous(n.type.sizes, n.type.device);
      ++changed;
      continue;
    }
    if (reduction) continue;
    // 2. Inline single-element constants as scalars when that keeps the output shape.
    for (size_t k = 0; k < n.operands.size(); ++k) {
      Operand& o = n.operands[k];
      if (o.is_scalar() || !nodes[o.value].is_constant() || nodes[o.value].type.numel() != 1)
        continue;
      std::vector<int64_t> rest;
      bool has_rest = false;
      for (size_t j = 0; j < n.operands.size(); ++j) {
        if (j == k || n.operands[j].is_scalar()) continue;
        const auto& s = nodes[n.operands[j].value].type.sizes;
        rest = has_rest ? BroadcastShapes(rest, s) : s;
        has_rest = true;
      }
      if (!has_rest || rest != n.type.sizes) continue;
      o = Operand::Scalar(nodes[o.value].constant);
      ++changed;
    }
    // 3. Identities.
    if (n.operands.size() == 2 && n.operands[1].is_scalar() && !n.operands[0].is_scalar() &&
        !IsOutput(graph, static_cast<int>(i))) {
      double s = n.operands[1].scalar;
      const Node& a = nodes[n.operands[0].value];
      bool identity =
          ((n.op == OpId::kMul || n.op == OpId::kDiv || n.op == OpId::kPow) && s == 1.0) ||
          ((n.op == OpId::kAdd || n.op == OpId::kSub) && s == 0.0);
      if (identity && a.type.sizes == n.type.sizes) {
        ReplaceUses(graph, static_cast<int>(i), n.operands[0].value, /*outputs_too=*/false);
        ++changed;
      }
    }
  }
  if (changed) EliminateDeadCode(graph);
  return changed;
}

PassStats RunPasses(Graph& graph) {
  PassStats stats;
  for (int round = 0; round < 8; ++round) {
    int f = FoldConstants(graph);
    int c = EliminateCommonSubexpressions(graph);
    int d = EliminateDeadCode(graph);
    stats.folded += f;
    stats.common += c;
    stats.dead += d;
    if (f + c + d == 0) break;
  }
  return stats;
}

}  // namespace opscope::compiler
