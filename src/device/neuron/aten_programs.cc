// ATen op -> Neuron program lowering (the engine and instruction each op uses).
#include "device/neuron/aten_programs.h"

#include <algorithm>
#include <utility>

namespace opscope::neuron {
namespace {

constexpr uint8_t kVectorOrScalar = EngineBit(Engine::kVector) | EngineBit(Engine::kScalar);
constexpr uint8_t kAnyVectorClass = kVectorOrScalar | EngineBit(Engine::kGpSimd);

bool IsActivation(std::string_view op) {
  for (std::string_view f :
       {"aten::rsqrt", "aten::sqrt", "aten::exp", "aten::pow", "aten::silu", "aten::gelu",
        "aten::sigmoid", "aten::tanh", "aten::log", "aten::square"}) {
    if (op == f) return true;
  }
  return false;
}

bool IsCopy(std::string_view op) {
  return op == "aten::copy_" || op == "aten::to" || op == "aten::clone" ||
         op == "aten::contiguous" || op == "aten::fill_";
}

std::string ProgramName(std::string_view op, const std::vector<Shape2D>& inputs) {
  // A Neuron program is compiled per op and shape; the name keys first executions and switches.
  std::string name(op);
  for (const auto& s : inputs) {
    name += "[" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "]";
  }
  return name;
}

Op MakeOp(const char* name, OpClass cls, Engine engine, std::vector<int> inputs, int output,
          uint8_t engines = 0) {
  Op op;
  op.name = name;
  op.op_class = cls;
  op.engine = engine;
  op.inputs = std::move(inputs);
  op.output = output;
  op.engines = engines;
  return op;
}

int RowBuffer(Program* p, const char* name, int64_t rows) {
  return p->AddBuffer({name, rows, 1, 4, Memory::kSbuf});
}

}  // namespace

Shape2D View2D(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1, 1};
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  return {std::max<int64_t>(rows, 1), std::max<int64_t>(shape.back(), 1)};
}

Op ElementwiseOp(std::string_view op, const Program& program, std::vector<int> inputs, int output) {
  int streamed = 0;
  for (int in : inputs) streamed += program.buffers.at(in).cols > 1 ? 1 : 0;
  if (IsActivation(op)) {
    return MakeOp("activation", OpClass::kElementwise, Engine::kScalar, std::move(inputs), output);
  }
  if (IsCopy(op)) {
    return MakeOp("tensor_copy", OpClass::kElementwise, Engine::kVector, std::move(inputs), output,
                  kAnyVectorClass);
  }
  if (op == "aten::reciprocal") {
    return MakeOp("reciprocal", OpClass::kElementwise, Engine::kVector, std::move(inputs), output);
  }
  if (streamed >= 2) {
    return MakeOp("tensor_tensor", OpClass::kElementwise, Engine::kVector, std::move(inputs),
                  output);
  }
  // One streamed tensor with scalar (or per-row) operands: VectorE tensor_scalar, or a ScalarE
  // activation with scale and bias (an nki unknown_engine op).
  return MakeOp("tensor_scalar", OpClass::kElementwise, Engine::kVector, std::move(inputs), output,
                kVectorOrScalar);
}

