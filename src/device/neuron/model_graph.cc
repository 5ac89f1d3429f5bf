// `opscope model`'s programs: one op at a shape, or a graph file.
#include "device/neuron/model_graph.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "base/small_file.h"
#include "device/neuron/aten_programs.h"

namespace opscope::neuron {
namespace {

// Elements a modelled tensor may have: far beyond any device's memory, small
// enough that every byte count fits in int64.
constexpr int64_t kMaxElements = int64_t(1) << 44;

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

int64_t Numel(const std::vector<int64_t>& shape, const std::string& where) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1 || __builtin_mul_overflow(n, d, &n) || n > kMaxElements) {
      throw ModelError(where + "shape " + Join(shape) + " must have dimensions >= 1 and at most " +
                       std::to_string(kMaxElements) + " elements");
    }
  }
  return n;
}

Shape2D Flatten(const std::vector<int64_t>& shape) { return View2D(shape); }

const std::set<std::string>& UnaryOps() {
  static const auto* ops =
      new std::set<std::string>{"exp",   "silu",       "sigmoid", "tanh",   "gelu", "sqrt",
                                "rsqrt", "reciprocal", "neg",     "square", "log",  "copy"};
  return *ops;
}
const std::set<std::string>& BinaryOps() {
  static const auto* ops = new std::set<std::string>{"add", "sub", "mul", "div", "max", "min"};
  return *ops;
}

bool IsNumber(const std::string& arg) {
  char* end = nullptr;
  std::strtod(arg.c_str(), &end);
  return !arg.empty() && *end == '\0';
}

std::string AtenName(const std::string& op) {
  if (op == "copy") return "aten::copy_";
  if (op == "max") return "aten::maximum";
  if (op == "min") return "aten::minimum";
  return "aten::" + op;
}

// Graph parsing state: the values defined so far.
struct Value {
  int buffer = -1;
  std::vector<int64_t> shape;
};

class GraphParser {
 public:
  GraphParser(std::string_view source, int32_t elem_bytes)
      : source_(source), elem_bytes_(elem_bytes), program_("graph:" + std::string(source)) {}

  Program Parse(std::string_view text) {
    int line_no = 0;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string line(text.substr(0, nl));
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      where_ = std::string(source_) + ":" + std::to_string(++line_no) + ": ";
      if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::istringstream in(line);
      std::vector<std::string> tok;
      for (std::string t; in >> t;) tok.push_back(t);
      if (tok.empty()) continue;
      if (tok[0] == "input") {
        Input(tok);
      } else if (tok[0] == "output") {
        Output(tok);
      } else if (tok.size() >= 3 && tok[1] == "=") {
        Define(tok);
      } else {
        Fail(
            "expected 'input NAME SHAPE', 'NAME = OP ARGS' or 'output "
            "NAME...'");
      }
    }
    where_ = std::string(source_) + ": ";
    if (outputs_ == 0) Fail("the graph has no 'output' line");
    if (program_.ops.empty()) Fail("the graph has no ops");
    return std::move(program_);
  }

 private:
  [[noreturn]] void Fail(const std::string& what) { throw ModelError(where_ + what); }

  std::vector<int64_t> ParseShape(const std::string& text) {
    std::vector<int64_t> shape;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || errno != 0 || v < 1) {
        Fail("shape '" + text + "' must be positive integers separated by commas");
      }
      shape.push_back(v);
    }
    if (shape.empty() || shape.size() > 4) Fail("shape '" + text + "' must have 1 to 4 dims");
    Numel(shape, where_);
    return shape;
  }

  void NewName(const std::string& name) {
    if (values_.count(name)) Fail("'" + name + "' is already defined");
    if (name.empty() || !(std::isalpha(uint8_t(name[0])) || name[0] == '_')) {
      Fail("'" + name + "' is not a name (letters, digits, '_')");
    }
  }

  void Input(const std::vector<std::string>& tok) {
    if (tok.size() < 3 || tok.size() > 4) Fail("expected 'input NAME SHAPE [f32|bf16|fp8]'");
    NewName(tok[1]);
    int32_t eb = elem_bytes_;
    if (tok.size() == 4) {
      try {
        eb = ElemBytesOf(tok[3]);
      } catch (const ModelError& e) {
        Fail(e.what());
      }
    }
    Value v;
    v.shape = ParseShape(tok[2]);
    Shape2D s = Flatten(v.shape);
    v.buffer = program_.AddBuffer({tok[1], s.rows, s.cols, eb, Memory::kHbm});
    values_[tok[1]] = v;
  }

  void Output(const std::vector<std::string>& tok) {
    if (tok.size() < 2) Fail("expected 'output NAME...'");
    for (size_t i = 1; i < tok.size(); ++i) {
      program_.buffers[size_t(Get(tok[i]).buffer)].memory = Memory::kHbm;
      ++outputs_;
    }
  }

  const Value& Get(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) Fail("'" + name + "' is not defined");
    return it->second;
  }

  int NewBuffer(const std::string& name, const std::vector<int64_t>& shape, int32_t eb) {
    Numel(shape, where_);
    Shape2D s = Flatten(shape);
    return program_.AddBuffer({name, s.rows, s.cols, eb, Memory::kSbuf});
  }

  using Args = std::vector<std::string>;
  void Define(const std::vector<std::string>& tok);
  void Arity(const std::string& op, const Args& args, size_t lo, size_t hi);
  Value DefineBinary(const std::string& name, const std::string& op, const Args& args);
  Value DefineUnary(const std::string& name, const std::string& op, const Args& args);
  Value DefineReduce(const std::string& name, const std::string& op, const Args& args);
  Value DefineNorm(const std::string& name, const std::string& op, const Args& args);
  Value DefineMatmul(const std::string& name, const std::string& op, const Args& args);
  int Operand(const std::string& arg, const std::vector<int64_t>& full);

  std::string_view source_;
  int32_t elem_bytes_;
  Program program_;
  std::map<std::string, Value> values_;
  std::string where_;
  int outputs_ = 0;
};

