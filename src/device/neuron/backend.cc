// The Neuron device as the tensor runtime's PrivateUse1 backend ("neuron").
//
// Device memory is host memory (the simulated HBM) handed out by a capacity-checked allocator per
// NeuronCore. Each kernel call becomes a Program on the cost model (aten_programs.h) whose
// compute runs the CPU kernel on the call's tensors -- on the core's worker, in order, so the
// call's tensors are copied (TensorRef is POD) and frees are deferred behind queued work. A
// compiled graph (BuildProgram) becomes one Program (program_lowering.h) whose compute is the
// compiler's kernel.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device/neuron/aten_programs.h"
#include "device/neuron/device.h"
#include "device/neuron/instruction_graph.h"
#include "device/neuron/program_lowering.h"
#include "opscope/activity.h"
#include "opscope/device.h"

namespace opscope {
namespace neuron {
namespace {

// The columns of `t` when viewed as [rows, cols] against an output of `out_rows` x `out_cols`:
// broadcast (stride 0) dimensions are not read, so they do not count.
Shape2D ReadView(const TensorRef& t) {
  if (!t.defined() || t.ndim == 0) return {1, 1};
  const int last = t.ndim - 1;
  Shape2D v;
  v.cols = (t.strides[last] == 0 && t.sizes[last] > 1) ? 1 : std::max<int64_t>(1, t.sizes[last]);
  v.rows = 1;
  for (int d = 0; d < last; ++d) {
    if (t.strides[d] != 0) v.rows *= std::max<int64_t>(1, t.sizes[d]);
  }
  return v;
}

Shape2D FullView(const TensorRef& t) {
  if (t.ndim <= 0) return {1, 1};
  Shape2D v{1, std::max<int64_t>(1, t.sizes[t.ndim - 1])};
  for (int d = 0; d + 1 < t.ndim; ++d) v.rows *= std::max<int64_t>(1, t.sizes[d]);
  return v;
}

int64_t Numel(const TensorRef& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}

// An OpCall that owns what it points to, for running later on a worker thread.
struct OwnedCall {
  OpId op;
  std::vector<TensorRef> inputs, outputs;
  OpAttrs attrs;
  uint32_t reduce_mask;
  uint64_t correlation;

