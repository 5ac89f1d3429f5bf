// C++ code generation for fused kernels (cpp_codegen.h): one loop nest per fusion group.
#include "compile/cpp_codegen.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

class KernelWriter {
 public:
  KernelWriter(const Graph& graph, const FusedKernel& kernel) : g_(graph), k_(kernel) {
    for (size_t i = 0; i < k_.inputs.size(); ++i) param_[k_.inputs[i]] = "in" + std::to_string(i);
    for (size_t i = 0; i < k_.outputs.size(); ++i)
      out_param_[k_.outputs[i]] = "out" + std::to_string(i);
    for (size_t d = 0; d < k_.domain.size(); ++d) {
      bool reduced = std::find(k_.reduce_dims.begin(), k_.reduce_dims.end(), static_cast<int>(d)) !=
                     k_.reduce_dims.end();
      (reduced ? reduce_ : outer_).push_back(static_cast<int>(d));
    }
  }

  std::string Write(int kernel_index) {
    Line("extern \"C\" void " + KernelSymbol(kernel_index) +
         "(const float* const* in, float* const* out) {");
    ++indent_;
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      Line("const float* __restrict in" + std::to_string(i) + " = in[" + std::to_string(i) + "];");
    for (size_t i = 0; i < k_.outputs.size(); ++i)
      Line("float* __restrict out" + std::to_string(i) + " = out[" + std::to_string(i) + "];");
    Loops(outer_, reduce_.empty() ? "#pragma omp simd" : "", [&] {
      if (reduce_.empty()) {
        std::set<int> loaded;
        ElementPass(AllOutputs(), &loaded);
      } else {
        RowBody();
      }
    });
    if (streamed_) Line("__builtin_ia32_sfence();  // order the streaming stores");
    --indent_;
    Line("}");
    return out_;
  }

 private:
  void Line(const std::string& s) { out_ += std::string(2 * indent_, ' ') + s + "\n"; }

