// Device backends: the one small interface every device implements (ggml-style), and the
// registry the dispatcher finds them in.
//
//   class NeuronBackend : public opscope::DeviceBackend { ... };  // implements the pure virtuals
//   opscope::RegisterBackend(std::make_unique<NeuronBackend>());   // from RegisterNeuronBackend()
//
//   // For `y = x * w` with x [4, 8] and w [8] on neuron:0 the dispatcher then calls
//   //   void* p = backend.Allocate(0, 4 * 8 * 4);                      // y's storage
//   //   backend.Execute(call);  // call.op == OpId::kMul (OpName: "aten::mul"),
//   //                           // call.inputs = {x, w expanded to [4, 8] (stride 0 on dim 0)},
//   //                           // call.outputs = {y}, call.correlation_id = the host op's id
//   // and later backend.Free(0, p, 128) when y's last tensor goes.
//
// Each backend library exposes one init function the program calls once before using that
// device: RegisterCpuBackend() (opscope_device_cpu) and RegisterNeuronBackend()
// (opscope_device_neuron). No static-initialisation tricks: link the library, call its function.
//
// Thread safety: registry functions may be called from any thread. A backend's methods may be
// called from any host thread; calls from one thread arrive in program order.
#ifndef OPSCOPE_DEVICE_H_
#define OPSCOPE_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/ops.h"
#include "opscope/record.h"
#include "opscope/tensor.h"

namespace opscope {

inline constexpr int kMaxDims = 8;

// A tensor as a kernel sees it: POD, no ownership. The storage stays alive for the duration of
// Execute; an asynchronous backend must keep work and frees in order (see Free).
struct TensorRef {
  void* data = nullptr;  // storage base (nullptr for meta); element 0 is at data + offset elements
  DType dtype = DType::kFloat32;
  Device device;
  int32_t ndim = -1;  // -1: an absent optional input (e.g. rms_norm without weight)
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // in elements; 0 on broadcast dims
  int64_t offset = 0;              // in elements

  bool defined() const { return ndim >= 0; }
  int64_t numel() const;
  bool is_contiguous() const;  // row-major dense (size-1 dims ignored)
  float* f32() const { return static_cast<float*>(data) + offset; }  // element 0 (f32 only)
};
// Throws TensorError when t has more than kMaxDims dims. An undefined tensor gives ndim == -1.
TensorRef MakeTensorRef(const Tensor& t);

// One kernel call: `op` has a kernel (GetOpInfo(op).kernel != KernelKind::kNone) and the call
// satisfies that KernelKind's contract (opscope/ops.h). Everything it points to outlives
// Execute().
struct OpCall {
  OpId op = OpId::kAdd;  // OpName(op) is its ATen name
  std::span<const TensorRef> inputs;
  std::span<const TensorRef> outputs;
  const OpAttrs* attrs = nullptr;  // never null; dims/dim already non-negative
  uint32_t reduce_mask = 0;        // reductions only
  uint64_t correlation_id = 0;     // CurrentOpCorrelation() of the host op (0 when not profiling)
};

// A compiled graph as loop nests: what compile() hands a backend that runs whole device programs
// (DeviceBackend::BuildProgram). Every computed value is a pointwise op or a reduction of the
// registry (FusionClass::kPointwise / kReduction); there are no extern ops. Values are in
// topological order and named by index.
struct ProgramGraph {
  struct Value {
    enum class Kind : uint8_t { kInput, kConstant, kOp } kind = Kind::kOp;
    OpId op = OpId::kAdd;        // kOp only
    std::vector<int> operands;   // kOp: its tensor operands (earlier values); scalars omitted
    std::vector<int64_t> sizes;  // of f32 elements
    bool output = false;         // a graph output
  };
  // One loop nest over `domain`: per outer index, the reductions run over `reduce_dims`, then the
  // element-level values are computed and the outputs written.
  struct Kernel {
    std::vector<int64_t> domain;
    std::vector<int> reduce_dims;  // indices into domain, sorted; empty for pointwise-only
    std::vector<int> values;       // values computed here, in order
    std::vector<int> row_values;   // those computed once per outer index (reductions and what
                                   // depends only on them); empty when reduce_dims is
    std::vector<int> outputs;  // values written to memory (graph outputs, later kernels' inputs)
  };
  std::vector<Value> values;
  std::vector<Kernel> kernels;  // in execution order
};

// Computes a program's results on the host: `inputs` and `outputs` are the tensors
// ExecuteProgram received, in its order. Called on whatever thread the backend runs work on.
using ProgramKernel =
    std::function<void(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs)>;

// A multi-op device program, built by a backend's BuildProgram and run by its ExecuteProgram
// (compile() builds one per compiled graph and runs it once per call). Its content is the
// backend's; the caller only carries it.
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
};

struct MemoryStats {
  size_t capacity_bytes = 0;
  size_t allocated_bytes = 0;  // held by live tensors
  size_t peak_bytes = 0;
  size_t cached_bytes = 0;  // freed blocks kept for reuse (still counted against capacity)
  // allocated + cached + blocks freed while queued work may still use them (CapacityAllocator::
  // Retire): what the allocator holds from the system, as "Total Reserved" reports it.
  size_t reserved_bytes = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual DeviceType type() const = 0;
  virtual std::string_view name() const = 0;  // "cpu", "neuron"
  virtual int device_count() const { return 1; }

