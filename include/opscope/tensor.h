// Tensors and the ops on them: opscope's eager runtime (the ATen of opscope).
//
//   opscope::RegisterCpuBackend();                      // once per program (device.h)
//   opscope::Tensor x = opscope::randn({1024, 4096}, /*seed=*/0);  // f32 on cpu
//   opscope::Tensor w = opscope::ones({4096});
//   opscope::Tensor y = opscope::rms_norm(x, {4096}, w, 1e-6);
//                                        // aten::rms_norm -> aten::_fused_rms_norm
//   opscope::Tensor n = x.to("neuron:0");  // aten::to -> aten::_to_copy -> ...
//   opscope::Tensor r = opscope::rsqrt(opscope::mean(n * n, {-1}, /*keepdim=*/true) + 1e-6);
//   float v = r.item();                   // copies to the host (waits for the device)
//   const float* p = y.data<float>();     // cpu tensors only
//
// Every op call goes through one dispatcher: it records a host op named as in ATen ("aten::mul",
// input shapes when the profiler records shapes), offers the call to the innermost
// DispatchInterceptor of the thread (compile()'s capture hook), checks shapes and devices,
// allocates the outputs and runs the device backend's kernel (device.h). Composite ops call their
// sub-ops through the dispatcher, so nesting shows as in PyTorch (aten::rms_norm ->
// aten::_fused_rms_norm, aten::matmul -> aten::mm, aten::to -> aten::_to_copy ->
// aten::empty_strided + aten::copy_, aten::softmax -> aten::_softmax, aten::layer_norm ->
// aten::native_layer_norm).
//
// Errors: bad shapes, devices or dtypes throw TensorError with PyTorch's wording, e.g. "The size of
// tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1".
//
// Thread safety: a Tensor is a shared handle (like at::Tensor); distinct tensors may be used from
// different threads; ops on one device are ordered per calling thread only.
#ifndef OPSCOPE_TENSOR_H_
#define OPSCOPE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/ops.h"

namespace opscope {

class DeviceBackend;  // device.h

// ---- Devices and dtypes ----

enum class DeviceType : int8_t {
  kCPU = 0,
  kPrivateUse1 = 1,  // the simulated AWS NeuronCore, named "neuron"
  kMeta = 2,         // shapes only, no data: kernels are skipped (for capture and shape checks)
};

// The c10::DeviceType number PyTorch writes for a device type (c10/core/DeviceType.h: CPU 0,
// Meta 14, PrivateUse1 20), as in the "Device Type" of "[memory]" events.
constexpr int32_t C10DeviceType(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return 0;
    case DeviceType::kPrivateUse1:
      return 20;
    case DeviceType::kMeta:
      return 14;
  }
  return -1;
}

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int i = 0) : type(t), index(i) {}
  // Parses "cpu", "cpu:0", "neuron", "neuron:1", "privateuseone:0", "meta" (torch.device style).
  // Throws TensorError on anything else.
  Device(std::string_view spec);  // NOLINT(runtime/explicit): "neuron:0" converts like torch
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT(runtime/explicit)

  // "cpu", "neuron:0", "meta" (the spelling PyTorch prints in its errors).
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// Lower-case name of a device type: "cpu", "neuron", "meta".
std::string_view DeviceTypeName(DeviceType type);

enum class DType : int8_t {
  kFloat32 = 0,
  kBFloat16 = 1,  // storage only: to()/copy_ convert; math ops take f32
};
size_t ElementSize(DType dtype);
std::string_view DTypeName(DType dtype);  // "float", "c10::BFloat16" as PyTorch prints

// Every error the tensor API throws (PyTorch raises RuntimeError for these).
class TensorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// An allocation that does not fit the device's capacity. what() names the device, the request,
// the capacity, what is allocated and what is free.
class OutOfMemoryError : public TensorError {
 public:
  using TensorError::TensorError;
};

// ---- Storage and Tensor ----

// One device allocation, freed through the device's backend when the last tensor using it goes.
class Storage {
 public:
  // Allocates `nbytes` on `device` (throws OutOfMemoryError). nbytes may be 0.
  Storage(Device device, size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }  // nullptr for meta storage and for 0 bytes
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  DeviceBackend* backend_ = nullptr;  // the backend that allocated data_ (registry keeps it alive)
};

