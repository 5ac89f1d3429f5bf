// Device programs: what work on the simulated NeuronCore is, a list of loop-nest ops over 2-D
// tiles with inputs and outputs in HBM (host memory stands in for it) and intermediates in SBUF,
// and what one execution of a program costs on the model (EstimateProgram, pure). An eager op is
// a program of one op; a fused op (aten::_fused_rms_norm) or a compiled graph is one program of
// several ops, executed once. docs/neuron-model.md documents the cost model.
//
//   Program p("aten::mul");
//   int x = p.AddBuffer({"x", 256, 4096});
//   int y = p.AddBuffer({"y", 256, 4096});
//   p.AddOp({"tensor_tensor", OpClass::kElementwise, Engine::kVector, {x, x}, y});
//   ProgramCost c = EstimateProgram(p, Preset("trn1"));
//
// Thread safety: Program is a plain value; EstimateProgram has no state.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_H_
#define OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device/neuron/params.h"
#include "opscope/neuron.h"

namespace opscope::neuron {

// Bit masks of engines an op may run on (Op::engines).
inline constexpr uint8_t EngineBit(Engine e) { return uint8_t(1u << int(e)); }

enum class Memory : uint8_t {
  kHbm,   // program input or output: moved by DMA
  kSbuf,  // intermediate: lives in SBUF; spilled to HBM only when SBUF is full
};

// A buffer seen as [rows, cols]: rows map to partitions, cols to the free dimension. A buffer with
// cols == 1 holds one value per row (a per-partition scalar operand); one with rows == 1 is shared
// by every row (loaded once, broadcast over partitions). elem_bytes: 4 = FP32, 2 = BF16, 1 = FP8.
struct Buffer {
  std::string name;
  int64_t rows = 1;
  int64_t cols = 1;
  int32_t elem_bytes = 4;
  Memory memory = Memory::kHbm;
};

enum class OpClass : uint8_t {
  kElementwise,  // out[r, c] = f(in_i[r or 0, c or 0]...); iteration space = the output
  kRowReduce,    // out[r, 0] = reduce over c of f(in_i[r, c]...); iteration space = input 0
  kMatmul,       // out[M, N] = in0[M, K] x in1[K, N] on TensorE (per batch, see Op::batch)
};

// One loop-nest op, costed per tile by the NKI cost model: its input tiles with more than one
// column are streamed (N cycles each), per-row [rows, 1] inputs are scalar operands. `name` is
// the instruction name in traces ("tensor_tensor", "activation").
struct Op {
  std::string name;
  OpClass op_class = OpClass::kElementwise;
  Engine engine = Engine::kVector;  // the engine it runs on (the preferred one when `engines`)
  std::vector<int> inputs;          // buffer indices
  int output = -1;                  // buffer index
  int passes = 1;                   // engine instructions per tile (a composite the engine
                                    // cannot do in one, e.g. two dependent tensor_tensor ops)
  uint8_t engines = 0;  // 0: `engine` only; else EngineBit()s of engines the scheduler may
                        // pick from (an nki unknown_engine op: tensor_scalar, tensor_copy)
  int64_t batch = 1;    // kMatmul: in0 [batch*M, K], in1 [batch*K, N], out [batch*M, N]
};

struct Program {
  Program() = default;
  explicit Program(std::string n) : name(std::move(n)) {}
  int AddBuffer(Buffer b);
  int AddOp(Op op);  // throws std::invalid_argument for bad buffer indices or shapes
  // Bytes of the program's inputs and outputs in HBM (each HBM buffer once).
  int64_t HbmBytes() const;
  // HBM buffers: the I/O tensors an execution binds.
  int IoTensors() const;

  std::string name;  // the program's identity: first execution and program switches key on it
  std::vector<Buffer> buffers;
  std::vector<Op> ops;  // in program order; an op reads buffers earlier ops wrote
  // The framework's eager path runs it (each execution pays tensor binding and the eager path's
  // remainder); false for a kernel benchmark's steady-state execution.
  bool eager = false;
  // Computes the real outputs in host memory (the simulated HBM). Runs on the core's worker
  // thread; may be empty (timing only).
  std::function<void()> compute;
};

struct EstimateOptions {
  bool first_execution = false;  // pays the library load
  bool program_switch = false;   // the core's previous execution ran another program
};

// What one execution of `program` costs on the model (not run; no activity). Throws ParamsError
// for invalid params and std::invalid_argument for an invalid program.
ProgramCost EstimateProgram(const Program& program, const Params& params,
                            EstimateOptions options = {});

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_PROGRAM_H_
