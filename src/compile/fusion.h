// Fusion: which graph nodes share one loop nest, decided by a pure legality predicate.
//
// A fused kernel iterates over a domain S (a shape); `reduce_dims` are the dims of S its
// reductions run over (empty for a pointwise-only kernel). Every node in the kernel is evaluated
// at an index of S by broadcasting (right-aligned, PyTorch's rule): nodes whose shape has
// extent 1 on every reduced dim are "row" values computed once per outer index; the others are
// "element" values computed inside the loops over the reduced dims. This is the loop nest of a
// hand-fused rms_norm / softmax / layer_norm: per outer index, one pass per reduction, then one
// pass writing the element outputs.
//
// Legality (CanFuse), for adding node n to kernel K with domain S and reduced dims D:
//   L1. n is a pointwise op or a reduction (sum, mean, amax, amin) in the op table;
//   L2. n's output and operands are f32 on K's device;
//   L3. the broadcast S' of S with n's tensor operands (and n's output, for a pointwise n)
//       exists and keeps S'[d] == S[d] for every d in D (a reduction's extent never changes);
//   L4. if n is a reduction: its reduced dims, right-aligned to S', equal D (or, if K has no
//       reduction yet, become D), and its operand has the full extent S'[d] on each of them
//       (no reduction over a broadcast dim);
//   L5. no operand of n is a keepdim=false reduction computed inside K (that value lives in a
//       different index space than S).
// A node alone always forms a legal kernel. The predicate reads the graph and the kernel only.
#ifndef OPSCOPE_SRC_COMPILE_FUSION_H_
#define OPSCOPE_SRC_COMPILE_FUSION_H_

#include <string>
#include <vector>

#include "compile/graph.h"

namespace opscope::compiler {

struct FusedKernel {
  std::vector<int> nodes;        // graph nodes computed here, in topological order
  std::vector<int64_t> domain;   // S
  std::vector<int> reduce_dims;  // D: sorted indices into `domain`
  std::string device;
  // Filled by PlanFusion once grouping is final:
  std::vector<int> inputs;   // values read from memory (graph inputs, other kernels' outputs)
  std::vector<int> outputs;  // values written to memory (graph outputs, values used later)

  bool Contains(int node) const;
};

struct FusionDecision {
  bool legal = false;
  std::string reason;  // which rule failed, for debugging and tests
  std::vector<int64_t> domain;
  std::vector<int> reduce_dims;
};

// The legality predicate (rules L1-L5 above). Pure.
FusionDecision CanFuse(const Graph& graph, const FusedKernel& kernel, int node);
// The kernel formed by `node` alone.
FusedKernel SingleNodeKernel(const Graph& graph, int node);

// One step of the compiled program, in execution order.
struct Step {
  enum Kind { kKernel, kExtern } kind = kKernel;
  int index = 0;  // kernel index for kKernel; graph node for kExtern
};

struct FusionPlan {
  std::vector<FusedKernel> kernels;
  std::vector<Step> steps;
  std::string ToString(const Graph& graph) const;
};

// Groups the graph's nodes greedily in topological order: each fusible node joins the open
// kernel when CanFuse allows, else starts a new one; an extern op closes the open kernel.
// Then computes each kernel's inputs and outputs.
FusionPlan PlanFusion(const Graph& graph);

// True when a value of `node` is computed once per outer index of `kernel` ("row" level).
bool IsRowValue(const Graph& graph, const FusedKernel& kernel, int node);

// Strides (in elements) to read/write value `node` at an index of `kernel`'s domain: one per
// domain dim, 0 where the value is broadcast. A keepdim=false reduction output maps its dims to
// the non-reduced domain dims in order.
std::vector<int64_t> AlignedStrides(const Graph& graph, const FusedKernel& kernel, int node);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_FUSION_H_