class Tensor {
 public:
  Tensor() = default;  // undefined (like an empty at::Tensor); defined() is false
  Tensor(std::shared_ptr<Storage> storage, std::vector<int64_t> sizes, std::vector<int64_t> strides,
         int64_t storage_offset, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }  // in elements
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t storage_offset() const { return offset_; }  // in elements
  int64_t numel() const;
  DType dtype() const { return dtype_; }
  Device device() const;
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Host pointer to element [0, 0, ...]. CPU tensors only; T must match the dtype (float for f32).
  template <typename T>
  T* data() const;
  // The single element as a float, from any device (waits for the device). Throws unless
  // numel()==1.
  float item() const;
  // All elements in row-major order as f32, copied to the host from any device.
  std::vector<float> ToVector() const;
  // "tensor([[1.0000, 2.0000]], device='neuron:0')" (elided past 6 per dimension).
  std::string ToString() const;

  // Views (share storage; record aten::view etc. like every op).
  Tensor view(std::vector<int64_t> shape) const;     // one -1 allowed; must be viewable
  Tensor reshape(std::vector<int64_t> shape) const;  // view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // aten::t: transpose of a <= 2-D tensor
  Tensor permute(std::vector<int64_t> dims) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(std::vector<int64_t> shape) const;  // -1 keeps a size
  Tensor unsqueeze(int64_t dim) const;
  Tensor contiguous() const;  // self when already contiguous, else a copy

  // Copies (aten::to returns self when nothing changes).
  Tensor to(Device device) const;
  Tensor to(DType dtype) const;
  Tensor to(Device device, DType dtype) const;
  Tensor& copy_(const Tensor& src);  // broadcasts src to self's shape; any devices

 private:
  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::kFloat32;
};

// ---- Factories (cpu unless a device is given; dtype f32 unless given) ----

Tensor empty(std::vector<int64_t> shape, Device device = Device(), DType dtype = DType::kFloat32);
Tensor empty_strided(std::vector<int64_t> shape, std::vector<int64_t> strides,
                     Device device = Device(), DType dtype = DType::kFloat32);
Tensor zeros(std::vector<int64_t> shape, Device device = Device());
Tensor ones(std::vector<int64_t> shape, Device device = Device());
Tensor full(std::vector<int64_t> shape, double value, Device device = Device());
Tensor arange(double start, double end, double step = 1, Device device = Device());
// Standard normal values from a counter-based generator: the same seed gives the same values on
// every device and platform.
Tensor randn(std::vector<int64_t> shape, uint64_t seed = 0, Device device = Device());
// Copies `values` (row-major) into a new tensor of `shape`. Not offered to interceptors.
Tensor from_vector(std::span<const float> values, std::vector<int64_t> shape,
                   Device device = Device());

// ---- Ops (f32; tensor operands broadcast; all tensors on one device) ----