// The buffer an elementwise operand reads, in the 2-D view of the result
// `full`: the value itself (same shape), a row vector shared by every row ([C]
// or [1, C]) or a per-row column.
int GraphParser::Operand(const std::string& arg, const std::vector<int64_t>& full) {
  const Value& v = Get(arg);
  const Shape2D f = Flatten(full), s = Flatten(v.shape);
  if (v.shape == full) return v.buffer;
  if (s.rows == 1 && s.cols == f.cols) return v.buffer;  // a row vector
  if (s.cols == 1 && s.rows == f.rows) return v.buffer;  // a per-row column
  Fail("operand '" + arg + "' " + Join(v.shape) + " does not broadcast to " + Join(full));
}

// `op`'s operand count must be in [lo, hi].
void GraphParser::Arity(const std::string& op, const Args& args, size_t lo, size_t hi) {
  if (args.size() < lo || args.size() > hi) {
    Fail("'" + op + "' takes " + std::to_string(lo) + (hi > lo ? " to " + std::to_string(hi) : "") +
         " operands, got " + std::to_string(args.size()));
  }
}

// add, mul, ...: the result has the shape of the larger value operand; numbers
// are scalar operands.
Value GraphParser::DefineBinary(const std::string& name, const std::string& op, const Args& args) {
  Arity(op, args, 2, 2);
  std::vector<int64_t> full;
  for (const auto& a : args) {
    if (IsNumber(a)) continue;
    const Value& v = Get(a);
    if (full.empty() || Numel(v.shape, where_) > Numel(full, where_)) full = v.shape;
  }
  if (full.empty()) Fail("'" + op + "' needs at least one value operand");
  std::vector<int> ins;
  for (const auto& a : args) {
    if (!IsNumber(a)) ins.push_back(Operand(a, full));
  }
  Value out;
  out.shape = full;
  out.buffer = NewBuffer(name, full, program_.buffers[size_t(ins[0])].elem_bytes);
  program_.AddOp(ElementwiseOp(AtenName(op), program_, ins, out.buffer));
  return out;
}

Value GraphParser::DefineUnary(const std::string& name, const std::string& op, const Args& args) {
  Arity(op, args, 1, 1);
  const Value& x = Get(args[0]);
  Value out;
  out.shape = x.shape;
  out.buffer = NewBuffer(name, x.shape, program_.buffers[size_t(x.buffer)].elem_bytes);
  program_.AddOp(ElementwiseOp(AtenName(op), program_, {x.buffer}, out.buffer));
  return out;
}

// sum, mean, amax over the last dim, in fp32.
Value GraphParser::DefineReduce(const std::string& name, const std::string& op, const Args& args) {
  Arity(op, args, 1, 1);
  const Value& x = Get(args[0]);
  Value out;
  out.shape = x.shape;
  out.shape.back() = 1;
  out.buffer = NewBuffer(name, out.shape, 4);
  Op r;
  r.name = "tensor_reduce";
  r.op_class = OpClass::kRowReduce;
  r.inputs = {x.buffer};
  r.output = out.buffer;
  program_.AddOp(std::move(r));
  return out;
}