  // Emits nested loops over `dims`; the innermost gets `pragma` (if any).
  void Loops(const std::vector<int>& dims, const std::string& pragma,
             const std::function<void()>& body) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i + 1 == dims.size() && !pragma.empty()) Line(pragma);
      std::string v = "i" + std::to_string(dims[i]);
      Line("for (long long " + v + " = 0; " + v + " < " + std::to_string(k_.domain[dims[i]]) +
           "LL; ++" + v + ") {");
      ++indent_;
    }
    body();
    for (size_t i = 0; i < dims.size(); ++i) {
      --indent_;
      Line("}");
    }
  }

  std::string Index(int value) const {
    std::vector<int64_t> strides = AlignedStrides(g_, k_, value);
    std::string s;
    for (size_t d = 0; d < strides.size(); ++d) {
      if (strides[d] == 0) continue;
      if (!s.empty()) s += " + ";
      s += "i" + std::to_string(d);
      if (strides[d] != 1) s += " * " + std::to_string(strides[d]) + "LL";
    }
    return s.empty() ? "0" : s;
  }

  // The expression naming value `v` (after its definition / load was emitted).
  std::string Name(const Operand& o) const {
    if (o.is_scalar()) return FloatLiteral(o.scalar);
    const Node& n = g_.node(o.value);
    if (n.is_constant()) return FloatLiteral(n.constant);
    if (k_.Contains(o.value)) return "v" + std::to_string(o.value);
    return "a" + std::to_string(o.value);
  }

  std::string Expr(int node) const {
    const Node& n = g_.node(node);
    std::vector<std::string> args;
    for (const Operand& o : n.operands) args.push_back(Name(o));
    return PointwiseExpr(n.op, args, n.attrs.alpha);
  }

  void Load(int value, std::set<int>* loaded) {
    if (k_.Contains(value) || g_.node(value).is_constant() || loaded->count(value)) return;
    loaded->insert(value);
    Line("const float a" + std::to_string(value) + " = " + param_.at(value) + "[" + Index(value) +
         "];");
  }

  bool IsRow(int node) const { return IsRowValue(g_, k_, node); }

  // Emits loads and definitions of the element-level kernel nodes `targets` depend on (and the
  // targets themselves), in topological order.
  void EmitElements(const std::vector<int>& targets, std::set<int>* loaded) {
    std::set<int> need;
    std::function<void(int)> visit = [&](int v) {
      if (!k_.Contains(v)) return;
      if (!reduce_.empty() && IsRow(v)) return;  // defined at the outer level
      if (!need.insert(v).second) return;
      for (const Operand& o : g_.node(v).operands)
        if (!o.is_scalar()) visit(o.value);
    };
    for (int t : targets) visit(t);
    for (int node : k_.nodes) {
      if (!need.count(node)) continue;
      for (const Operand& o : g_.node(node).operands)
        if (!o.is_scalar()) Load(o.value, loaded);
      Line("const float v" + std::to_string(node) + " = " + Expr(node) + ";");
    }
  }

  std::vector<int> AllOutputs() const { return k_.outputs; }

  void ElementPass(const std::vector<int>& outputs, std::set<int>* loaded) {
    EmitElements(outputs, loaded);
    for (int o : outputs) {
      std::string value = k_.Contains(o) ? "v" + std::to_string(o) : Name(Operand::Value(o));
      Line(out_param_.at(o) + "[" + Index(o) + "] = " + value + ";");
    }
  }

  // One reduction node's value: "float vN;" and a block that accumulates it over the reduced
  // dims (lanes when the innermost is long enough) and, for a mean, divides by `count`.
  void EmitReduction(int node, int64_t count, const std::set<int>& outer_loaded) {
    const Node& n = g_.node(node);
    const Reduction r = ReductionOf(n.op);
    std::string v = "v" + std::to_string(node);
    Line("float " + v + ";");
    Line("{");
    ++indent_;
    Line("float acc = " + FloatLiteral(r.init) + ";");
    auto body = [&](const std::string& acc) {
      std::set<int> loaded = outer_loaded;
      const Operand& in = n.operands[0];
      EmitElements({in.value}, &loaded);
      Load(in.value, &loaded);
      Line(ReductionUpdate(r, acc, Name(in)));
    };
    if (k_.domain[reduce_.back()] >= kLanes) {
      LaneReduction(r, body);
    } else {
      Loops(reduce_, "#pragma omp simd reduction(" + std::string(ReductionClause(r)) + ":acc)",
            [&] { body("acc"); });
    }
    if (r.mean)
      Line(v + " = acc / " + FloatLiteral(static_cast<double>(count)) + ";");
    else
      Line(v + " = acc;");
    --indent_;
    Line("}");
  }

  // The row-level values (reductions, and what depends only on the outer dims), in node order,
  // each stored when it is an output; their loads go into `outer_loaded`.
  void EmitRowValues(std::set<int>* outer_loaded) {
    int64_t count = 1;
    for (int d : reduce_) count *= k_.domain[d];
    for (int node : k_.nodes) {
      const Node& n = g_.node(node);
      if (IsReduction(n.op)) {
        EmitReduction(node, count, *outer_loaded);
      } else if (IsRow(node)) {
        for (const Operand& o : n.operands)
          if (!o.is_scalar()) Load(o.value, outer_loaded);
        Line("const float v" + std::to_string(node) + " = " + Expr(node) + ";");
      } else {
        continue;
      }
      if (std::find(k_.outputs.begin(), k_.outputs.end(), node) != k_.outputs.end())
        Line(out_param_.at(node) + "[" + Index(node) + "] = v" + std::to_string(node) + ";");
    }
  }

  // Large outputs go out with non-temporal stores (no read-for-ownership of each line), 4 floats
  // at a time, when every output pointer is 16-byte aligned: emits "if (aligned) { ... } else {"
  // and leaves the else branch open for the plain path.
  void EmitStreamingStores(const std::vector<int>& element_outputs,
                           const std::set<int>& outer_loaded) {
    std::string cond;
    for (int o : element_outputs)
      cond += (cond.empty() ? "" : " | ") + std::string("(unsigned long long)") + out_param_.at(o);
    Line("if (((" + cond + ") & 15) == 0) {");
    ++indent_;
    int inner = reduce_.back();
    std::vector<int> outer_reduce(reduce_.begin(), reduce_.end() - 1);
    Loops(outer_reduce, "", [&] {
      std::string iv = "i" + std::to_string(inner);
      Line("for (long long " + iv + "b = 0; " + iv + "b < " + std::to_string(k_.domain[inner]) +
           "LL; " + iv + "b += 4) {");
      ++indent_;
      for (int o : element_outputs) Line("float t" + std::to_string(o) + "[4];");
      Line("for (long long j = 0; j < 4; ++j) {");
      ++indent_;
      Line("const long long " + iv + " = " + iv + "b + j;");
      std::set<int> loaded = outer_loaded;
      EmitElements(element_outputs, &loaded);
      for (int o : element_outputs)
        Line("t" + std::to_string(o) + "[j] = v" + std::to_string(o) + ";");
      --indent_;
      Line("}");
      Line("{");
      ++indent_;
      Line("const long long " + iv + " = " + iv + "b;");
      for (int o : element_outputs) {
        Line("opscope_v4sf s" + std::to_string(o) + ";");
        Line("__builtin_memcpy(&s" + std::to_string(o) + ", t" + std::to_string(o) + ", 16);");
        Line("__builtin_ia32_movntps(&" + out_param_.at(o) + "[" + Index(o) + "], s" +
             std::to_string(o) + ");");
      }
      --indent_;
      Line("}");
      --indent_;
      Line("}");
    });
    --indent_;
    Line("} else {");
    ++indent_;
    streamed_ = true;
  }

  // A kernel with reduced dims: the row-level values, then the element-level outputs.
  void RowBody() {
    std::set<int> outer_loaded;
    EmitRowValues(&outer_loaded);
    std::vector<int> element_outputs;
    for (int o : k_.outputs)
      if (!IsRow(o)) element_outputs.push_back(o);
    if (element_outputs.empty()) return;
    if (CanStream(element_outputs)) EmitStreamingStores(element_outputs, outer_loaded);
    Loops(reduce_, "#pragma omp simd", [&] {
      std::set<int> loaded = outer_loaded;
      ElementPass(element_outputs, &loaded);
    });
    if (CanStream(element_outputs)) {
      --indent_;
      Line("}");
    }
  }

  // Multi-lane reduction: kLanes independent partial results over the innermost reduced dim, so
  // the adds pipeline and vectorize (one accumulator would serialize on the add latency).
  void LaneReduction(const Reduction& r, const std::function<void(const std::string&)>& body) {
    int inner = reduce_.back();
    std::vector<int> outer_reduce(reduce_.begin(), reduce_.end() - 1);
    std::string iv = "i" + std::to_string(inner);
    std::string extent = std::to_string(k_.domain[inner]) + "LL";
    Line("float accv[" + std::to_string(kLanes) + "];");
    Line("for (int j = 0; j < " + std::to_string(kLanes) + "; ++j) accv[j] = acc;");
    Loops(outer_reduce, "", [&] {
      Line("long long " + iv + "b = 0;");
      Line("for (; " + iv + "b + " + std::to_string(kLanes) + " <= " + extent + "; " + iv +
           "b += " + std::to_string(kLanes) + ") {");
      ++indent_;
      Line("for (long long j = 0; j < " + std::to_string(kLanes) + "; ++j) {");
      ++indent_;
      Line("const long long " + iv + " = " + iv + "b + j;");
      body("accv[j]");
      --indent_;
      Line("}");
      --indent_;
      Line("}");
      Line("for (long long " + iv + " = " + iv + "b; " + iv + " < " + extent + "; ++" + iv + ") {");
      ++indent_;
      body("accv[0]");
      --indent_;
      Line("}");
    });
    Line("for (int j = 0; j < " + std::to_string(kLanes) + "; ++j) {");
    ++indent_;
    Line(ReductionUpdate(r, "acc", "accv[j]"));
    --indent_;
    Line("}");
  }

  // Streaming needs: x86 SSE, outputs of at least kStreamingBytes, contiguous along the innermost
  // reduced dim whose extent is a multiple of 4, and 16-byte aligned rows.
  bool CanStream(const std::vector<int>& outputs) const {
#if !defined(__x86_64__)
    return false;
#endif
    if (reduce_.empty() || k_.domain[reduce_.back()] % 4 != 0) return false;
    int64_t bytes = 0;
    for (int o : outputs) {
      bytes += g_.node(o).type.numel() * 4;
      std::vector<int64_t> st = AlignedStrides(g_, k_, o);
      if (st[reduce_.back()] != 1) return false;
      for (int64_t s : st)
        if (s % 4 != 0 && s != 1) return false;
    }
    return bytes >= kStreamingBytes;
  }

 public:
  bool streamed() const { return streamed_; }

 private:
  static constexpr int kLanes = 32;
  static constexpr int64_t kStreamingBytes = int64_t{8} << 20;
  bool streamed_ = false;

  const Graph& g_;
  const FusedKernel& k_;
  std::map<int, std::string> param_, out_param_;
  std::vector<int> outer_, reduce_;
  std::string out_;
  int indent_ = 0;
};

}  // namespace

