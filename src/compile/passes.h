// Graph-to-graph passes run before fusion. Each returns the number of nodes it changed or
// removed and leaves a valid graph (inputs keep their positions; outputs keep their order).
#ifndef OPSCOPE_SRC_COMPILE_PASSES_H_
#define OPSCOPE_SRC_COMPILE_PASSES_H_

#include "compile/graph.h"

namespace opscope::compiler {

// Removes nodes no output depends on. Inputs are always kept. Ops whose ATen name ends in '_'
// (in-place) are kept as they may have effects.
int EliminateDeadCode(Graph& graph);

// Merges nodes with the same op, operands and attributes into the first one.
int EliminateCommonSubexpressions(Graph& graph);

// Folds pointwise ops and reductions over constants into constants, inlines single-element
// constants as scalar operands, and drops identities (x * 1, x + 0, x - 0, x / 1, x ** 1) when
// the result is not a graph output and has the operand's shape.
int FoldConstants(Graph& graph);

struct PassStats {
  int dead = 0;
  int common = 0;
  int folded = 0;
};
// Runs the passes to a fixed point: fold, CSE, DCE.
PassStats RunPasses(Graph& graph);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_PASSES_H_
