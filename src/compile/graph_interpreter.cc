// The graph IR's reference interpreter (graph_interpreter.h), in double precision on host memory.
#include "compile/graph_interpreter.h"

#include <algorithm>
#include <cmath>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

// Multi-index walk over `sizes`; returns false after the last index.
bool Next(std::vector<int64_t>& idx, const std::vector<int64_t>& sizes) {
  for (size_t d = sizes.size(); d-- > 0;) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// Element of `v` at `idx` of a (possibly larger, right-aligned) broadcast shape.
double At(const HostValue& v, const std::vector<int64_t>& idx) {
  size_t offset = idx.size() - v.sizes.size();
  int64_t linear = 0;
  for (size_t i = 0; i < v.sizes.size(); ++i) {
    int64_t x = v.sizes[i] == 1 ? 0 : idx[offset + i];
    linear = linear * v.sizes[i] + x;
  }
  return v.data[linear];
}

}  // namespace

std::vector<HostValue> InterpretGraph(const Graph& graph, const std::vector<const float*>& inputs) {
  std::vector<HostValue> values(graph.nodes().size());
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    HostValue& out = values[i];
    out.sizes = n.type.sizes;
    out.data.assign(static_cast<size_t>(n.type.numel()), 0.0);
    if (n.type.numel() == 0) continue;
    std::vector<int64_t> idx(out.sizes.size(), 0);
    if (n.is_input()) {
      const float* base = inputs.at(n.input_index);
      size_t k = 0;
      do {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * n.type.strides[d];
        out.data[k++] = base[off];
      } while (Next(idx, out.sizes));
    } else if (n.is_constant()) {
      std::fill(out.data.begin(), out.data.end(), n.constant);
    } else if (IsPointwise(n.op)) {
      size_t k = 0;
      do {
        double a[2] = {0, 0};
        for (size_t j = 0; j < n.operands.size(); ++j) {
          const Operand& o = n.operands[j];
          a[j] = o.is_scalar() ? o.scalar : At(values[o.value], idx);
        }
        out.data[k++] = EvalPointwise(n.op, a[0], a[1], n.attrs.alpha);
      } while (Next(idx, out.sizes));
    } else if (IsReduction(n.op)) {
      const Reduction r = ReductionOf(n.op);
      const HostValue& in = values[n.operands[0].value];
      std::vector<int> dims = NormalizeDims(n.attrs.dims, static_cast<int>(in.sizes.size()));
      std::vector<int64_t> keep_sizes = in.sizes;
      int64_t count = 1;
      for (int d : dims) {
        count *= in.sizes[d];
        keep_sizes[d] = 1;
      }
      std::vector<double> acc(out.data.size(), r.init);
      std::vector<int64_t> in_idx(in.sizes.size(), 0);
      size_t k = 0;
      do {
        int64_t linear = 0;
        for (size_t d = 0; d < in_idx.size(); ++d)
          linear = linear * keep_sizes[d] + (keep_sizes[d] == 1 ? 0 : in_idx[d]);
        double x = in.data[k++];
        acc[linear] = ReductionCombine(r, acc[linear], x);
      } while (!in_idx.empty() && Next(in_idx, in.sizes));
      if (r.mean)
        for (double& a : acc) a /= static_cast<double>(count);
      out.data = std::move(acc);
    } else {
      throw GraphError(std::string("the reference interpreter cannot run ") + n.name());
    }
  }
  std::vector<HostValue> outs;
  for (int o : graph.outputs()) outs.push_back(values[o]);
  return outs;
}

}  // namespace opscope::compiler
