// The dependency chain of one event: framework op -> runtime call -> device execution -> engine
// instructions, found through the trace's links (parent nesting, External id, correlation).
//
// Whatever level the selected event is at, the chain is anchored at the host op it belongs to:
// selecting an op lists the runtime calls nested in it, the executions they launched and the
// instructions those ran; selecting an instruction walks back up to its execution, runtime call
// and op. Lists are capped (totals say how many there were).
#ifndef OPSCOPE_EXPLORER_CHAIN_H_
#define OPSCOPE_EXPLORER_CHAIN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "base/json_writer.h"
#include "explorer/trace_index.h"

namespace opscope::explorer {

struct Chain {
  uint32_t selected = kNone;
  int level = 0;  // of the selected event: 0 framework, 1 runtime, 2 hardware, 3 instruction
  std::vector<uint32_t> enclosing;  // host ops enclosing the anchor op, outermost first
  uint32_t op = kNone;              // the anchor host op
  std::vector<uint32_t> nested;     // host ops nested in the anchor (when an op is selected)
  std::vector<uint32_t> runtime;
  std::vector<uint32_t> hardware;
  std::vector<uint32_t> instructions;
  size_t nested_total = 0, runtime_total = 0, hardware_total = 0, instruction_total = 0;
  // Instructions per engine / DMA queue lane (all of them, not only the listed ones), lane order.
  std::vector<std::pair<uint32_t, size_t>> instruction_lanes;
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // arrows, slice -> slice
};

Chain BuildChain(const TraceIndex& index, uint32_t slice);
// {"selected","level","levels":[{"key","title","role","total","events":[...],
//  "by_lane":[{"lane","count"}] (instructions only)}],"edges":[[a,b]]}
void WriteChain(const TraceIndex& index, uint32_t slice, JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_CHAIN_H_
