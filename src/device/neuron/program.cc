// Program building and the pure cost estimate.
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "device/neuron/instruction_graph.h"
#include "opscope/neuron.h"

namespace opscope::neuron {

const char* EngineName(Engine e) {
  switch (e) {
    case Engine::kTensor:
      return "TensorE";
    case Engine::kVector:
      return "VectorE";
    case Engine::kScalar:
      return "ScalarE";
    case Engine::kGpSimd:
      return "GpSimdE";
    case Engine::kDma:
      return "DMA";
  }
  return "?";
}

int Program::AddBuffer(Buffer b) {
  if (b.rows < 1 || b.cols < 1 || b.elem_bytes < 1) {
    throw std::invalid_argument("neuron program '" + name + "': buffer '" + b.name +
                                "' needs rows, cols and elem_bytes >= 1");
  }
  buffers.push_back(std::move(b));
  return int(buffers.size()) - 1;
}

int Program::AddOp(Op op) {
  auto check = [&](int b, const char* what) {
    if (b < 0 || b >= int(buffers.size())) {
      throw std::invalid_argument("neuron program '" + name + "': op '" + op.name + "' " + what +
                                  " buffer " + std::to_string(b) + " does not exist (" +
                                  std::to_string(buffers.size()) + " buffers)");
    }
  };
  check(op.output, "output");
  for (int in : op.inputs) check(in, "input");
  if (op.inputs.empty() && op.op_class != OpClass::kElementwise) {
    throw std::invalid_argument("neuron program '" + name + "': op '" + op.name +
                                "' needs an input");
  }
  if (op.op_class == OpClass::kMatmul) {
    if (op.inputs.size() != 2 || buffers[op.inputs[0]].cols != buffers[op.inputs[1]].rows) {
      throw std::invalid_argument("neuron program '" + name + "': matmul '" + op.name +
                                  "' needs inputs [M, K] and [K, N]");
    }
    op.engine = Engine::kTensor;
  }
  ops.push_back(std::move(op));
  return int(ops.size()) - 1;
}

int64_t Program::HbmBytes() const {
  int64_t total = 0;
  for (const auto& b : buffers) {
    if (b.memory == Memory::kHbm) total += b.rows * b.cols * b.elem_bytes;
  }
  return total;
}

ProgramCost EstimateProgram(const Program& program, const Params& params, bool first_execution) {
  InstructionGraph graph;
  graph.Lower(program, params);
  ProgramCost cost;
  cost.makespan_ns = graph.Schedule(params);
  cost.fixed_ns = std::llround(params.exec_fixed_us * 1e3);
  cost.device_ns = cost.fixed_ns + cost.makespan_ns +
                   (first_execution ? std::llround(params.first_exec_load_us * 1e3) : 0);
  cost.instructions = int64_t(graph.instructions().size());
  cost.dma_bytes = graph.dma_bytes();
  cost.busy_ns = graph.busy_ns();
  return cost;
}

}  // namespace opscope::neuron
