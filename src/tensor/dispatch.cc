// The dispatcher: op table, host-op recording, interception, kernel launch and unrecorded
// copies between devices.
#include "tensor/dispatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "opscope/activity.h"
#include "opscope/record.h"
#include "tensor/ops_impl.h"

namespace opscope {
namespace {

constexpr size_t kOpCount = static_cast<size_t>(OpId::kNumOps);

// Interned ATen names, indexed by OpId.
const std::array<uint32_t, kOpCount>& NameIds() {
  static const std::array<uint32_t, kOpCount> ids = [] {
    std::array<uint32_t, kOpCount> out{};
    for (size_t i = 0; i < kOpCount; ++i) out[i] = InternName(OpName(static_cast<OpId>(i)));
    return out;
  }();
  return ids;
}

// Per-thread interception state. `active` entries of `stack` (from the bottom) may intercept;
// an op is top-level when it is entered at dispatch depth `top_depth`.
struct InterceptState {
  std::vector<DispatchInterceptor*> stack;
  size_t active = 0;
  int depth = 0;
  int top_depth = 0;
};
thread_local InterceptState t_intercept;

class DepthGuard {
 public:
  DepthGuard() : entry_(t_intercept.depth++) {}
  ~DepthGuard() { t_intercept.depth = entry_; }
  int entry() const { return entry_; }

 private:
  int entry_;
};

// Suspends the interceptor being called and makes ops it calls top-level for outer ones.
class SuspendGuard {
 public:
  SuspendGuard() : active_(t_intercept.active), top_(t_intercept.top_depth) {
    t_intercept.active -= 1;
    t_intercept.top_depth = t_intercept.depth;
  }
  ~SuspendGuard() {
    t_intercept.active = active_;
    t_intercept.top_depth = top_;
  }

 private:
  size_t active_;
  int top_;
};

}  // namespace

std::vector<Tensor> Dispatch(OpId id, std::span<const Tensor> inputs, const OpAttrs& attrs) {
  const size_t index = static_cast<size_t>(id);
  const OpDef& def = GetOpDef(id);
  constexpr size_t kMaxRecorded = 16;
  std::array<InputShape, kMaxRecorded> shapes;
  size_t num_shapes = 0;
  if (RecordShapesEnabled()) {
    // One entry per ATen argument: tensors show their sizes, everything else (and an absent
    // optional, or a Scalar standing in for a tensor operand) shows as [].
    size_t next = 0;
    for (const char* a = def.info.schema; *a != '\0' && num_shapes < kMaxRecorded; ++a) {
      InputShape& s = shapes[num_shapes++];
      s.is_tensor = false;
      if (*a != 'T' || next >= inputs.size()) continue;
      const Tensor& t = inputs[next++];
      if (t.defined()) {
        s.is_tensor = true;
        s.dims = t.sizes().data();
        s.ndim = static_cast<uint32_t>(t.dim());
      }
    }
  }
  RecordScope scope(NameIds()[index], std::span<const InputShape>(shapes.data(), num_shapes));
  DepthGuard depth;
  InterceptState& st = t_intercept;
  if (def.info.interceptable && st.active > 0 && depth.entry() == st.top_depth) {
    DispatchInterceptor* interceptor = st.stack[st.active - 1];
    std::optional<std::vector<Tensor>> replaced;
    {
      SuspendGuard suspend;
      replaced = interceptor->Intercept(OpRequest{id, inputs, attrs});
    }
    if (replaced) {
      if (replaced->empty()) {
        throw TensorError(
            fmt::format("the dispatch interceptor returned no outputs for {}", def.info.name));
      }
      return std::move(*replaced);
    }
  }
  return def.impl(inputs, attrs);
}

InterceptGuard::InterceptGuard(DispatchInterceptor* interceptor) {
  if (interceptor == nullptr) throw TensorError("InterceptGuard: null interceptor");
  t_intercept.stack.push_back(interceptor);
  t_intercept.active = t_intercept.stack.size();
}

InterceptGuard::~InterceptGuard() {
  t_intercept.stack.pop_back();
  t_intercept.active = std::min(t_intercept.active, t_intercept.stack.size());
}

std::vector<Tensor> RunOp(OpId op, std::span<const Tensor> inputs, const OpAttrs& attrs) {
  if (static_cast<size_t>(op) >= kOpCount) {
    throw TensorError(fmt::format("RunOp: op id {} is not an op", static_cast<int>(op)));
  }
  return Dispatch(op, inputs, attrs);
}

std::vector<Tensor> RunOp(std::string_view name, std::span<const Tensor> inputs,
                          const OpAttrs& attrs) {
  if (std::optional<OpId> op = FindOp(name)) return Dispatch(*op, inputs, attrs);
  throw TensorError(
      fmt::format("RunOp: unknown op '{}' (SupportedOps() lists the known ones)", name));
}

std::vector<std::string_view> SupportedOps() {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < kOpCount; ++i) names.emplace_back(OpName(static_cast<OpId>(i)));
  std::sort(names.begin(), names.end());
  return names;
}

