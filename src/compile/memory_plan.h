// Memory planning for a fused program: which values get a buffer, and which buffers share
// storage.
//
// Values computed inside a kernel and used only there are never materialized: they live in
// registers / loop-local temporaries of the generated loop nest. The rest are:
//   - graph inputs (the caller's tensors),
//   - graph outputs (fresh tensors returned to the caller),
//   - intermediates crossing steps (a kernel output read by a later kernel or extern op): each
//     gets a slot; slots are reused once their value's last reader has run (first fit by size).
#ifndef OPSCOPE_SRC_COMPILE_MEMORY_PLAN_H_
#define OPSCOPE_SRC_COMPILE_MEMORY_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compile/fusion.h"
#include "compile/graph.h"

namespace opscope::compiler {

struct MemoryPlan {
  enum Storage : uint8_t { kNone, kInput, kOutput, kSlot, kConstant, kExtern };
  struct ValueStorage {
    // kNone: not materialized (fused away); kExtern: allocated by the extern op that makes it.
    Storage storage = kNone;
    int slot = -1;  // for kSlot
  };
  std::vector<ValueStorage> values;  // per graph node
  std::vector<int64_t> slot_bytes;   // size of each shared intermediate slot
  int64_t materialized_bytes = 0;    // slots + outputs
  int64_t eager_bytes = 0;           // what eager execution allocates for the same graph
  int fused_away = 0;                // values that never touch memory

  std::string ToString() const;
};

// Plans storage for `plan` over `graph` (steps run in plan.steps order).
MemoryPlan PlanMemory(const Graph& graph, const FusionPlan& plan);

}  // namespace opscope::compiler

#endif  // OPSCOPE_SRC_COMPILE_MEMORY_PLAN_H_