Program EagerProgram(std::string_view op, const std::vector<Shape2D>& inputs, Shape2D output,
                     int32_t elem_bytes) {
  if ((op == "aten::mm" || op == "aten::matmul") && inputs.size() == 2) {
    return MatmulProgram("aten::mm", 1, inputs[0].rows, inputs[0].cols, inputs[1].cols, elem_bytes);
  }
  if (op == "aten::_fused_rms_norm" && !inputs.empty()) {
    return FusedRmsNormProgram(inputs[0].rows, inputs[0].cols, inputs.size() > 1, elem_bytes);
  }
  if ((op == "aten::softmax" || op == "aten::_softmax") && !inputs.empty()) {
    return SoftmaxProgram(inputs[0].rows, inputs[0].cols, elem_bytes);
  }
  if ((op == "aten::layer_norm" || op == "aten::native_layer_norm") && !inputs.empty()) {
    return LayerNormProgram(inputs[0].rows, inputs[0].cols, inputs.size() > 1, inputs.size() > 2,
                            elem_bytes);
  }
  Program p(ProgramName(op, inputs));
  std::vector<int> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(
        p.AddBuffer({"in" + std::to_string(i), inputs[i].rows, inputs[i].cols, elem_bytes}));
  }
  const bool reduce =
      op == "aten::mean" || op == "aten::sum" || op == "aten::amax" || op == "aten::amin";
  if (reduce && !inputs.empty() && output.cols == 1) {
    int out = p.AddBuffer({"out", output.rows, 1, elem_bytes});
    p.AddOp(MakeOp("tensor_reduce", OpClass::kRowReduce, Engine::kVector, {in[0]}, out));
    return p;
  }
  int out = p.AddBuffer({"out", output.rows, output.cols, elem_bytes});
  p.AddOp(ElementwiseOp(op, p, in, out));
  return p;
}

Program MatmulProgram(std::string_view op, int64_t batch, int64_t m, int64_t k, int64_t n,
                      int32_t elem_bytes) {
  Program p(ProgramName(op, {{batch * m, k}, {batch * k, n}}));
  // Matmul operands may be FP8; the result leaves PSUM as FP32 (or BF16 for BF16 inputs).
  const int32_t out_bytes = elem_bytes == 1 ? 4 : elem_bytes;
  int a = p.AddBuffer({"a", batch * m, k, elem_bytes});
  int b = p.AddBuffer({"b", batch * k, n, elem_bytes});
  int out = p.AddBuffer({"out", batch * m, n, out_bytes});
  Op mm = MakeOp("matmul", OpClass::kMatmul, Engine::kTensor, {a, b}, out);
  mm.batch = batch;
  p.AddOp(std::move(mm));
  return p;
}

void AppendRmsNorm(Program* p, int x, int weight, int out) {
  const int64_t rows = p->buffers[x].rows;
  int ss = RowBuffer(p, "sum_sq", rows);
  int r = RowBuffer(p, "rstd", rows);
  // square and accumulate along the row in one ScalarE instruction per tile (activation_reduce).
  p->AddOp(MakeOp("activation_reduce", OpClass::kRowReduce, Engine::kScalar, {x}, ss));
  // rsqrt(sum / hidden + eps): one ScalarE activation over a [rows, 1] column.
  p->AddOp(MakeOp("activation", OpClass::kElementwise, Engine::kScalar, {ss}, r));
  if (weight >= 0) {
    // (x * r) * w: one scalar_tensor_tensor per tile, x and w streamed.
    p->AddOp(MakeOp("scalar_tensor_tensor", OpClass::kElementwise, Engine::kVector, {x, r, weight},
                    out));
  } else {
    p->AddOp(MakeOp("tensor_scalar", OpClass::kElementwise, Engine::kVector, {x, r}, out,
                    kVectorOrScalar));
  }
}

void AppendSoftmax(Program* p, int x, int out) {
  const int64_t rows = p->buffers[x].rows, cols = p->buffers[x].cols;
  int mx = RowBuffer(p, "max", rows);
  int ex = p->AddBuffer({"exp", rows, cols, p->buffers[x].elem_bytes, Memory::kSbuf});
  int sum = RowBuffer(p, "sum", rows);
  int inv = RowBuffer(p, "inv_sum", rows);
  p->AddOp(MakeOp("tensor_reduce", OpClass::kRowReduce, Engine::kVector, {x}, mx));
  // exp(x - max) on ScalarE (the max as its bias), its row sum on VectorE, then x / sum.
  p->AddOp(MakeOp("activation", OpClass::kElementwise, Engine::kScalar, {x, mx}, ex));
  p->AddOp(MakeOp("tensor_reduce", OpClass::kRowReduce, Engine::kVector, {ex}, sum));
  p->AddOp(
      MakeOp("reciprocal", OpClass::kElementwise, Engine::kVector, {sum}, inv, kVectorOrScalar));
  p->AddOp(MakeOp("tensor_scalar", OpClass::kElementwise, Engine::kVector, {ex, inv}, out,
                  kVectorOrScalar));
}