  explicit OwnedCall(const OpCall& c)
      : op(c.op),
        inputs(c.inputs.begin(), c.inputs.end()),
        outputs(c.outputs.begin(), c.outputs.end()),
        attrs(*c.attrs),
        reduce_mask(c.reduce_mask),
        correlation(c.correlation_id) {
    // The CPU kernels compute on the same memory: host memory is the simulated HBM.
    for (auto& t : inputs) t.device = Device(DeviceType::kCPU, 0);
    for (auto& t : outputs) t.device = Device(DeviceType::kCPU, 0);
  }
  OpCall View() const {
    OpCall c;
    c.op = op;
    c.inputs = inputs;
    c.outputs = outputs;
    c.attrs = &attrs;
    c.reduce_mask = reduce_mask;
    c.correlation_id = correlation;
    return c;
  }
};

// The cost-model program of one kernel call.
Program ProgramFor(const OpCall& call) {
  const TensorRef& out = call.outputs[0];
  const char* name = OpName(call.op);
  std::vector<Shape2D> ins;
  switch (GetOpInfo(call.op).kernel) {
    case KernelKind::kReduction: {
      const TensorRef& in = call.inputs[0];
      const int64_t n = Numel(in), m = std::max<int64_t>(1, Numel(out));
      const bool last_only = in.ndim > 0 && call.reduce_mask == (1u << (in.ndim - 1));
      Shape2D view = last_only ? FullView(in) : Shape2D{m, std::max<int64_t>(1, n / m)};
      return EagerProgram(name, {view}, {view.rows, 1});
    }
    case KernelKind::kMatmul: {
      const TensorRef& a = call.inputs[0];
      const TensorRef& b = call.inputs[1];
      const int64_t batch = call.op == OpId::kBmm ? std::max<int64_t>(1, a.sizes[0]) : 1;
      const int64_t k = a.sizes[a.ndim - 1], n = b.sizes[b.ndim - 1];
      const int64_t m = Numel(a) / std::max<int64_t>(1, k) / batch;
      return MatmulProgram(name, batch, std::max<int64_t>(1, m), std::max<int64_t>(1, k),
                           std::max<int64_t>(1, n));
    }
    case KernelKind::kSoftmax: {
      const TensorRef& in = call.inputs[0];
      const int64_t c = in.ndim > 0 ? std::max<int64_t>(1, in.sizes[call.attrs->dim]) : 1;
      const Shape2D view{std::max<int64_t>(1, Numel(in) / c), c};
      return EagerProgram(name, {view}, view);
    }
    case KernelKind::kNorm: {
      int64_t n = 1;
      for (int64_t s : call.attrs->shape) n *= s;
      n = std::max<int64_t>(1, n);
      const Shape2D view{std::max<int64_t>(1, Numel(call.inputs[0]) / n), n};
      ins.push_back(view);
      for (size_t i = 1; i < call.inputs.size(); ++i) {
        if (call.inputs[i].defined()) ins.push_back({1, n});
      }
      if (call.op == OpId::kFusedRmsNorm) return FusedRmsNormProgram(view.rows, n, ins.size() > 1);
      return EagerProgram(name, ins, view);
    }
    case KernelKind::kBinary:
    case KernelKind::kUnary:
    case KernelKind::kCopy:
    case KernelKind::kFill:
    case KernelKind::kNone:
      break;
  }
  // Elementwise, copies and fills: one pass over the output.
  for (const auto& t : call.inputs) {
    if (t.defined()) ins.push_back(ReadView(t));
  }
  return EagerProgram(name, ins, FullView(out));
}

class NeuronBackend final : public DeviceBackend {
 public:
  DeviceType type() const override { return DeviceType::kPrivateUse1; }
  std::string_view name() const override { return "neuron"; }
  int device_count() const override { return DefaultDevice().num_cores(); }

  void* Allocate(int device, size_t nbytes) override {
    return AllocatorFor(device).Allocate(nbytes);
  }
  void Free(int device, void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
    CapacityAllocator* alloc = &AllocatorFor(device);
    // Freed now, on the host thread (and reported there); queued work may still read the block,
    // so it is released behind that work.
    alloc->Retire(ptr, nbytes);
    DefaultDevice().Defer(device, [alloc, ptr, nbytes] { alloc->Release(ptr, nbytes); });
  }
  MemoryStats memory_stats(int device) const override {
    return const_cast<NeuronBackend*>(this)->AllocatorFor(device).stats();
  }

  void CopyFromHost(const TensorRef& dst, const void* src, uint64_t correlation_id) override {
    const int64_t t0 = NowNs();
    const size_t n = size_t(Numel(dst)) * ElementSize(dst.dtype);
    // Queued kernels may still read `dst`: stage the bytes now and write them in stream order.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + n);
    void* to = ElementPtr(dst);
    DefaultDevice().Defer(dst.device.index,
                          [staged, to] { std::memcpy(to, staged->data(), staged->size()); });
    ReportRuntime("nrt_tensor_write", dst.device.index, t0, correlation_id);
  }
  void CopyToHost(void* dst, const TensorRef& src, uint64_t correlation_id) override {
    const int64_t t0 = NowNs();
    SynchronizeDevice();  // the work that writes `src` must be done
    std::memcpy(dst, ElementPtr(src), size_t(Numel(src)) * ElementSize(src.dtype));
    ReportRuntime("nrt_tensor_read", src.device.index, t0, correlation_id);
  }

