// What a Trace keeps besides the model it shows (trace.h): the storage behind its queries and its
// building, private to the trace layer.
#ifndef OPSCOPE_TRACE_TRACE_STORAGE_H_
#define OPSCOPE_TRACE_TRACE_STORAGE_H_

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opscope/trace.h"
#include "trace/arg_store.h"

namespace opscope {
namespace internal {

// A flow endpoint as Trace::AddFlowEndpoint gives it, until Finalize binds it to a slice. 32
// bytes: a large trace holds millions until Finalize.
struct PendingFlowEndpoint {
  uint64_t id;
  int64_t ts_ns;
  StringId category, name;
  uint32_t track;
  bool is_start, binds_enclosing;
};
static_assert(sizeof(PendingFlowEndpoint) == 32);

}  // namespace internal

// A string table's text and its index from text to id.
struct StringTable::Storage {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept;
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
  };
  std::vector<std::unique_ptr<char[]>> blocks;  // text storage; never moves once written
  char* cursor = nullptr;                       // free space in the current shared block
  size_t remaining = 0;
  size_t text_bytes = 0;
  std::unordered_map<std::string_view, StringId, Hash, Eq> index;
};

struct Trace::Storage {
  Storage();

  using PendingFlowEndpoint = internal::PendingFlowEndpoint;
  // Large (millions), so its storage is mapped on huge pages (internal::HugePageResource).
  std::pmr::vector<PendingFlowEndpoint> pending_flows;
  std::vector<uint32_t> track_begin;  // per track + 1, after Finalize
  // Device links of the slices that have one, in slice order; slice i's is found by rank: bit i
  // of link_bits says it has one, link_rank counts those before each 64-slice word. A few bits
  // per slice instead of 8 bytes each.
  std::vector<DeviceLink> links;
  std::vector<uint64_t> link_bits;
  std::vector<uint32_t> link_rank;
  std::vector<uint32_t> device_activity_begin;  // per slice + 1: range in device_activity
  std::vector<uint32_t> device_activity;        // device slices grouped by their op
  // Arg objects as JSON text, in blocks; large stores compress sealed blocks (arg_store.h).
  internal::ArgStore args;
  std::unordered_map<int64_t, uint32_t> pid_index;
  std::unordered_multimap<uint64_t, uint32_t> track_index;  // hash of (process, tid)
};

}  // namespace opscope

#endif  // OPSCOPE_TRACE_TRACE_STORAGE_H_
