// ATen op -> Neuron program lowering (the engine and instruction each op uses).
#include "device/neuron/aten_programs.h"

#include <algorithm>
#include <utility>

namespace opscope::neuron {
namespace {

struct EngineChoice {
  const char* instruction;
  Engine engine;
  double flops;
};

// Transcendentals (exp, log, tanh, sigmoid, ...) run on ScalarE's activation tables; arithmetic
// (including relu, abs, reciprocal, maximum and minimum) on VectorE (as the Neuron
// compiler places them).
EngineChoice ElementwiseChoice(std::string_view op, size_t num_inputs) {
  if (op == "aten::rsqrt" || op == "aten::sqrt" || op == "aten::exp" || op == "aten::pow" ||
      op == "aten::silu" || op == "aten::gelu" || op == "aten::log" || op == "aten::tanh" ||
      op == "aten::sigmoid") {
    return {"activation", Engine::kScalar, 1};
  }
  if (op == "aten::copy_" || op == "aten::to" || op == "aten::clone" || op == "aten::contiguous") {
    return {"tensor_copy", Engine::kGpSimd, 1};
  }
  if (num_inputs >= 2) return {"tensor_tensor", Engine::kVector, 1};
  return {"tensor_scalar", Engine::kVector, 1};
}

std::string ProgramName(std::string_view op, const std::vector<Shape2D>& inputs) {
  // A Neuron program is compiled per op and shape; the name keys the first-execution load.
  std::string name(op);
  for (const auto& s : inputs) {
    name += "[" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "]";
  }
  return name;
}

}  // namespace

Shape2D View2D(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1, 1};
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  return {std::max<int64_t>(rows, 1), std::max<int64_t>(shape.back(), 1)};
}

Program EagerProgram(std::string_view op, const std::vector<Shape2D>& inputs, Shape2D output) {
  Program p(ProgramName(op, inputs));
  std::vector<int> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(p.AddBuffer({"in" + std::to_string(i), inputs[i].rows, inputs[i].cols}));
  }
  const bool reduce =
      op == "aten::mean" || op == "aten::sum" || op == "aten::amax" || op == "aten::amin";
  if (op == "aten::mm" || op == "aten::matmul") {
    int out = p.AddBuffer({"out", output.rows, output.cols});
    p.AddOp({"matmul", OpClass::kMatmul, Engine::kTensor, in, out});
    return p;
  }
  if (reduce && !inputs.empty() && output.cols == 1) {
    int out = p.AddBuffer({"out", output.rows, 1});
    p.AddOp({"tensor_reduce", OpClass::kRowReduce, Engine::kVector, {in[0]}, out});
    return p;
  }
  if (op == "aten::_fused_rms_norm" && !inputs.empty()) {
    return FusedRmsNormProgram(inputs[0].rows, inputs[0].cols, inputs.size() > 1);
  }
  if ((op == "aten::softmax" || op == "aten::_softmax") && !inputs.empty()) {
    // max, exp(x - max) with a running sum on ScalarE, then a divide.
    Shape2D x = inputs[0];
    int mx = p.AddBuffer({"max", x.rows, 1, 4, Memory::kSbuf});
    int ex = p.AddBuffer({"exp", x.rows, x.cols, 4, Memory::kSbuf});
    int sum = p.AddBuffer({"sum", x.rows, 1, 4, Memory::kSbuf});
    int out = p.AddBuffer({"out", output.rows, output.cols});
    p.AddOp({"tensor_reduce", OpClass::kRowReduce, Engine::kVector, {in[0]}, mx});
    p.AddOp({"activation", OpClass::kElementwise, Engine::kScalar, {in[0], mx}, ex, 2});
    p.AddOp({"tensor_reduce", OpClass::kRowReduce, Engine::kVector, {ex}, sum});
    p.AddOp({"tensor_tensor", OpClass::kElementwise, Engine::kVector, {ex, sum}, out});
    return p;
  }
  if ((op == "aten::layer_norm" || op == "aten::native_layer_norm") && !inputs.empty()) {
    // bn_stats (mean and variance per row), then normalize and the affine transform.
    Shape2D x = inputs[0];
    int stats = p.AddBuffer({"stats", x.rows, 1, 8, Memory::kSbuf});
    int out = p.AddBuffer({"out", output.rows, output.cols});
    p.AddOp({"bn_stats", OpClass::kRowReduce, Engine::kVector, {in[0]}, stats, 3});
    std::vector<int> args = {in[0], stats};
    for (size_t i = 1; i < in.size(); ++i) args.push_back(in[i]);
    p.AddOp({"activation", OpClass::kElementwise, Engine::kScalar, args, out, 4});
    return p;
  }
  EngineChoice c = ElementwiseChoice(op, inputs.size());
  int out = p.AddBuffer({"out", output.rows, output.cols});
  p.AddOp({c.instruction, OpClass::kElementwise, c.engine, in, out, c.flops});
  return p;
}

Program FusedRmsNormProgram(int64_t rows, int64_t hidden, bool has_weight) {
  Program p("aten::_fused_rms_norm[" + std::to_string(rows) + "x" + std::to_string(hidden) + "]");
  int x = p.AddBuffer({"x", rows, hidden});
  int w = has_weight ? p.AddBuffer({"weight", 1, hidden}) : -1;
  int ss = p.AddBuffer({"sum_sq", rows, 1, 4, Memory::kSbuf});
  int r = p.AddBuffer({"rstd", rows, 1, 4, Memory::kSbuf});
  int y = p.AddBuffer({"y", rows, hidden});
  // x*x summed along the row in one instruction per tile (tensor_tensor_scan with accumulate).
  p.AddOp({"tensor_tensor_reduce", OpClass::kRowReduce, Engine::kVector, {x, x}, ss, 2});
  // rsqrt(sum / hidden + eps): one ScalarE activation over a [rows, 1] column.
  p.AddOp({"activation", OpClass::kElementwise, Engine::kScalar, {ss}, r, 3});
  // (x * r) * w in one scalar_tensor_tensor instruction per tile.
  std::vector<int> ins = {x, r};
  if (has_weight) ins.push_back(w);
  p.AddOp({"scalar_tensor_tensor", OpClass::kElementwise, Engine::kVector, ins, y,
           has_weight ? 2.0 : 1.0});
  return p;
}

}  // namespace opscope::neuron
