// The graph IR (graph.h): tensor types, strides, nodes and values.
#include "compile/graph.h"

#include <algorithm>
#include <cstdio>

#include "compile/op_table.h"

namespace opscope::compiler {

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

TensorType TensorType::Contiguous(std::vector<int64_t> sizes, std::string device) {
  TensorType t;
  t.strides = ContiguousStrides(sizes);
  t.sizes = std::move(sizes);
  t.device = std::move(device);
  return t;
}

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool TensorType::is_contiguous() const {
  auto c = ContiguousStrides(sizes);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != 1 && strides[i] != c[i]) return false;
  return true;
}

std::string ShapeString(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) {
      throw GraphError("The size of tensor a (" + std::to_string(x) +
                       ") must match the size of tensor b (" + std::to_string(y) +
                       ") at non-singleton dimension " + std::to_string(i) + " (shapes " +
                       ShapeString(a) + " and " + ShapeString(b) + ")");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::vector<int> NormalizeDims(const std::vector<int64_t>& dims, int rank) {
  std::vector<int> out;
  if (dims.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    int64_t nd = d < 0 ? d + rank : d;
    if (nd < 0 || nd >= std::max(rank, 1)) {
      throw GraphError("Dimension out of range (expected to be in range of [" +
                       std::to_string(-rank) + ", " + std::to_string(rank - 1) + "], but got " +
                       std::to_string(d) + ")");
    }
    if (rank == 0) continue;
    out.push_back(static_cast<int>(nd));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const char* Node::name() const {
  switch (kind) {
    case NodeKind::kInput:
      return "input";
    case NodeKind::kConstant:
      return "constant";
    case NodeKind::kOp:
      break;
  }
  return OpName(op);
}

int Graph::AddInput(TensorType type) {
  Node n;
  n.kind = NodeKind::kInput;
  n.type = std::move(type);
  if (n.type.strides.empty() && !n.type.sizes.empty())
    n.type.strides = ContiguousStrides(n.type.sizes);
  n.input_index = num_inputs_++;
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int Graph::AddConstant(double value, std::vector<int64_t> sizes, std::string device) {
  Node n;
  n.kind = NodeKind::kConstant;
  n.constant = value;
  n.type = TensorType::Contiguous(std::move(sizes), std::move(device));
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int Graph::AddOp(OpId op, std::vector<Operand> operands, Attributes attrs) {
  const OpInfo& info = GetOpInfo(op);
  const std::string name = info.name;
  if (!IsFusible(op)) {
    throw GraphError("opscope compile: cannot infer the output type of " + name +
                     "; use AddOpWithType");
  }
  if (static_cast<int>(operands.size()) != info.arity) {
    throw GraphError(name + " takes " + std::to_string(info.arity) + " operand(s), got " +
                     std::to_string(operands.size()));
  }
  std::vector<int64_t> sizes;
  std::string device;
  bool have_tensor = false;
  for (const Operand& o : operands) {
    if (o.is_scalar()) continue;
    if (o.value >= static_cast<int>(nodes_.size())) {
      throw GraphError(name + ": operand %" + std::to_string(o.value) + " is not defined yet");
    }
    const TensorType& t = nodes_[o.value].type;
    if (have_tensor && t.device != device) {
      throw GraphError(
          "Expected all tensors to be on the same device, but found at least two devices, " +
          device + " and " + t.device + "!");
    }
    sizes = have_tensor ? BroadcastShapes(sizes, t.sizes) : t.sizes;
    device = t.device;
    have_tensor = true;
  }
  if (!have_tensor) throw GraphError(name + " needs at least one tensor operand");
  if (IsReduction(op)) {
    int rank = static_cast<int>(sizes.size());
    std::vector<int> rd = NormalizeDims(attrs.dims, rank);
    std::vector<int64_t> out;
    for (int i = 0; i < rank; ++i) {
      bool reduced = std::find(rd.begin(), rd.end(), i) != rd.end();
      if (!reduced)
        out.push_back(sizes[i]);
      else if (attrs.keepdim)
        out.push_back(1);
    }
    sizes = std::move(out);
  }
  return AddOpWithType(op, std::move(operands), std::move(attrs),
                       TensorType::Contiguous(std::move(sizes), device));
}

int Graph::AddOpWithType(OpId op, std::vector<Operand> operands, Attributes attrs,
                         TensorType type) {
  Node n;
  n.kind = NodeKind::kOp;
  n.op = op;
  n.operands = std::move(operands);
  n.attrs = std::move(attrs);
  n.type = std::move(type);
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int Graph::InputNode(int i) const {
  for (size_t n = 0; n < nodes_.size(); ++n)
    if (nodes_[n].input_index == i && nodes_[n].is_input()) return static_cast<int>(n);
  throw GraphError("graph has no input " + std::to_string(i));
}

std::vector<std::vector<int>> Graph::Users() const {
  std::vector<std::vector<int>> users(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (const Operand& o : nodes_[n].operands)
      if (!o.is_scalar()) users[o.value].push_back(static_cast<int>(n));
  return users;
}

void Graph::Validate() const {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (const Operand& o : nodes_[n].operands) {
      if (!o.is_scalar() && (o.value < 0 || o.value >= static_cast<int>(n))) {
        throw GraphError("graph node %" + std::to_string(n) + " (" + nodes_[n].name() + ") uses %" +
                         std::to_string(o.value) + " before it is defined");
      }
    }
    if (nodes_[n].type.sizes.size() != nodes_[n].type.strides.size()) {
      throw GraphError("graph node %" + std::to_string(n) +
                       " has sizes and strides of different rank");
    }
  }
  for (int o : outputs_) {
    if (o < 0 || o >= static_cast<int>(nodes_.size())) {
      throw GraphError("graph output %" + std::to_string(o) + " is not a node");
    }
  }
}

namespace {
std::string TypeString(const TensorType& t) {
  std::string s = t.dtype + ShapeString(t.sizes);
  if (!t.is_contiguous()) s += "{strides=" + ShapeString(t.strides) + "}";
  return s + "@" + t.device;
}
std::string DoubleText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}
}  // namespace

std::string Graph::ToString() const {
  std::string s = "graph(" + std::to_string(num_inputs_) + " inputs)\n";
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    s += "  %" + std::to_string(n) + " : " + TypeString(node.type) + " = " + node.name();
    if (node.is_input()) {
      s += "[" + std::to_string(node.input_index) + "]\n";
      continue;
    }
    if (node.is_constant()) {
      s += "[" + DoubleText(node.constant) + "]\n";
      continue;
    }
    s += "(";
    for (size_t i = 0; i < node.operands.size(); ++i) {
      if (i) s += ", ";
      const Operand& o = node.operands[i];
      s += o.is_scalar() ? DoubleText(o.scalar) : "%" + std::to_string(o.value);
    }
    if (IsReduction(node.op) || !node.attrs.dims.empty()) {
      s += ", dims=" + ShapeString(node.attrs.dims) +
           ", keepdim=" + (node.attrs.keepdim ? "1" : "0");
    }
    if (node.attrs.alpha != 1.0) s += ", alpha=" + DoubleText(node.attrs.alpha);
    if (!node.attrs.text.empty()) s += ", " + node.attrs.text;
    s += ")\n";
  }
  s += "  return (";
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (i) s += ", ";
    s += "%" + std::to_string(outputs_[i]);
  }
  return s + ")\n";
}

uint64_t StableHash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string HexHash(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

}  // namespace opscope::compiler