// rmsnorm X [W], layernorm X [W [B]], softmax X: over the last dim.
Value GraphParser::DefineNorm(const std::string& name, const std::string& op, const Args& args) {
  Arity(op, args, 1, op == "rmsnorm" ? 2 : op == "layernorm" ? 3 : 1);
  const Value& x = Get(args[0]);
  std::vector<int> params;
  for (size_t i = 1; i < args.size(); ++i) {
    if (IsNumber(args[i])) Fail("the weight and bias of '" + op + "' are vectors");
    const int b = Operand(args[i], x.shape);
    if (program_.buffers[size_t(b)].rows != 1) {
      Fail("the weight and bias of '" + op + "' are vectors of the last dim");
    }
    params.push_back(b);
  }
  Value out;
  out.shape = x.shape;
  out.buffer = NewBuffer(name, x.shape, program_.buffers[size_t(x.buffer)].elem_bytes);
  if (op == "rmsnorm")
    AppendRmsNorm(&program_, x.buffer, params.empty() ? -1 : params[0], out.buffer);
  if (op == "softmax") AppendSoftmax(&program_, x.buffer, out.buffer);
  if (op == "layernorm") {
    AppendLayerNorm(&program_, x.buffer, params.size() > 0 ? params[0] : -1,
                    params.size() > 1 ? params[1] : -1, out.buffer);
  }
  return out;
}

// mm [M, K] x [K, N], bmm [B, M, K] x [B, K, N]; an fp8 product accumulates to
// fp32.
Value GraphParser::DefineMatmul(const std::string& name, const std::string& op, const Args& args) {
  Arity(op, args, 2, 2);
  const Value& a = Get(args[0]);
  const Value& b = Get(args[1]);
  const size_t rank = op == "mm" ? 2 : 3;
  if (a.shape.size() != rank || b.shape.size() != rank || a.shape.back() != b.shape[rank - 2] ||
      (rank == 3 && a.shape[0] != b.shape[0])) {
    Fail("'" + op + "' needs " + (rank == 2 ? "[M, K] and [K, N]" : "[B, M, K] and [B, K, N]") +
         ", got " + Join(a.shape) + " and " + Join(b.shape));
  }
  Value out;
  out.shape = a.shape;
  out.shape.back() = b.shape.back();
  const int32_t eb = program_.buffers[size_t(a.buffer)].elem_bytes;
  out.buffer = NewBuffer(name, out.shape, eb == 1 ? 4 : eb);
  Op mm;
  mm.name = "matmul";
  mm.op_class = OpClass::kMatmul;
  mm.engine = Engine::kTensor;
  mm.inputs = {a.buffer, b.buffer};
  mm.output = out.buffer;
  mm.batch = rank == 3 ? a.shape[0] : 1;
  program_.AddOp(std::move(mm));
  return out;
}

// NAME = OP ARGS...: the op's buffers and device ops, by the op's kind.
void GraphParser::Define(const std::vector<std::string>& tok) {
  const std::string& name = tok[0];
  const std::string& op = tok[2];
  const Args args(tok.begin() + 3, tok.end());
  NewName(name);
  Value out;
  if (BinaryOps().count(op)) {
    out = DefineBinary(name, op, args);
  } else if (UnaryOps().count(op)) {
    out = DefineUnary(name, op, args);
  } else if (op == "sum" || op == "mean" || op == "amax") {
    out = DefineReduce(name, op, args);
  } else if (op == "rmsnorm" || op == "layernorm" || op == "softmax") {
    out = DefineNorm(name, op, args);
  } else if (op == "mm" || op == "bmm") {
    out = DefineMatmul(name, op, args);
  } else {
    std::string known;
    for (const auto* set : {&BinaryOps(), &UnaryOps()}) {
      for (const auto& o : *set) known += " " + o;
    }
    Fail("unknown op '" + op + "' (known:" + known +
         " sum mean amax rmsnorm layernorm softmax mm bmm)");
  }
  values_[name] = out;
}

}  // namespace

std::vector<std::string> ModelOpNames() {
  return {"add", "mul", "silu", "exp", "rmsnorm", "softmax", "layernorm", "mm", "bmm"};
}