  // Memory. Allocate throws OutOfMemoryError (see CapacityAllocator); returns nullptr only for
  // nbytes == 0. Free may be called while queued work still uses the block: an asynchronous
  // backend must release it only after that work (stream-ordered, like CUDA's allocator).
  virtual void* Allocate(int device, size_t nbytes) = 0;
  virtual void Free(int device, void* ptr, size_t nbytes) = 0;
  virtual MemoryStats memory_stats(int /*device*/) const { return {}; }
  // Optional: changes the capacity Allocate enforces (tests use it to provoke out-of-memory).
  virtual void set_memory_capacity(int /*device*/, size_t /*bytes*/) {}

  // Host <-> device copies of whole contiguous tensors (the dispatcher makes both sides
  // contiguous and of equal dtype and numel). CopyFromHost may return before the modelled
  // transfer ends but must have read `src` by then. CopyToHost waits for queued work that writes
  // `src`, then fills `dst`.
  virtual void CopyFromHost(const TensorRef& dst, const void* src, uint64_t correlation_id) = 0;
  virtual void CopyToHost(void* dst, const TensorRef& src, uint64_t correlation_id) = 0;

  // Runs (or enqueues) one kernel. Asynchronous backends return after enqueueing.
  virtual void Execute(const OpCall& call) = 0;
  // Waits until all work queued on `device` has finished.
  virtual void Synchronize(int /*device*/) {}

  // Optional: multi-op programs (see DeviceProgram); the defaults refuse with TensorError.
  // BuildProgram lowers `graph` once into a program named `name` whose results `kernel` computes;
  // ExecuteProgram runs it (or enqueues it: tensors may be freed after it returns, see Free) on
  // outputs[0]'s device, with `correlation_id` as the host op's id.
  virtual bool SupportsPrograms() const { return false; }
  virtual std::unique_ptr<DeviceProgram> BuildProgram(const ProgramGraph& graph,
                                                      std::string_view name, ProgramKernel kernel);
  virtual void ExecuteProgram(const DeviceProgram& program, std::span<const TensorRef> inputs,
                              std::span<const TensorRef> outputs, uint64_t correlation_id);

  // Optional: true when the host may read and write this backend's memory directly and Execute
  // has finished its work when it returns (cpu). compile() then runs its generated C++ kernels on
  // the tensors itself, with extern ops between them, instead of building a device program.
  virtual bool RunsHostCode() const { return false; }
};

// Registers `backend` for its type(). A second registration of a type replaces the first for new
// work (the old backend is kept alive for the storages it still owns). Idempotent init functions
// should check FindBackend first.
void RegisterBackend(std::unique_ptr<DeviceBackend> backend);
// nullptr when no backend of that type is registered. kMeta is built in.
DeviceBackend* FindBackend(DeviceType type);
// The registered backend whose name() is `name` ("cpu", "neuron", "meta"), or nullptr.
DeviceBackend* FindBackendByName(std::string_view name);
// The names of the registered backends, in DeviceType order ("cpu, neuron, meta"), for messages.
std::string RegisteredBackendNames();
// Throws TensorError naming the init function to call when none is registered.
DeviceBackend& GetBackend(DeviceType type);
// Every device of every registered backend (cpu first, then neuron:0..N-1); meta excluded.
std::vector<Device> RegisteredDevices();

// Init functions, each defined by its backend library (see the top of this file).
void RegisterCpuBackend();
void RegisterNeuronBackend();

// A capacity-checked allocator of aligned host memory for backends whose memory is host memory
// (cpu, and the simulated device's HBM). Freed blocks of 256 KiB and more are cached by exact
// size for reuse (up to cache_limit bytes, default min(capacity / 8, 512 MiB); 0 under
// sanitizers), so a loop that allocates same-sized tensors does not page-fault fresh memory each
// time. Cached blocks count against the capacity and are released before an allocation fails.
// Sizes are rounded up to the alignment; that rounded size is what the totals and the memory
// events count. While a session records with profile_memory, every Allocate and Retire reports a
// "[memory]" event (RecordMemoryUsage) on the calling thread with the totals after it: allocated =
// live blocks; reserved = allocated + cached + retired blocks not yet released. Thread-safe.
class CapacityAllocator {
 public:
  CapacityAllocator(Device device, size_t capacity_bytes, size_t alignment = 64);
  ~CapacityAllocator();
  CapacityAllocator(const CapacityAllocator&) = delete;
  CapacityAllocator& operator=(const CapacityAllocator&) = delete;

  // Throws OutOfMemoryError: "neuron:0 out of memory: tried to allocate 64.00 MiB (capacity
  // 16.00 GiB, 15.98 GiB already allocated, 20.00 MiB free)".
  void* Allocate(size_t nbytes);
  // Retire + Release at once.
  void Free(void* ptr, size_t nbytes);
  // A stream-ordered free in two steps, as CUDA's caching allocator does it: Retire when the
  // tensor lets go of the block (counted as freed now, on the caller's thread, and reported);
  // Release once queued work that may still use it has finished (the block is then reused or
  // returned; it stays reserved and counts against the capacity until then).
  void Retire(void* ptr, size_t nbytes);
  void Release(void* ptr, size_t nbytes);
  void set_capacity(size_t capacity_bytes);
  void set_cache_limit(size_t bytes);  // 0 disables caching (and releases the cache)
  void ReleaseCache();
  MemoryStats stats() const;

 private:
  struct State;  // the counters, the cache and their mutex (capacity_allocator.cc)
  std::unique_ptr<State> state_;
};

// "64.00 MiB", "512 bytes": the byte counts in error messages.
std::string FormatBytes(size_t bytes);

}  // namespace opscope

#endif  // OPSCOPE_DEVICE_H_
