#include "compile/neuron_lowering.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

class Lowerer {
 public:
  Lowerer(const Program& p, neuron::Program* out) : p_(p), g_(p.graph), out_(out) {
    for (int o : g_.outputs()) outputs_.insert(o);
  }

  void Kernel(const FusedKernel& k) {
    k_ = &k;
    rows_ = 1;
    cols_ = 1;
    for (size_t d = 0; d < k.domain.size(); ++d) {
      bool reduced = std::find(k.reduce_dims.begin(), k.reduce_dims.end(), static_cast<int>(d)) !=
                     k.reduce_dims.end();
      (reduced ? cols_ : rows_) *= k.domain[d];
    }
    if (k.reduce_dims.empty() && !k.domain.empty()) {
      cols_ = k.domain.back();
      rows_ = cols_ ? rows_ / cols_ : 0;
    }
    std::vector<int> row_group;
    auto flush = [&] {
      if (row_group.empty()) return;
      std::set<int> ins;
      std::set<int> group(row_group.begin(), row_group.end());
      for (int n : row_group)
        for (const Operand& o : g_.node(n).operands)
          if (!o.is_scalar() && !group.count(o.value) && !g_.node(o.value).is_constant())
            ins.insert(Buffer(o.value));
      int outb = RowBuffer(row_group.back());
      for (int n : row_group) buffer_[n] = outb;
      Emit("activation", neuron::OpClass::kElementwise, neuron::Engine::kScalar,
           std::vector<int>(ins.begin(), ins.end()), outb, static_cast<double>(row_group.size()));
      row_group.clear();
    };
    for (int n : k.nodes) {
      const Node& node = g_.node(n);
      bool reduction = node.is_op() && IsReduction(node.op);
      if (reduction) {
        flush();
        std::vector<int> closure;
        std::vector<int> ins = Loads({node.operands[0].value}, &closure);
        Emit(closure.empty() ? "tensor_reduce" : "tensor_tensor_reduce",
             neuron::OpClass::kRowReduce, neuron::Engine::kVector, ins, RowBuffer(n),
             static_cast<double>(closure.size() + 1));
      } else if (IsRowValue(g_, k, n)) {
        row_group.push_back(n);
      }
    }
    flush();
    for (int o : k.outputs) {
      if (IsRowValue(g_, k, o)) continue;
      std::vector<int> closure;
      std::vector<int> ins = Loads({o}, &closure);
      bool uses_rows = false;
      for (int b : ins) uses_rows = uses_rows || out_->buffers[b].cols == 1;
      Emit(uses_rows ? "scalar_tensor_tensor" : "tensor_tensor", neuron::OpClass::kElementwise,
           neuron::Engine::kVector, ins, Buffer(o),
           static_cast<double>(std::max<size_t>(closure.size(), 1)));
    }
  }

 private:
  bool IsRow(int n) const { return !k_->reduce_dims.empty() && IsRowValue(g_, *k_, n); }

  // Buffers read by the element-level closure of `targets` (kernel nodes computed inline);
  // the largest first (it defines a reduction's iteration space).
  std::vector<int> Loads(const std::vector<int>& targets, std::vector<int>* closure) {
    std::set<int> seen, ins;
    std::function<void(int)> visit = [&](int v) {
      const Node& n = g_.node(v);
      if (n.is_constant()) return;
      if (!k_->Contains(v) || IsRow(v)) {
        ins.insert(Buffer(v));
        return;
      }
      if (!seen.insert(v).second) return;
      closure->push_back(v);
      for (const Operand& o : n.operands)
        if (!o.is_scalar()) visit(o.value);
    };
    for (int t : targets) visit(t);
    std::vector<int> out(ins.begin(), ins.end());
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
      const auto& x = out_->buffers[a];
      const auto& y = out_->buffers[b];
      return x.rows * x.cols > y.rows * y.cols;
    });
    return out;
  }

  neuron::Memory MemoryOf(int v) const {
    return g_.node(v).is_input() || outputs_.count(v) ? neuron::Memory::kHbm
                                                      : neuron::Memory::kSbuf;
  }

  int RowBuffer(int v) {
    auto it = buffer_.find(v);
    if (it != buffer_.end()) return it->second;
    neuron::Buffer b{"%" + std::to_string(v), rows_, 1, 4, MemoryOf(v)};
    return buffer_[v] = out_->AddBuffer(b);
  }

  int Buffer(int v) {
    auto it = buffer_.find(v);
    if (it != buffer_.end()) return it->second;
    const auto& sizes = g_.node(v).type.sizes;
    int64_t cols = sizes.empty() ? 1 : sizes.back();
    int64_t numel = g_.node(v).type.numel();
    int64_t rows = cols ? numel / cols : 0;
    if (k_ && k_->Contains(v) && !k_->reduce_dims.empty() && IsRowValue(g_, *k_, v)) {
      rows = rows_;
      cols = 1;
    }
    neuron::Buffer b{"%" + std::to_string(v), rows, cols, 4, MemoryOf(v)};
    return buffer_[v] = out_->AddBuffer(b);
  }

  void Emit(const char* name, neuron::OpClass cls, neuron::Engine engine, std::vector<int> ins,
            int output, double flops) {
    neuron::Op op;
    op.name = name;
    op.op_class = cls;
    op.engine = engine;
    op.inputs = std::move(ins);
    op.output = output;
    op.flops_per_element = flops;
    out_->AddOp(std::move(op));
  }

  const Program& p_;
  const Graph& g_;
  neuron::Program* out_;
  std::set<int> outputs_;
  std::map<int, int> buffer_;
  const FusedKernel* k_ = nullptr;
  int64_t rows_ = 1, cols_ = 1;
};

}  // namespace

neuron::Program LowerToNeuron(const Program& program, const std::string& name) {
  for (const Step& s : program.fusion.steps) {
    if (s.kind == Step::kExtern) {
      throw GraphError(
          std::string("the neuron backend lowers pointwise ops and reductions only; ") +
          program.graph.node(s.index).name() + " cannot be part of a device program");
    }
  }
  neuron::Program out(name);
  Lowerer lowerer(program, &out);
  for (const Step& s : program.fusion.steps) lowerer.Kernel(program.fusion.kernels[s.index]);
  return out;
}

}  // namespace opscope::compiler