Tensor add(const Tensor& a, const Tensor& b, double alpha = 1);  // a + alpha * b
Tensor add(const Tensor& a, double b, double alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1);  // a - alpha * b
Tensor sub(const Tensor& a, double b, double alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, double b);
Tensor pow(const Tensor& a, double exponent);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);  // elementwise; NaN if either is NaN
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor rsqrt(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor neg(const Tensor& a);
Tensor log(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor silu(const Tensor& a);
Tensor gelu(const Tensor& a, std::string_view approximate = "none");  // "none" (erf) or "tanh"
// Reductions over `dims` (empty = all dims; negative dims count from the end).
Tensor sum(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor mean(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor amax(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor mm(const Tensor& a, const Tensor& b);      // [n,k] x [k,m]
Tensor bmm(const Tensor& a, const Tensor& b);     // [b,n,k] x [b,k,m]
Tensor matmul(const Tensor& a, const Tensor& b);  // torch.matmul: 1-D, 2-D, batched, broadcast
Tensor softmax(const Tensor& a, int64_t dim);
// Normalizes over the trailing dims given by normalized_shape; weight/bias may be undefined.
Tensor layer_norm(const Tensor& x, std::vector<int64_t> normalized_shape,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5);
// x * rsqrt(mean(x^2 over normalized dims) + eps) * weight, one pass per row (weight may be
// undefined).
Tensor rms_norm(const Tensor& x, std::vector<int64_t> normalized_shape,
                const Tensor& weight = Tensor(), double eps = 1e-6);
Tensor to(const Tensor& a, Device device);
Tensor& copy_(Tensor& dst, const Tensor& src);
// Waits for all work queued on `device` (a no-op for cpu).
void synchronize(Device device);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, double b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, double b);
Tensor operator-(const Tensor& a);

// The shape `a` and `b` broadcast to (throws with PyTorch's message when they do not).
std::vector<int64_t> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b);

// ---- Running ops by name, and intercepting them (compile()'s capture hook) ----

// The non-tensor arguments of an op call. Each field's comment names the ops that read it;
// fields an op does not read keep their defaults.
struct OpAttrs {
  double scalar = 0;          // the number in add/sub/mul/div/pow(Tensor, Scalar); fill_/full value
  bool has_scalar = false;    // true when the second operand is `scalar` rather than a tensor
  double alpha = 1;           // add/sub
  double eps = 0;             // layer_norm, rms_norm
  std::vector<int64_t> dims;  // reductions (as given; empty = all), permute order
  std::vector<int64_t> shape;    // view/reshape/expand/empty/full/randn sizes; normalized_shape
  std::vector<int64_t> strides;  // empty_strided
  int64_t dim = 0;               // softmax; transpose dim0; slice/narrow/unsqueeze dim
  int64_t dim1 = 0;              // transpose dim1
  int64_t start = 0;             // slice/narrow start
  int64_t end = 0;               // slice end (exclusive); narrow: start + length
  int64_t step = 1;              // slice step
  double range_start = 0, range_end = 0, range_step = 1;  // arange
  uint64_t seed = 0;                                      // randn
  bool keepdim = false;                                   // reductions
  bool gelu_tanh = false;                                 // gelu(approximate="tanh")
  Device device;                                          // to/empty/factories: target device
  DType dtype = DType::kFloat32;                          // to/empty: target dtype
};

// One op call as an interceptor sees it.
struct OpRequest {
  OpId op;                         // the registry row: GetOpInfo(op) (opscope/ops.h)
  std::span<const Tensor> inputs;  // undefined tensors stand for absent optional inputs
  const OpAttrs& attrs;

  const char* name() const { return OpName(op); }  // ATen name, e.g. "aten::mul"
};

// A thread-local capture hook in the spirit of TorchDispatchMode. While installed (InterceptGuard),
// the innermost interceptor receives every top-level op call on its thread (ops called by other
// ops are not offered), after the host op was recorded and before any check or kernel. It returns
// the outputs to stand in for the op (e.g. meta tensors of the right shape, or results it computed)
// or nullopt to let the op run normally. While Intercept runs, its interceptor is suspended, so
// ops it calls (including RunOp) run normally and are offered to the next-outer interceptor, if
// any. Tensor creation from host data (from_vector) and item() are not offered.
class DispatchInterceptor {
 public:
  virtual ~DispatchInterceptor() = default;
  virtual std::optional<std::vector<Tensor>> Intercept(const OpRequest& request) = 0;
};

// Installs `interceptor` on the calling thread for the guard's lifetime. Guards nest (LIFO).
// `interceptor` must outlive the guard.
class InterceptGuard {
 public:
  explicit InterceptGuard(DispatchInterceptor* interceptor);
  ~InterceptGuard();
  InterceptGuard(const InterceptGuard&) = delete;
  InterceptGuard& operator=(const InterceptGuard&) = delete;
};

// Runs `op` exactly as the typed function would: records the host op, offers it to interceptors,
// checks, runs kernels. Inputs are the op's tensor operands in ATen order (undefined for absent
// optionals); the result is the op's outputs (one for most ops). Throws TensorError for bad
// arguments.
std::vector<Tensor> RunOp(OpId op, std::span<const Tensor> inputs, const OpAttrs& attrs);
// The same for the op named `name` ("aten::add", ...); throws TensorError for an unknown name.
std::vector<Tensor> RunOp(std::string_view name, std::span<const Tensor> inputs,
                          const OpAttrs& attrs);
// The names RunOp accepts, sorted.
std::vector<std::string_view> SupportedOps();

// ---- Template definitions ----

// Implementation detail of data<T>(): checks device and element size, returns the element pointer.
void* DataPointerChecked(const Tensor& t, size_t element_size);

template <typename T>
T* Tensor::data() const {
  return static_cast<T*>(DataPointerChecked(*this, sizeof(T)));
}

}  // namespace opscope

#endif  // OPSCOPE_TENSOR_H_