std::string KernelSymbol(int kernel_index) {
  return "opscope_kernel_" + std::to_string(kernel_index);
}

std::string GenerateKernel(const Graph& graph, const FusedKernel& kernel, int kernel_index) {
  return KernelWriter(graph, kernel).Write(kernel_index);
}

std::string GenerateCpp(const Graph& graph, const FusionPlan& plan, std::string_view banner) {
  std::string s = "// Generated by opscope compile() (cpu backend). Do not edit.\n";
  std::string b(banner);
  size_t start = 0;
  while (start < b.size()) {
    size_t end = b.find('\n', start);
    if (end == std::string::npos) end = b.size();
    s += "// " + b.substr(start, end - start) + "\n";
    start = end + 1;
  }
  s += "\n#if defined(__SSE__)\ntypedef float opscope_v4sf __attribute__((vector_size(16)));\n"
       "#define OPSCOPE_STREAMING 1\n#endif\n\n";
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    s += "// kernel " + std::to_string(k) + ": " + std::to_string(plan.kernels[k].nodes.size()) +
         " op(s), domain " + ShapeString(plan.kernels[k].domain) + "\n";
    s += GenerateKernel(graph, plan.kernels[k], static_cast<int>(k)) + "\n";
  }
  return s;
}

}  // namespace opscope::compiler