int32_t ElemBytesOf(std::string_view dtype) {
  if (dtype == "f32" || dtype == "fp32" || dtype == "float32") return 4;
  if (dtype == "bf16" || dtype == "bfloat16") return 2;
  if (dtype == "fp8") return 1;
  throw ModelError("unknown dtype '" + std::string(dtype) + "' (f32, bf16 or fp8)");
}

const char* DtypeName(int32_t elem_bytes) {
  return elem_bytes == 4 ? "f32" : elem_bytes == 2 ? "bf16" : "fp8";
}

Program ModelOpProgram(std::string_view op, const std::vector<int64_t>& shape, int32_t elem_bytes) {
  const std::string where = "opscope model " + std::string(op) + ": ";
  Numel(shape, where);
  if (shape.empty() || shape.size() > 4) throw ModelError(where + "--shape takes 1 to 4 dims");
  const bool matmul = op == "mm" || op == "bmm";
  if (elem_bytes == 1 && !matmul) {
    throw ModelError(where + "fp8 is a matmul input type (TensorE); use f32 or bf16");
  }
  const Shape2D s = View2D(shape);
  Program p;
  if (op == "add" || op == "mul") {
    p = EagerProgram("aten::" + std::string(op), {s, s}, s, elem_bytes);
  } else if (op == "silu" || op == "exp") {
    p = EagerProgram("aten::" + std::string(op), {s}, s, elem_bytes);
  } else if (op == "rmsnorm") {
    p = FusedRmsNormProgram(s.rows, s.cols, true, elem_bytes);
  } else if (op == "softmax") {
    p = SoftmaxProgram(s.rows, s.cols, elem_bytes);
  } else if (op == "layernorm") {
    p = LayerNormProgram(s.rows, s.cols, true, true, elem_bytes);
  } else if (op == "mm") {
    if (shape.size() != 3) throw ModelError(where + "--shape takes M,K,N");
    p = MatmulProgram("aten::mm", 1, shape[0], shape[1], shape[2], elem_bytes);
  } else if (op == "bmm") {
    if (shape.size() != 4) throw ModelError(where + "--shape takes B,M,K,N");
    p = MatmulProgram("aten::bmm", shape[0], shape[1], shape[2], shape[3], elem_bytes);
  } else {
    std::string known;
    for (const auto& n : ModelOpNames()) known += " " + n;
    throw ModelError("opscope model: unknown op '" + std::string(op) + "' (known:" + known + ")");
  }
  return p;
}

Program ParseModelGraph(std::string_view text, std::string_view source, int32_t elem_bytes) {
  GraphParser parser(source, elem_bytes);
  return parser.Parse(text);
}

Program ReadModelGraphFile(const std::string& path, int32_t elem_bytes) {
  // Read under a limit whatever the path names (/dev/zero, a huge file), refusing a named pipe.
  std::string text;
  const Status st = internal::ReadSmallFile(path, "graph file", kMaxGraphBytes, &text);
  if (!st.ok()) throw ModelError(st.message());
  return ParseModelGraph(text, path, elem_bytes);
}

namespace {

ModelEstimate Estimate(Program program, bool eager, const ModelConfig& config) {
  const Params& params = ParamsOf(config);
  program.eager = eager;
  ModelEstimate e;
  e.cost = EstimateProgram(program, params);
  e.ops = static_cast<int64_t>(program.ops.size());
  e.io_tensors = program.IoTensors();
  for (int i = 0; i < kNumEngines; ++i) {
    const bool dma = Engine(i) == Engine::kDma;
    e.lanes[size_t(i)] = params.logical_core_size * (dma ? params.dma_queues : 1);
  }
  return e;
}

}  // namespace

ModelEstimate EstimateModelOp(std::string_view op, const std::vector<int64_t>& shape,
                              std::string_view dtype, const ModelConfig& config, bool eager) {
  const int32_t elem_bytes = ElemBytesOf(dtype);
  ModelEstimate e = Estimate(ModelOpProgram(op, shape, elem_bytes), eager, config);
  e.dtype = DtypeName(elem_bytes);
  return e;
}

ModelEstimate EstimateModelGraph(const std::string& path, std::string_view dtype,
                                 const ModelConfig& config, bool eager) {
  const int32_t elem_bytes = ElemBytesOf(dtype);
  ModelEstimate e = Estimate(ReadModelGraphFile(path, elem_bytes), eager, config);
  e.dtype = DtypeName(elem_bytes);
  return e;
}

}  // namespace opscope::neuron
