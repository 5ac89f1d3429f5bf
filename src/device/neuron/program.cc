// Program building, the phases of one execution, and the pure cost estimate.
#include "device/neuron/program.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "device/neuron/instruction_graph.h"

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

const char* ExecPhaseName(ExecPhase p) {
  switch (p) {
    case ExecPhase::kLoad:
      return "library_load";
    case ExecPhase::kProgramSwitch:
      return "program_switch";
    case ExecPhase::kLaunch:
      return "launch";
    case ExecPhase::kTensorBind:
      return "tensor_bind";
    case ExecPhase::kEagerDispatch:
      return "eager_dispatch";
    case ExecPhase::kEngines:
      return "engines";
    case ExecPhase::kComplete:
      return "completion";
  }
  return "?";
}

int Program::AddBuffer(Buffer b) {
  if (b.rows < 1 || b.cols < 1) {
    throw std::invalid_argument("neuron program '" + name + "': buffer '" + b.name +
                                "' needs rows and cols >= 1");
  }
  if (b.elem_bytes != 1 && b.elem_bytes != 2 && b.elem_bytes != 4) {
    throw std::invalid_argument("neuron program '" + name + "': buffer '" + b.name +
                                "' has elem_bytes " + std::to_string(b.elem_bytes) +
                                " (1 = FP8, 2 = BF16, 4 = FP32)");
  }
  buffers.push_back(std::move(b));
  return int(buffers.size()) - 1;
}

int Program::AddOp(Op op) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("neuron program '" + name + "': op '" + op.name + "' " + what);
  };
  auto check = [&](int b, const char* what) {
    if (b < 0 || b >= int(buffers.size())) {
      fail(std::string(what) + " buffer " + std::to_string(b) + " does not exist (" +
           std::to_string(buffers.size()) + " buffers)");
    }
  };
  check(op.output, "output");
  for (int in : op.inputs) check(in, "input");
  if (op.inputs.empty() && op.op_class != OpClass::kElementwise) fail("needs an input");
  if (op.passes < 1) fail("needs passes >= 1");
  if (op.engine == Engine::kDma) fail("cannot run on the DMA engine");
  if (op.op_class == OpClass::kMatmul) {
    if (op.inputs.size() != 2 || op.batch < 1) fail("needs inputs [M, K] and [K, N]");
    const Buffer& a = buffers[op.inputs[0]];
    const Buffer& b = buffers[op.inputs[1]];
    const Buffer& o = buffers[op.output];
    if (a.rows % op.batch != 0 || b.rows % op.batch != 0 || b.rows / op.batch != a.cols ||
        o.rows != a.rows || o.cols != b.cols) {
      fail("needs inputs [batch*M, K], [batch*K, N] and output [batch*M, N]");
    }
    op.engine = Engine::kTensor;
    op.engines = 0;
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

int Program::IoTensors() const {
  int n = 0;
  for (const auto& b : buffers) n += b.memory == Memory::kHbm ? 1 : 0;
  return n;
}

std::array<int64_t, kNumExecPhases> ExecPhaseNs(const Program& program, const Params& p,
                                                EstimateOptions options, int64_t makespan_ns) {
  auto us = [](double v) { return std::llround(v * 1e3); };
  std::array<int64_t, kNumExecPhases> ns{};
  ns[int(ExecPhase::kLoad)] = options.first_execution ? us(p.first_exec_load_us) : 0;
  ns[int(ExecPhase::kProgramSwitch)] = options.program_switch ? us(p.program_switch_us) : 0;
  ns[int(ExecPhase::kLaunch)] = us(p.exec_launch_us);
  ns[int(ExecPhase::kTensorBind)] = program.eager ? us(p.tensor_bind_us * program.IoTensors()) : 0;
  ns[int(ExecPhase::kEagerDispatch)] = program.eager ? us(p.eager_dispatch_us) : 0;
  ns[int(ExecPhase::kEngines)] = makespan_ns;
  ns[int(ExecPhase::kComplete)] = us(p.exec_complete_us);
  return ns;
}

ProgramCost EstimateProgram(const Program& program, const Params& params, EstimateOptions options) {
  ValidateParams(params);
  InstructionGraph graph;
  graph.Lower(program, params);
  ProgramCost cost;
  cost.makespan_ns = graph.Schedule(params);
  cost.phase_ns = ExecPhaseNs(program, params, options, cost.makespan_ns);
  for (int64_t v : cost.phase_ns) cost.device_ns += v;
  cost.instructions = int64_t(graph.instructions().size());
  cost.dma_bytes = graph.dma_bytes();
  cost.spill_bytes = graph.spill_bytes();
  cost.busy_ns = graph.busy_ns();
  return cost;
}

}  // namespace opscope::neuron
