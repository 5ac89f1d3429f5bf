// ProgramGraph -> one Neuron program (see program_lowering.h).
#include "device/neuron/program_lowering.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace opscope::neuron {
namespace {

using Value = ProgramGraph::Value;

class Lowerer {
 public:
  Lowerer(const ProgramGraph& g, Program* out) : g_(g), out_(out) {}

  void Kernel(const ProgramGraph::Kernel& k) {
    k_ = &k;
    in_kernel_ = std::set<int>(k.values.begin(), k.values.end());
    row_ = std::set<int>(k.row_values.begin(), k.row_values.end());
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
        for (int o : g_.values[n].operands)
          if (!group.count(o) && !IsConstant(o)) ins.insert(Buffer(o));
      int outb = RowBuffer(row_group.back());
      for (int n : row_group) buffer_[n] = outb;
      Emit("activation", OpClass::kElementwise, Engine::kScalar,
           std::vector<int>(ins.begin(), ins.end()), outb);
      row_group.clear();
    };
    for (int n : k.values) {
      const Value& v = g_.values[n];
      if (v.kind != Value::Kind::kOp || !IsFused(v.op)) {
        throw std::invalid_argument(std::string("neuron: ") + Name(v) +
                                    " cannot be part of a device program (pointwise ops and "
                                    "reductions only)");
      }
      if (GetOpInfo(v.op).fusion == FusionClass::kReduction) {
        flush();
        std::vector<int> closure;
        std::vector<int> ins = Loads({v.operands.at(0)}, &closure);
        Emit(closure.empty() ? "tensor_reduce" : "tensor_tensor_reduce", OpClass::kRowReduce,
             Engine::kVector, ins, RowBuffer(n));
      } else if (row_.count(n)) {
        row_group.push_back(n);
      }
    }
    flush();
    for (int o : k.outputs) {
      if (row_.count(o)) continue;
      std::vector<int> closure;
      std::vector<int> ins = Loads({o}, &closure);
      bool uses_rows = false;
      for (int b : ins) uses_rows = uses_rows || out_->buffers[b].cols == 1;
      Emit(uses_rows ? "scalar_tensor_tensor" : "tensor_tensor", OpClass::kElementwise,
           Engine::kVector, ins, Buffer(o));
    }
  }

 private:
  static bool IsFused(OpId op) {
    const FusionClass f = GetOpInfo(op).fusion;
    return f == FusionClass::kPointwise || f == FusionClass::kReduction;
  }
  static const char* Name(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kInput:
        return "an input";
      case Value::Kind::kConstant:
        return "a constant";
      case Value::Kind::kOp:
        break;
    }
    return OpName(v.op);
  }
  bool IsConstant(int v) const { return g_.values[v].kind == Value::Kind::kConstant; }
  bool InKernel(int v) const { return in_kernel_.count(v) > 0; }
  bool IsRow(int v) const { return !k_->reduce_dims.empty() && row_.count(v) > 0; }

  // Buffers read by the element-level closure of `targets` (kernel values computed inline);
  // the largest first (it defines a reduction's iteration space).
  std::vector<int> Loads(const std::vector<int>& targets, std::vector<int>* closure) {
    std::set<int> seen, ins;
    std::function<void(int)> visit = [&](int v) {
      if (IsConstant(v)) return;
      if (!InKernel(v) || IsRow(v)) {
        ins.insert(Buffer(v));
        return;
      }
      if (!seen.insert(v).second) return;
      closure->push_back(v);
      for (int o : g_.values[v].operands) visit(o);
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

  Memory MemoryOf(int v) const {
    const Value& value = g_.values[v];
    return value.kind == Value::Kind::kInput || value.output ? Memory::kHbm : Memory::kSbuf;
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
    const auto& sizes = g_.values[v].sizes;
    int64_t cols = sizes.empty() ? 1 : sizes.back();
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    int64_t rows = cols ? numel / cols : 0;
    if (k_ && InKernel(v) && IsRow(v)) {
      rows = rows_;
      cols = 1;
    }
    neuron::Buffer b{"%" + std::to_string(v), rows, cols, 4, MemoryOf(v)};
    return buffer_[v] = out_->AddBuffer(b);
  }

  // One engine instruction per tile: the NKI instructions fuse a closure (tensor_tensor_reduce,
  // an activation with scale and bias, scalar_tensor_tensor).
  void Emit(const char* name, OpClass cls, Engine engine, std::vector<int> ins, int output) {
    Op op;
    op.name = name;
    op.op_class = cls;
    op.engine = engine;
    op.inputs = std::move(ins);
    op.output = output;
    out_->AddOp(std::move(op));
  }

  const ProgramGraph& g_;
  Program* out_;
  std::map<int, int> buffer_;
  const ProgramGraph::Kernel* k_ = nullptr;
  std::set<int> in_kernel_, row_;
  int64_t rows_ = 1, cols_ = 1;
};

}  // namespace

Program LowerProgramGraph(const ProgramGraph& graph, const std::string& name) {
  for (size_t v = 0; v < graph.values.size(); ++v) {
    for (int o : graph.values[v].operands) {
      if (o < 0 || o >= static_cast<int>(v)) {
        throw std::invalid_argument("neuron: program value %" + std::to_string(v) + " reads %" +
                                    std::to_string(o) + " before it is defined");
      }
    }
  }
  Program out(name);
  Lowerer lowerer(graph, &out);
  for (const ProgramGraph::Kernel& k : graph.kernels) lowerer.Kernel(k);
  return out;
}

}  // namespace opscope::neuron
