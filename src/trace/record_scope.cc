// The record API: host op ranges, user annotations, instants, counters, correlation ids.
#include <bit>
#include <cstring>
#include <string>

#include "opscope/activity.h"
#include "opscope/record.h"
#include "trace/thread_buffer.h"

namespace opscope {
namespace {

// Correlation ids come from a process-wide counter in blocks, so the hot path touches only
// thread-local state. Ids are unique per process and fit in Record's 48 bits.
constexpr uint64_t kCorrelationBlock = 4096;
std::atomic<uint64_t> g_next_correlation_block{1};
thread_local uint64_t tl_next_correlation = 0;
thread_local uint64_t tl_correlation_limit = 0;
// The correlation id of the innermost open op on this thread (0 = none).
thread_local uint64_t tl_current_op = 0;

inline uint64_t NextCorrelation() {
  if (tl_next_correlation == tl_correlation_limit) [[unlikely]] {
    uint64_t block = g_next_correlation_block.fetch_add(1, std::memory_order_relaxed);
    tl_next_correlation = block * kCorrelationBlock;
    tl_correlation_limit = tl_next_correlation + kCorrelationBlock;
  }
  return tl_next_correlation++;
}

// Copies shapes into the thread's arena: [nargs, (ndim | is_tensor << 32), dims..., ...].
// Returns 1 + offset, or 0 when the arena is full (counted).
uint32_t EncodeShapes(internal::ThreadBuffer* b, std::span<const InputShape> shapes) {
  size_t words = 1;
  for (const InputShape& s : shapes) words += 1 + (s.is_tensor ? s.ndim : 0);
  uint32_t used = b->shape_used.load(std::memory_order_relaxed);
  if (used + words > b->shape_capacity) {
    b->shapes_dropped.store(b->shapes_dropped.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    return 0;
  }
  int64_t* out = b->shape_words.get() + used;
  *out++ = static_cast<int64_t>(shapes.size());
  for (const InputShape& s : shapes) {
    uint32_t ndim = s.is_tensor ? s.ndim : 0;
    *out++ = static_cast<int64_t>(ndim) | (s.is_tensor ? (int64_t{1} << 32) : 0);
    if (ndim > 0) std::memcpy(out, s.dims, ndim * sizeof(int64_t));
    out += ndim;
  }
  b->shape_used.store(used + static_cast<uint32_t>(words), std::memory_order_relaxed);
  return used + 1;
}

}  // namespace

void RecordScope::Begin(uint32_t name_id, ActivityKind kind, std::span<const InputShape> shapes) {
  name_ = name_id;
  kind_ = static_cast<uint8_t>(kind);
  correlation_ = NextCorrelation();
  previous_ = tl_current_op;
  tl_current_op = correlation_;
  if (!shapes.empty() && RecordShapesEnabled()) {
    if (internal::ThreadBuffer* b = internal::CurrentThreadBuffer()) {
      shapes_ = EncodeShapes(b, shapes);
    }
  }
  start_ticks_ = internal::RawTicks();
}

void RecordScope::End() {
  const uint64_t end = internal::RawTicks();
  tl_current_op = previous_;
  if (!ProfilingActive()) return;
  internal::ThreadBuffer* b = internal::tl_buffer;
  uint32_t shapes = shapes_;
  if (b == nullptr || b->generation.load(std::memory_order_relaxed) !=
                          internal::g_generation.load(std::memory_order_relaxed)) [[unlikely]] {
    b = internal::AcquireThreadBuffer();
    if (b == nullptr) return;
    shapes = 0;  // offsets from an older recording's arena mean nothing here
  }
  b->Push(internal::Record{start_ticks_, end,
                           internal::Record::Pack(correlation_, static_cast<ActivityKind>(kind_),
                                                  internal::RecordType::kRange),
                           name_, shapes});
}

RecordFunction::RecordFunction(std::string_view name) {
  if (ProfilingActive()) scope_.emplace(InternName(name), ActivityKind::kUserAnnotation);
}

void RecordInstant(uint32_t name_id) {
  if (!ProfilingActive()) return;
  internal::ThreadBuffer* b = internal::CurrentThreadBuffer();
  if (b == nullptr) return;
  uint64_t now = internal::RawTicks();
  b->Push(internal::Record{
      now, now,
      internal::Record::Pack(tl_current_op, ActivityKind::kOther, internal::RecordType::kInstant),
      name_id, 0});
}

void RecordCounter(uint32_t name_id, double value) {
  if (!ProfilingActive()) return;
  internal::ThreadBuffer* b = internal::CurrentThreadBuffer();
  if (b == nullptr) return;
  uint64_t now = internal::RawTicks();
  b->Push(internal::Record{
      now, std::bit_cast<uint64_t>(value),
      internal::Record::Pack(0, ActivityKind::kOther, internal::RecordType::kCounter), name_id, 0});
}

void RecordMemoryUsage(const MemoryUsage& usage) {
  if (!MemoryProfilingActive()) return;
  internal::ThreadBuffer* b = internal::CurrentThreadBuffer();
  if (b == nullptr) return;
  using internal::Record;
  using internal::RecordType;
  const auto reserved = static_cast<uint64_t>(usage.total_reserved);
  b->PushPair(
      Record{internal::RawTicks(), usage.addr,
             Record::Pack(0, ActivityKind::kOther, RecordType::kMemory),
             static_cast<uint32_t>(usage.device_type), static_cast<uint32_t>(usage.device_id)},
      Record{static_cast<uint64_t>(usage.bytes), static_cast<uint64_t>(usage.total_allocated),
             Record::Pack(0, ActivityKind::kOther, RecordType::kMemoryTotals),
             static_cast<uint32_t>(reserved), static_cast<uint32_t>(reserved >> 32)});
}

uint64_t CurrentOpCorrelation() { return ProfilingActive() ? tl_current_op : 0; }

uint64_t NewCorrelationId() { return NextCorrelation(); }

namespace internal {

std::string DecodeShapes(const std::vector<int64_t>& words, uint32_t offset) {
  std::string out = "[";
  if (offset >= words.size()) return "[]";
  size_t pos = offset;
  int64_t nargs = words[pos++];
  for (int64_t i = 0; i < nargs && pos < words.size(); ++i) {
    if (i > 0) out += ", ";
    int64_t header = words[pos++];
    uint32_t ndim = static_cast<uint32_t>(header & 0xffffffff);
    out += '[';
    for (uint32_t d = 0; d < ndim && pos < words.size(); ++d) {
      if (d > 0) out += ", ";
      out += std::to_string(words[pos++]);
    }
    out += ']';
  }
  out += ']';
  return out;
}

}  // namespace internal
}  // namespace opscope
