// The graph IR compile() captures into, transforms and lowers.
//
// A Graph is a list of nodes in topological order; each node produces one value (a tensor of f32)
// identified by the node's index. Graph inputs are input nodes, scalars folded into the graph
// are constant nodes, every other node is an op of the registry (OpId, opscope/ops.h), printed
// as ATen names it ("aten::mul"). Operands are either a value or an inline scalar
// (aten::add(x, 1e-6) keeps 1e-6 inline).
//
//   Graph g;
//   int x = g.AddInput(TensorType::Contiguous({4, 8}));
//   int sq = g.AddOp(OpId::kMul, {Operand::Value(x), Operand::Value(x)});
//   int ms = g.AddOp(OpId::kMean, {Operand::Value(sq)}, {.dims = {-1}, .keepdim = true});
//   g.SetOutputs({ms});
//   std::string text = g.ToString();  // printable, and the basis of the cache key
//
// Shapes and strides are concrete: compile() specialises on its inputs' shapes (guarded).
// Not thread-safe; a Graph is built and transformed by one thread.
#ifndef OPSCOPE_SRC_COMPILE_GRAPH_H_
#define OPSCOPE_SRC_COMPILE_GRAPH_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/ops.h"

namespace opscope::compiler {

// Thrown for malformed graphs and shape errors found while building one.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Type of a value: element type, sizes, strides (in elements) and device ("cpu", "neuron:0").
struct TensorType {
  std::string dtype = "f32";
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::string device = "cpu";

  static TensorType Contiguous(std::vector<int64_t> sizes, std::string device = "cpu");
  int64_t numel() const;
  int rank() const { return static_cast<int>(sizes.size()); }
  bool is_contiguous() const;
  bool operator==(const TensorType&) const = default;
};

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes);
// Broadcast of two shapes by PyTorch's rules; throws GraphError naming both shapes.
std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
std::string ShapeString(const std::vector<int64_t>& sizes);  // "[4, 8]"

struct Operand {
  int value = -1;     // node index, or -1 for an inline scalar
  double scalar = 0;  // the scalar when value < 0

  static Operand Value(int v) { return {v, 0}; }
  static Operand Scalar(double s) { return {-1, s}; }
  bool is_scalar() const { return value < 0; }
  bool operator==(const Operand&) const = default;
};

struct Attributes {
  std::vector<int64_t> dims = {};  // reduction dims as given (may be negative)
  bool keepdim = false;
  double alpha = 1.0;     // aten::add / aten::sub alpha
  std::string text = {};  // extern ops: their other attributes, printed (part of the key)
  bool operator==(const Attributes&) const = default;
};

enum class NodeKind : uint8_t {
  kInput,     // a graph input
  kConstant,  // every element has the value `constant`
  kOp,        // an op of the registry
};

struct Node {
  NodeKind kind = NodeKind::kOp;
  OpId op = OpId::kAdd;  // kOp only
  std::vector<Operand> operands;
  Attributes attrs;
  TensorType type;       // of the value this node produces
  int input_index = -1;  // kInput: position among the graph inputs
  double constant = 0;   // kConstant: every element has this value
  int extern_id = -1;    // extern ops: index into the capture's extern call table

  bool is_input() const { return kind == NodeKind::kInput; }
  bool is_constant() const { return kind == NodeKind::kConstant; }
  bool is_op() const { return kind == NodeKind::kOp; }
  // "input", "constant", or the op's ATen name: how ToString and errors name the node.
  const char* name() const;
};

class Graph {
 public:
  int AddInput(TensorType type);
  // A tensor of `sizes` filled with `value`.
  int AddConstant(double value, std::vector<int64_t> sizes, std::string device = "cpu");
  // Adds an op; its output type is inferred (broadcast for pointwise ops, reduced shape for
  // reductions). Throws GraphError for unknown operands or incompatible shapes.
  int AddOp(OpId op, std::vector<Operand> operands, Attributes attrs = {});
  // Adds an op whose output type is already known (capture of ops compile() does not model).
  int AddOpWithType(OpId op, std::vector<Operand> operands, Attributes attrs, TensorType type);
  void SetOutputs(std::vector<int> outputs) { outputs_ = std::move(outputs); }

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  const Node& node(int i) const { return nodes_.at(i); }
  const std::vector<int>& outputs() const { return outputs_; }
  std::vector<int>& mutable_outputs() { return outputs_; }
  int num_inputs() const { return num_inputs_; }
  // Node index of input `i`.
  int InputNode(int i) const;

  // Users of each node (by node index), recomputed on each call.
  std::vector<std::vector<int>> Users() const;
  // Checks operand order, types and outputs; throws GraphError saying which node is wrong.
  void Validate() const;

  // One line per node; stable across processes (used for the cache key).
  std::string ToString() const;

 private:
  std::vector<Node> nodes_;
  std::vector<int> outputs_;
  int num_inputs_ = 0;
};

// Canonical reduction dims: sorted, non-negative, for a value of rank `rank`. Empty `dims`
// means all dims. Throws GraphError for out-of-range dims.
std::vector<int> NormalizeDims(const std::vector<int64_t>& dims, int rank);

// 64-bit FNV-1a of `text`; stable across processes and builds.
uint64_t StableHash(std::string_view text);
std::string HexHash(uint64_t hash);  // 16 lower-case hex digits

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_GRAPH_H_
