// A reference interpreter for the graph IR on host memory, in double precision.
//
// It evaluates node by node with broadcasting and strided inputs, exactly as the IR defines the
// ops; generated kernels are checked against it. Slow by design (one virtual index walk per
// element); only for tests and debugging. Extern ops are not supported (GraphError).
#ifndef OPSCOPE_SRC_COMPILE_GRAPH_INTERPRETER_H_
#define OPSCOPE_SRC_COMPILE_GRAPH_INTERPRETER_H_

#include <vector>

#include "compile/graph.h"

namespace opscope::compiler {

struct HostValue {
  std::vector<int64_t> sizes;
  std::vector<double> data;  // contiguous
};

// `inputs[i]` points at the first element of graph input i, laid out with its type's strides.
std::vector<HostValue> InterpretGraph(const Graph& graph, const std::vector<const float*>& inputs);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_GRAPH_INTERPRETER_H_
