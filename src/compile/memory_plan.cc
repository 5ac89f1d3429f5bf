// Memory planning (memory_plan.h): buffer lifetimes and reuse for a fused program.
#include "compile/memory_plan.h"

#include <algorithm>

namespace opscope::compiler {

MemoryPlan PlanMemory(const Graph& graph, const FusionPlan& plan) {
  const auto& nodes = graph.nodes();
  MemoryPlan mp;
  mp.values.resize(nodes.size());
  std::vector<bool> is_output(nodes.size(), false);
  for (int o : graph.outputs()) is_output[o] = true;

  // The step that defines each value, and the last step reading it.
  std::vector<int> def(nodes.size(), -1), last_use(nodes.size(), -1);
  std::vector<bool> by_extern(nodes.size(), false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    std::vector<int> reads, writes;
    if (step.kind == Step::kKernel) {
      reads = plan.kernels[step.index].inputs;
      writes = plan.kernels[step.index].outputs;
    } else {
      for (const Operand& o : graph.node(step.index).operands)
        if (!o.is_scalar()) reads.push_back(o.value);
      writes = {step.index};
      by_extern[step.index] = true;
    }
    for (int r : reads) last_use[r] = static_cast<int>(s);
    for (int w : writes) def[w] = static_cast<int>(s);
  }

  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (!n.is_input()) mp.eager_bytes += n.type.numel() * 4;
    if (n.is_input())
      mp.values[i].storage = MemoryPlan::kInput;
    else if (n.is_constant())
      mp.values[i].storage = MemoryPlan::kConstant;
    else if (by_extern[i])
      mp.values[i].storage = MemoryPlan::kExtern;
    else if (is_output[i])
      mp.values[i].storage = MemoryPlan::kOutput;
    else if (def[i] < 0)
      ++mp.fused_away;
  }

  // Slots for intermediates, allocated in step order; freed after their last reader.
  std::vector<int> slot_free_after(0);  // step index after which the slot is free; -1 = free
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (def[i] != static_cast<int>(s) || is_output[i] || by_extern[i]) continue;
      int64_t bytes = nodes[i].type.numel() * 4;
      int best = -1;
      for (size_t k = 0; k < mp.slot_bytes.size(); ++k) {
        if (slot_free_after[k] >= static_cast<int>(s)) continue;  // still live
        if (mp.slot_bytes[k] < bytes) continue;
        if (best < 0 || mp.slot_bytes[k] < mp.slot_bytes[best]) best = static_cast<int>(k);
      }
      if (best < 0) {
        best = static_cast<int>(mp.slot_bytes.size());
        mp.slot_bytes.push_back(bytes);
        slot_free_after.push_back(-1);
      }
      mp.values[i] = {MemoryPlan::kSlot, best};
      // A value nobody reads later still needs its slot for the step that writes it.
      slot_free_after[best] = std::max(last_use[i], static_cast<int>(s));
    }
  }
  for (int64_t b : mp.slot_bytes) mp.materialized_bytes += b;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (is_output[i] && !nodes[i].is_input() && !nodes[i].is_constant())
      mp.materialized_bytes += nodes[i].type.numel() * 4;
  return mp;
}

std::string MemoryPlan::ToString() const {
  std::string s = "memory plan: " + std::to_string(slot_bytes.size()) + " shared slot(s), " +
                  std::to_string(fused_away) + " value(s) fused away, " +
                  std::to_string(materialized_bytes) + " bytes materialized vs " +
                  std::to_string(eager_bytes) + " eager\n";
  for (size_t i = 0; i < values.size(); ++i) {
    static const char* kNames[] = {"fused", "input", "output", "slot", "constant", "extern"};
    s += "  %" + std::to_string(i) + ": " + kNames[values[i].storage];
    if (values[i].storage == kSlot) s += " " + std::to_string(values[i].slot);
    s += "\n";
  }
  return s;
}

}  // namespace opscope::compiler