  void Execute(const OpCall& call) override {
    Program program = ProgramFor(call);
    program.eager = true;  // the framework's eager path: binding and dispatch per execution
    auto owned = std::make_shared<OwnedCall>(call);
    DeviceBackend* cpu = &GetBackend(DeviceType::kCPU);
    program.compute = [owned, cpu] { cpu->Execute(owned->View()); };
    DefaultDevice().Execute(call.outputs[0].device.index, std::move(program), call.correlation_id);
  }
  void Synchronize(int /*device*/) override { SynchronizeDevice(); }

  bool SupportsPrograms() const override { return true; }
  std::unique_ptr<DeviceProgram> BuildProgram(const ProgramGraph& graph, std::string_view name,
                                              ProgramKernel kernel) override {
    auto p = std::make_unique<NeuronDeviceProgram>();
    p->program = LowerProgramGraph(graph, std::string(name));
    p->kernel = std::move(kernel);
    return p;
  }
  void ExecuteProgram(const DeviceProgram& program, std::span<const TensorRef> inputs,
                      std::span<const TensorRef> outputs, uint64_t correlation_id) override {
    const auto* p = dynamic_cast<const NeuronDeviceProgram*>(&program);
    if (p == nullptr) {
      throw TensorError("neuron: ExecuteProgram needs an opscope::neuron::NeuronDeviceProgram");
    }
    if (outputs.empty()) throw TensorError("neuron: ExecuteProgram needs at least one output");
    Program copy = p->program;
    copy.eager = true;
    auto ins = std::make_shared<std::vector<TensorRef>>(inputs.begin(), inputs.end());
    auto outs = std::make_shared<std::vector<TensorRef>>(outputs.begin(), outputs.end());
    auto kernel = p->kernel;
    if (kernel) copy.compute = [kernel, ins, outs] { kernel(*ins, *outs); };
    DefaultDevice().Execute(outputs[0].device.index, std::move(copy), correlation_id);
  }

 private:
  // Device failures surface here, in the tensor API's error type.
  static void SynchronizeDevice() {
    try {
      DefaultDevice().Synchronize();
    } catch (const TensorError&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw TensorError(e.what());
    }
  }
  static void* ElementPtr(const TensorRef& t) {
    return static_cast<char*>(t.data) + t.offset * int64_t(ElementSize(t.dtype));
  }
  static void ReportRuntime(const char* name, int device, int64_t t0, uint64_t correlation) {
    if (!DeviceActivityEnabled()) return;
    DeviceActivity a;
    a.kind = ActivityKind::kRuntime;
    a.clock = ActivityClock::kHost;
    a.name = name;  // string literal
    a.device = device;
    a.start = t0;
    a.end = std::max(NowNs(), t0 + 1);
    a.external_id = correlation;
    a.host_tid = CurrentThreadId();
    ReportDeviceActivity(a);
  }
  CapacityAllocator& AllocatorFor(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    if (device < 0 || device >= DefaultDevice().num_cores()) {
      throw TensorError("neuron:" + std::to_string(device) + " does not exist: the model has " +
                        std::to_string(DefaultDevice().num_cores()) + " NeuronCores");
    }
    if (size_t(device) >= allocators_.size()) allocators_.resize(device + 1);
    if (!allocators_[device]) {
      const double bytes = DefaultDevice().params().hbm_gib * 1024.0 * 1024.0 * 1024.0;
      allocators_[device] = std::make_unique<CapacityAllocator>(
          Device(DeviceType::kPrivateUse1, device), size_t(bytes));
    }
    return *allocators_[device];
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<CapacityAllocator>> allocators_;
};

}  // namespace
}  // namespace neuron

void RegisterNeuronBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterCpuBackend();  // the Neuron model computes its results with the CPU kernels
    if (FindBackend(DeviceType::kPrivateUse1) == nullptr) {
      RegisterBackend(std::make_unique<neuron::NeuronBackend>());
    }
  });
}

}  // namespace opscope
