// The record API: host op ranges, user annotations, instants and counters, from any thread.
//
//   void MyOp(const Tensor& x) {
//     OPSCOPE_SCOPE("my_lib::my_op");                // host op range; free when compiled out
//     opscope::RecordFunction fn("block " + name);  // user annotation, any name, built at run time
//     static const uint32_t kHits = opscope::InternName("cache_hits");
//     opscope::RecordCounter(kHits, hits);          // one sample of a counter track
//   }
//
// Everything here is cheap when no session records: one relaxed atomic load and a branch. While a
// session records (opscope/profiler.h starts and stops sessions), each call is a timestamp and a
// store of a fixed-size record into the calling thread's buffer, with no lock, no allocation and
// no formatting; a full buffer drops and counts (the count reaches the trace metadata and the
// table). Libraries that only record (ops, device backends) include this header, not the session
// API. Implemented in src/trace. Thread safety: every function may be called from any thread at
// any time; a RecordScope closes on the thread that opened it.
#ifndef OPSCOPE_RECORD_H_
#define OPSCOPE_RECORD_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "opscope/trace.h"

namespace opscope {

// Interns a name for records; thread-safe slow path (a lock and a hash lookup). Ids are stable
// for the process lifetime; callers cache them.
uint32_t InternName(std::string_view name);
// The text of an interned name.
std::string_view NameOf(uint32_t name_id);

// One argument's shape for record_shapes. `dims` is read during the call only.
struct InputShape {
  const int64_t* dims = nullptr;
  uint32_t ndim = 0;
  bool is_tensor = true;  // non-tensor arguments print as "[]"
};

namespace internal {
// Bits of the record state: what the running session collects (0 = no session).
inline constexpr uint32_t kRecordHost = 1;
inline constexpr uint32_t kRecordShapes = 2;
inline constexpr uint32_t kRecordDevice = 4;
inline constexpr uint32_t kRecordMemory = 8;
extern std::atomic<uint32_t> g_record_state;
}  // namespace internal

// True while a session records host activity: one relaxed atomic load.
inline bool ProfilingActive() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordHost) != 0;
}
// True while a session records with record_shapes.
inline bool RecordShapesEnabled() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordShapes) != 0;
}

// True while a session records with profile_memory: device allocators report each allocation and
// free through RecordMemoryUsage. One relaxed atomic load; callers branch on it before gathering
// anything.
inline bool MemoryProfilingActive() {
  return (internal::g_record_state.load(std::memory_order_relaxed) & internal::kRecordMemory) != 0;
}

// One allocation or free by a device allocator (profile_memory), as Kineto's "[memory]" instant
// event carries it. Totals are the allocator's own bookkeeping after this event, in bytes.
struct MemoryUsage {
  int32_t device_type = 0;      // c10::DeviceType: 0 CPU, 20 PrivateUse1 ("Device Type")
  int32_t device_id = -1;       // "Device Id": the device index; -1 for host memory
  uint64_t addr = 0;            // "Addr": the block's address
  int64_t bytes = 0;            // "Bytes": > 0 allocated, < 0 freed
  int64_t total_allocated = 0;  // "Total Allocated": bytes held by live blocks
  int64_t total_reserved = 0;   // "Total Reserved": allocated + the allocator's reserved pool
};

// RAII host op range. Kind kCpuOp by default. While open, CurrentOpCorrelation() on this thread
// returns correlation(). Not copyable or movable: it must close on the thread that opened it.
class RecordScope {
 public:
  explicit RecordScope(uint32_t name_id, ActivityKind kind = ActivityKind::kCpuOp) {
    if (ProfilingActive()) Begin(name_id, kind, {});
  }
  RecordScope(uint32_t name_id, std::span<const InputShape> shapes) {
    if (ProfilingActive()) Begin(name_id, ActivityKind::kCpuOp, shapes);
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;
  ~RecordScope() {
    if (correlation_ != 0) End();
  }
  // This op's correlation id (Kineto "External id"); 0 when not recording.
  uint64_t correlation() const { return correlation_; }

 private:
  void Begin(uint32_t name_id, ActivityKind kind, std::span<const InputShape> shapes);
  void End();

  uint64_t correlation_ = 0;
  uint64_t previous_ = 0;  // the enclosing op's correlation, restored on close
  uint64_t start_ticks_ = 0;
  uint32_t name_ = 0;
  uint32_t shapes_ = 0;
  uint8_t kind_ = 0;
};

// record_function("name"): a user annotation range. The name may be built at run time; it is
// interned when (and only when) a session records.
class RecordFunction {
 public:
  explicit RecordFunction(std::string_view name);
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;
  ~RecordFunction() = default;
  uint64_t correlation() const { return scope_ ? scope_->correlation() : 0; }

 private:
  std::optional<RecordScope> scope_;  // engaged only while profiling; no heap allocation
};

// An instant event on the calling thread ("i" phase, thread scope).
void RecordInstant(uint32_t name_id);
// One sample of a counter series named `name_id` ("C" phase).
void RecordCounter(uint32_t name_id, double value);
// A "[memory]" instant on the calling thread, timestamped now: the allocator calls it on the thread
// that allocates or frees, so the event falls inside the op doing so. No-op unless
// MemoryProfilingActive(); two records of the thread's buffer, stored together or dropped and
// counted together when the buffer is full.
void RecordMemoryUsage(const MemoryUsage& usage);

#define OPSCOPE_CONCAT_INNER_(a, b) a##b
#define OPSCOPE_CONCAT_(a, b) OPSCOPE_CONCAT_INNER_(a, b)
#ifdef OPSCOPE_DISABLE_PROFILING
#define OPSCOPE_SCOPE(name_literal) \
  do {                              \
  } while (false)
#else
// A host op range named by a string literal, open until the end of the enclosing block.
#define OPSCOPE_SCOPE(name_literal)                                \
  static const uint32_t OPSCOPE_CONCAT_(opscope_name_, __LINE__) = \
      ::opscope::InternName(name_literal);                         \
  ::opscope::RecordScope OPSCOPE_CONCAT_(opscope_scope_,           \
                                         __LINE__)(OPSCOPE_CONCAT_(opscope_name_, __LINE__))
#endif

}  // namespace opscope

#endif  // OPSCOPE_RECORD_H_
