// Capture (capture.h): one run on meta tensors under a DispatchInterceptor, each op call a graph
// node.
#include "compile/capture.h"

#include <map>
#include <optional>
#include <tuple>

#include "compile/op_table.h"

namespace opscope::compiler {
namespace {

using TensorKey = std::tuple<const Storage*, int64_t, std::vector<int64_t>, std::vector<int64_t>>;

TensorKey KeyOf(const Tensor& t) {
  return {t.storage().get(), t.storage_offset(), t.sizes(), t.strides()};
}

Tensor MetaTwin(const Tensor& t) {
  // Same sizes and strides, no data: kernels are skipped on meta.
  int64_t extent = 1;
  for (size_t d = 0; d < t.sizes().size(); ++d)
    if (t.sizes()[d] > 0) extent += (t.sizes()[d] - 1) * t.strides()[d];
  auto storage =
      std::make_shared<Storage>(Device(DeviceType::kMeta), extent * ElementSize(t.dtype()));
  return Tensor(storage, t.sizes(), t.strides(), 0, t.dtype());
}

std::string AttrText(const ExternCall& c) {
  const OpAttrs& a = c.attrs;
  std::string s = "attrs{";
  auto list = [](const std::vector<int64_t>& v) { return ShapeString(v); };
  s += "scalar=" + std::to_string(a.scalar) + (a.has_scalar ? "!" : "") +
       " alpha=" + std::to_string(a.alpha) + " eps=" + std::to_string(a.eps) +
       " dims=" + list(a.dims) + " shape=" + list(a.shape) + " strides=" + list(a.strides) +
       " dim=" + std::to_string(a.dim) + "," + std::to_string(a.dim1) +
       " range=" + std::to_string(a.start) + ":" + std::to_string(a.end) + ":" +
       std::to_string(a.step) + " arange=" + std::to_string(a.range_start) + ":" +
       std::to_string(a.range_end) + ":" + std::to_string(a.range_step) +
       " seed=" + std::to_string(a.seed) + " keepdim=" + (a.keepdim ? "1" : "0") +
       " tanh=" + (a.gelu_tanh ? "1" : "0") + " device=" + a.device.str() +
       " dtype=" + std::string(DTypeName(a.dtype)) + " defined=";
  for (bool d : c.defined) s += d ? "1" : "0";
  return s + "}";
}

// The decompositions capture knows, one per kDecomposed row of the registry (the aten composite
// and the kernel op it dispatches to decompose alike).
enum class Decomposition { kNone, kSoftmax, kRmsNorm, kLayerNorm };

Decomposition DecompositionOf(OpId op) {
  switch (op) {
    case OpId::kSoftmax:
    case OpId::kSoftmaxKernel:
      return Decomposition::kSoftmax;
    case OpId::kRmsNorm:
    case OpId::kFusedRmsNorm:
      return Decomposition::kRmsNorm;
    case OpId::kLayerNorm:
    case OpId::kNativeLayerNorm:
      return Decomposition::kLayerNorm;
    default:  // the registry's other rows are fused, extern, or not decomposed
      return Decomposition::kNone;
  }
}

class Recorder : public DispatchInterceptor {
 public:
  explicit Recorder(CapturedGraph* out) : out_(out) {}

  void AddInput(const Tensor& real, const Tensor& meta) {
    int node = out_->graph.AddInput(TypeOf(real));
    ids_[KeyOf(meta)] = node;
  }

