// Capture: run a function once on meta tensors under a DispatchInterceptor and record each op
// call into a Graph.
//
// The registry's fusion class (opscope/ops.h) decides: pointwise ops and reductions become IR
// nodes directly; softmax, layer_norm and rms_norm (kDecomposed) are decomposed into them (as
// TorchInductor decomposes composite ops), so they fuse; every other op (mm, views, factories,
// ...) becomes an extern node replayed through RunOp at run time. Tensors
// the function uses but did not receive (closed-over weights) are lifted into extra graph inputs.
// Capture refuses in-place ops and data-dependent control (item()) with a CaptureError.
#ifndef OPSCOPE_SRC_COMPILE_CAPTURE_H_
#define OPSCOPE_SRC_COMPILE_CAPTURE_H_

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "compile/graph.h"
#include "opscope/compile.h"
#include "opscope/tensor.h"

namespace opscope::compiler {

class CaptureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The arguments of an op compile() does not model (its node holds the OpId), as the function
// called it.
struct ExternCall {
  OpAttrs attrs;
  std::vector<bool> defined;  // per ATen input: false for an absent optional (not an operand)
};

struct CapturedGraph {
  Graph graph;                      // inputs: the call's inputs in order, then the lifted tensors
  std::vector<ExternCall> externs;  // Node::extern_id indexes this
  std::vector<Tensor> lifted;
  int captured_ops = 0;
};

// The graph type of a tensor (dtype, sizes, strides, device).
TensorType TypeOf(const Tensor& t);

// Runs `fn` on meta twins of `inputs` and returns the graph of what it did. Throws CaptureError
// (with the op and the reason) when the function cannot be captured.
// True when capture decomposes `op` into pointwise ops and reductions; it must agree with the
// registry's FusionClass::kDecomposed (op_table_test.cc checks every op).
bool HasDecomposition(OpId op);

CapturedGraph CaptureGraph(const CompileFn& fn, std::span<const Tensor> inputs);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_CAPTURE_H_