void AppendLayerNorm(Program* p, int x, int weight, int bias, int out) {
  const int64_t rows = p->buffers[x].rows, cols = p->buffers[x].cols;
  int stats = RowBuffer(p, "mean_rstd", rows);
  // bn_stats + bn_aggr on VectorE, then (x - mean) * rstd as one ScalarE activation (scale and
  // bias per row), then the affine transform on VectorE.
  p->AddOp(MakeOp("bn_stats", OpClass::kRowReduce, Engine::kVector, {x}, stats));
  if (weight < 0 && bias < 0) {
    p->AddOp(MakeOp("activation", OpClass::kElementwise, Engine::kScalar, {x, stats}, out));
    return;
  }
  int norm = p->AddBuffer({"norm", rows, cols, p->buffers[x].elem_bytes, Memory::kSbuf});
  p->AddOp(MakeOp("activation", OpClass::kElementwise, Engine::kScalar, {x, stats}, norm));
  if (weight >= 0 && bias >= 0) {
    int scaled = p->AddBuffer({"scaled", rows, cols, p->buffers[x].elem_bytes, Memory::kSbuf});
    p->AddOp(
        MakeOp("tensor_tensor", OpClass::kElementwise, Engine::kVector, {norm, weight}, scaled));
    p->AddOp(MakeOp("tensor_tensor", OpClass::kElementwise, Engine::kVector, {scaled, bias}, out));
  } else {
    p->AddOp(MakeOp("tensor_tensor", OpClass::kElementwise, Engine::kVector,
                    {norm, weight >= 0 ? weight : bias}, out));
  }
}

Program FusedRmsNormProgram(int64_t rows, int64_t hidden, bool has_weight, int32_t elem_bytes) {
  Program p("aten::_fused_rms_norm[" + std::to_string(rows) + "x" + std::to_string(hidden) + "]");
  int x = p.AddBuffer({"x", rows, hidden, elem_bytes});
  int w = has_weight ? p.AddBuffer({"weight", 1, hidden, elem_bytes}) : -1;
  int y = p.AddBuffer({"y", rows, hidden, elem_bytes});
  AppendRmsNorm(&p, x, w, y);
  return p;
}

Program SoftmaxProgram(int64_t rows, int64_t cols, int32_t elem_bytes) {
  Program p(ProgramName("aten::_softmax", {{rows, cols}}));
  int x = p.AddBuffer({"x", rows, cols, elem_bytes});
  int y = p.AddBuffer({"y", rows, cols, elem_bytes});
  AppendSoftmax(&p, x, y);
  return p;
}

Program LayerNormProgram(int64_t rows, int64_t cols, bool has_weight, bool has_bias,
                         int32_t elem_bytes) {
  std::vector<Shape2D> shapes = {{rows, cols}};
  if (has_weight) shapes.push_back({1, cols});
  if (has_bias) shapes.push_back({1, cols});
  Program p(ProgramName("aten::native_layer_norm", shapes));
  int x = p.AddBuffer({"x", rows, cols, elem_bytes});
  int w = has_weight ? p.AddBuffer({"weight", 1, cols, elem_bytes}) : -1;
  int b = has_bias ? p.AddBuffer({"bias", 1, cols, elem_bytes}) : -1;
  int y = p.AddBuffer({"y", rows, cols, elem_bytes});
  AppendLayerNorm(&p, x, w, b, y);
  return p;
}

}  // namespace opscope::neuron