void LaunchKernel(OpId op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                  const OpAttrs& attrs, uint32_t reduce_mask) {
  if (GetOpDef(op).info.kernel == KernelKind::kNone) {
    throw TensorError(fmt::format("LaunchKernel: {} has no kernel", OpName(op)));
  }
  const Device device = outputs.empty() ? inputs[0].device() : outputs[0].device();
  if (device.type == DeviceType::kMeta) return;
  constexpr size_t kMaxOperands = 8;
  if (inputs.size() > kMaxOperands || outputs.size() > kMaxOperands) {
    throw TensorError("LaunchKernel: too many operands");
  }
  std::array<TensorRef, kMaxOperands> in_refs;
  std::array<TensorRef, kMaxOperands> out_refs;
  for (size_t i = 0; i < inputs.size(); ++i) in_refs[i] = MakeTensorRef(inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) out_refs[i] = MakeTensorRef(outputs[i]);
  OpCall call;
  call.op = op;
  call.inputs = std::span<const TensorRef>(in_refs.data(), inputs.size());
  call.outputs = std::span<const TensorRef>(out_refs.data(), outputs.size());
  call.attrs = &attrs;
  call.reduce_mask = reduce_mask;
  call.correlation_id = CurrentOpCorrelation();
  GetBackend(device.type).Execute(call);
}

Tensor AllocateTensor(std::span<const int64_t> shape, Device device, DType dtype) {
  for (int64_t s : shape) {
    if (s < 0) {
      throw TensorError(fmt::format("Trying to create tensor with negative dimension {}: {}", s,
                                    ShapeToString(shape)));
    }
  }
  const int64_t bytes = NumelBytes(ShapeNumel(shape), ElementSize(dtype), shape);
  auto storage = std::make_shared<Storage>(device, static_cast<size_t>(bytes));
  return Tensor(std::move(storage), Shape(shape.begin(), shape.end()), ContiguousStrides(shape), 0,
                dtype);
}

Device CommonDevice(std::span<const Tensor> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (first == nullptr) {
      first = &t;
    } else if (!(t.device() == first->device())) {
      throw TensorError(fmt::format(
          "Expected all tensors to be on the same device, but found at least two devices, {} and "
          "{}!",
          first->device().str(), t.device().str()));
    }
  }
  if (first == nullptr) throw TensorError("expected at least one defined tensor");
  return first->device();
}

void CheckFloat(const char* op, const Tensor& t) {
  if (!t.defined()) throw TensorError(fmt::format("{}: expected a defined tensor", op));
  if (t.dtype() != DType::kFloat32) {
    throw TensorError(fmt::format("{}: expected scalar type Float but found {}", op,
                                  t.dtype() == DType::kBFloat16 ? "BFloat16" : "unknown"));
  }
}

Tensor AsStrided(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  return Tensor(t.storage(), std::move(sizes), std::move(strides), offset, t.dtype());
}

Tensor ExpandView(const Tensor& t, std::span<const int64_t> shape) {
  if (std::equal(t.sizes().begin(), t.sizes().end(), shape.begin(), shape.end())) return t;
  return AsStrided(t, Shape(shape.begin(), shape.end()),
                   ExpandStrides(t.sizes(), t.strides(), shape), t.storage_offset());
}

namespace {

const void* HostElementPointer(const Tensor& t) {
  return static_cast<const char*>(t.storage()->data()) +
         t.storage_offset() * static_cast<int64_t>(ElementSize(t.dtype()));
}

// `src` (same shape as dst) as a contiguous tensor of `dtype` on its own device.
Tensor ContiguousAs(const Tensor& src, DType dtype) {
  if (src.is_contiguous() && src.dtype() == dtype) return src;
  Tensor out = AllocateTensor(src.sizes(), src.device(), dtype);
  const Tensor in[] = {src};
  const Tensor outs[] = {out};
  LaunchKernel(OpId::kCopy, in, outs, OpAttrs{});
  return out;
}

}  // namespace

void CopyInto(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const Tensor s = ExpandView(src, dst.sizes());
  const Device dd = dst.device();
  const Device sd = src.device();
  if (dd.type == DeviceType::kMeta) return;
  if (sd.type == DeviceType::kMeta) throw TensorError("Cannot copy out of meta tensor; no data!");
  const Tensor dst_arr[] = {dst};
  if (dd == sd) {
    const Tensor in[] = {s};
    LaunchKernel(OpId::kCopy, in, dst_arr, OpAttrs{});
    return;
  }
  const uint64_t correlation = CurrentOpCorrelation();
  if (sd.type == DeviceType::kCPU) {
    const Tensor host = ContiguousAs(s, dst.dtype());
    const Tensor target = dst.is_contiguous() ? dst : AllocateTensor(dst.sizes(), dd, dst.dtype());
    GetBackend(dd.type).CopyFromHost(MakeTensorRef(target), HostElementPointer(host), correlation);
    if (!(target.storage() == dst.storage())) {
      const Tensor in[] = {target};
      LaunchKernel(OpId::kCopy, in, dst_arr, OpAttrs{});
    }
  } else if (dd.type == DeviceType::kCPU) {
    const Tensor dev = ContiguousAs(s, dst.dtype());
    const Tensor target =
        dst.is_contiguous() ? dst : AllocateTensor(dst.sizes(), Device(), dst.dtype());
    GetBackend(sd.type).CopyToHost(const_cast<void*>(HostElementPointer(target)),
                                   MakeTensorRef(dev), correlation);
    if (!(target.storage() == dst.storage())) {
      const Tensor in[] = {target};
      LaunchKernel(OpId::kCopy, in, dst_arr, OpAttrs{});
    }
  } else {  // device to device, through the host
    const Tensor host = AllocateTensor(dst.sizes(), Device(), dst.dtype());
    CopyInto(host, s);
    CopyInto(dst, host);
  }
}

}  // namespace opscope