  std::optional<int> Find(const Tensor& t) const {
    auto it = ids_.find(KeyOf(t));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<std::vector<Tensor>> Intercept(const OpRequest& req) override {
    ++out_->captured_ops;
    const std::string name(req.name());
    if (!name.empty() && name.back() == '_') {
      throw CaptureError("compile() cannot capture the in-place op " + name +
                         " (it would mutate a captured tensor)");
    }
    // Operands as graph values (lifting real tensors), and meta twins to run the op on.
    std::vector<Tensor> meta_inputs;
    std::vector<Operand> operands;
    std::vector<bool> defined;
    for (const Tensor& t : req.inputs) {
      defined.push_back(t.defined());
      if (!t.defined()) {
        meta_inputs.push_back(t);
        continue;
      }
      std::optional<int> id = Find(t);
      if (!id) {
        if (t.device().type == DeviceType::kMeta) {
          throw CaptureError("op " + name + " received a tensor compile() did not see created");
        }
        Tensor twin = MetaTwin(t);
        out_->lifted.push_back(t);
        AddInput(t, twin);
        id = Find(twin);
        meta_inputs.push_back(twin);
      } else {
        meta_inputs.push_back(MetaTwinOf(t));
      }
      operands.push_back(Operand::Value(*id));
    }
    OpAttrs meta_attrs = req.attrs;
    bool factory = operands.empty();
    if (factory) meta_attrs.device = Device(DeviceType::kMeta);
    std::vector<Tensor> outs = RunOp(req.op, meta_inputs, meta_attrs);
    int node = Lower(req.op, operands, req.attrs, outs, defined, factory);
    if (!outs.empty()) ids_[KeyOf(outs[0])] = node;
    return outs;
  }

 private:
  // Inputs we already know are meta tensors; they are their own twins.
  static const Tensor& MetaTwinOf(const Tensor& t) { return t; }

  std::string DeviceOf(const std::vector<Operand>& operands, const OpAttrs& attrs,
                       bool factory) const {
    if (factory) return attrs.device.str();
    return out_->graph.node(operands[0].value).type.device;
  }

  int Extern(OpId op, const std::vector<Operand>& operands, const OpAttrs& attrs,
             const std::vector<Tensor>& outs, const std::vector<bool>& defined, bool factory) {
    if (outs.size() != 1) {
      throw CaptureError(std::string("compile() captures ops with one output; ") + OpName(op) +
                         " returned " + std::to_string(outs.size()));
    }
    ExternCall call{attrs, defined};
    Attributes a;
    a.text = AttrText(call);
    TensorType type = TypeOf(outs[0]);
    type.device = DeviceOf(operands, attrs, factory);
    int node = out_->graph.AddOpWithType(op, operands, a, type);
    out_->graph.mutable_nodes()[node].extern_id = static_cast<int>(out_->externs.size());
    out_->externs.push_back(std::move(call));
    return node;
  }

  int Op(OpId op, std::vector<Operand> operands, Attributes a = {}) {
    return out_->graph.AddOp(op, std::move(operands), std::move(a));
  }

  // rms_norm / layer_norm reduction dims: the trailing `k` dims.
  static std::vector<int64_t> Trailing(size_t k) {
    std::vector<int64_t> d;
    for (size_t i = k; i > 0; --i) d.push_back(-static_cast<int64_t>(i));
    return d;
  }

  // The graph node for one captured call: the op itself when it fuses, its decomposition, or an
  // extern node.
  int Lower(OpId op, const std::vector<Operand>& in, const OpAttrs& attrs,
            const std::vector<Tensor>& outs, const std::vector<bool>& defined, bool factory) {
    auto extern_op = [&] { return Extern(op, in, attrs, outs, defined, factory); };
    bool all_f32 = true;
    for (const Operand& o : in)
      if (out_->graph.node(o.value).type.dtype != "f32") all_f32 = false;
    if (!all_f32 || outs.size() != 1 || outs[0].dtype() != DType::kFloat32) return extern_op();
    bool all_defined = true;
    for (bool d : defined) all_defined = all_defined && d;
    int node = -1;
    switch (GetOpInfo(op).fusion) {
      case FusionClass::kPointwise: {
        if (!all_defined || (op == OpId::kGelu && attrs.gelu_tanh)) return extern_op();
        std::vector<Operand> ops = in;
        if (attrs.has_scalar) ops.push_back(Operand::Scalar(attrs.scalar));
        if (static_cast<int>(ops.size()) != GetOpInfo(op).arity) return extern_op();
        Attributes a;
        if (op == OpId::kAdd || op == OpId::kSub) a.alpha = attrs.alpha;
        node = Op(op, ops, a);
        break;
      }
      case FusionClass::kReduction:
        if (in.size() != 1) return extern_op();
        node = Op(op, in, {.dims = attrs.dims, .keepdim = attrs.keepdim});
        break;
      case FusionClass::kDecomposed:
        node = Decompose(op, in, attrs, defined);
        if (node < 0) return extern_op();
        break;
      case FusionClass::kExtern:
        return extern_op();
    }
    if (out_->graph.node(node).type.sizes != outs[0].sizes()) {
      throw CaptureError("compile() inferred shape " +
                         ShapeString(out_->graph.node(node).type.sizes) + " for " + OpName(op) +
                         " but the op produced " + ShapeString(outs[0].sizes()));
    }
    return node;
  }

  // The pointwise ops and reductions a kDecomposed op is made of; returns the node of its result,
  // or -1 when this call cannot be decomposed (it then runs as an extern op). Lower() calls it
  // for the registry's kDecomposed rows only; HasDecomposition() names the ones handled here.
  int Decompose(OpId op, const std::vector<Operand>& in, const OpAttrs& attrs,
                const std::vector<bool>& defined) {
    if (in.empty()) return -1;
    switch (DecompositionOf(op)) {
      case Decomposition::kSoftmax:
        return in.size() == 1 ? Softmax(in[0], attrs) : -1;
      case Decomposition::kRmsNorm:
        return RmsNorm(in, attrs, defined);
      case Decomposition::kLayerNorm:
        return LayerNorm(in, attrs, defined);
      case Decomposition::kNone:
        break;
    }
    return -1;
  }

  // exp(x - amax(x)) / sum(exp(x - amax(x))) over attrs.dim.
  int Softmax(Operand x, const OpAttrs& attrs) {
    Attributes red{.dims = {attrs.dim}, .keepdim = true};
    int m = Op(OpId::kAmax, {x}, red);
    int e = Op(OpId::kExp, {Operand::Value(Op(OpId::kSub, {x, Operand::Value(m)}))});
    int s = Op(OpId::kSum, {Operand::Value(e)}, red);
    return Op(OpId::kDiv, {Operand::Value(e), Operand::Value(s)});
  }

  // x * rsqrt(mean(x * x) + eps) [* weight] over the normalized (trailing) dims.
  int RmsNorm(const std::vector<Operand>& in, const OpAttrs& attrs,
              const std::vector<bool>& defined) {
    Attributes red{.dims = Trailing(attrs.shape.size()), .keepdim = true};
    Operand x = in[0];
    int sq = Op(OpId::kMul, {x, x});
    int ms = Op(OpId::kMean, {Operand::Value(sq)}, red);
    int r = Op(OpId::kRsqrt,
               {Operand::Value(Op(OpId::kAdd, {Operand::Value(ms), Operand::Scalar(attrs.eps)}))});
    int node = Op(OpId::kMul, {x, Operand::Value(r)});
    if (defined.size() > 1 && defined[1]) node = Op(OpId::kMul, {Operand::Value(node), in[1]});
    return node;
  }

  // (x - mean) * rsqrt(var + eps) [* weight] [+ bias] over the normalized (trailing) dims.
  int LayerNorm(const std::vector<Operand>& in, const OpAttrs& attrs,
                const std::vector<bool>& defined) {
    Attributes red{.dims = Trailing(attrs.shape.size()), .keepdim = true};
    Operand x = in[0];
    int mu = Op(OpId::kMean, {x}, red);
    int xc = Op(OpId::kSub, {x, Operand::Value(mu)});
    int var = Op(OpId::kMean,
                 {Operand::Value(Op(OpId::kMul, {Operand::Value(xc), Operand::Value(xc)}))}, red);
    int r = Op(OpId::kRsqrt,
               {Operand::Value(Op(OpId::kAdd, {Operand::Value(var), Operand::Scalar(attrs.eps)}))});
    int node = Op(OpId::kMul, {Operand::Value(xc), Operand::Value(r)});
    size_t next = 1;
    if (defined.size() > 1 && defined[1]) node = Op(OpId::kMul, {Operand::Value(node), in[next++]});
    if (defined.size() > 2 && defined[2]) node = Op(OpId::kAdd, {Operand::Value(node), in[next++]});
    return node;
  }

  CapturedGraph* out_;
  std::map<TensorKey, int> ids_;
};

}  // namespace

TensorType TypeOf(const Tensor& t) {
  TensorType type;
  type.dtype = t.dtype() == DType::kFloat32 ? "f32" : "bf16";
  type.sizes = t.sizes();
  type.strides = t.strides();
  type.device = t.device().str();
  return type;
}

bool HasDecomposition(OpId op) { return DecompositionOf(op) != Decomposition::kNone; }

CapturedGraph CaptureGraph(const CompileFn& fn, std::span<const Tensor> inputs) {
  CapturedGraph out;
  Recorder recorder(&out);
  std::vector<Tensor> metas;
  for (const Tensor& t : inputs) {
    if (!t.defined())
      throw CaptureError("compile(): input " + std::to_string(metas.size()) + " is undefined");
    metas.push_back(MetaTwin(t));
    recorder.AddInput(t, metas.back());
  }
  std::vector<Tensor> results;
  try {
    InterceptGuard guard(&recorder);
    results = fn(metas);
  } catch (const CaptureError&) {
    throw;
  } catch (const std::exception& e) {
    throw CaptureError(std::string("compile() could not capture the function: ") + e.what());
  }
  std::vector<int> outputs;
  for (size_t i = 0; i < results.size(); ++i) {
    std::optional<int> id = recorder.Find(results[i]);
    if (!id) {
      throw CaptureError("compile(): output " + std::to_string(i) +
                         " was not computed from the inputs by ops compile() saw");
    }
    outputs.push_back(*id);
  }
  out.graph.SetOutputs(outputs);
  return out;
}

}  // namespace opscope::compiler
