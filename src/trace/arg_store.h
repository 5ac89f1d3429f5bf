// Trace::ArgStore: args objects as JSON text, appended into 64 KiB blocks. Args are most of a
// trace's text and are read rarely (one event's details at a time), so once a store holds more than
// kCompressAbove bytes, each filled block is compressed with zstd and inflated on demand through a
// small LRU cache. Small traces (a live profiling session) are never compressed. Handles are
// dense: handle -> block by binary search over each block's first handle. Blocks packed on other
// threads (packed_args.h) are linked in whole by AddPacked.
//
// Thread safety: Add/AddPacked/Seal from the building thread; Get from any thread (the cache is
// locked).
#ifndef OPSCOPE_SRC_TRACE_ARG_STORE_H_
#define OPSCOPE_SRC_TRACE_ARG_STORE_H_

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/huge_array.h"
#include "opscope/trace.h"
#include "trace/packed_args.h"

namespace opscope::internal {

class ArgStore {
 public:
  ArgStore() = default;
  ArgStore(const ArgStore&) = delete;
  ArgStore& operator=(const ArgStore&) = delete;
  ~ArgStore();

  // Appends one object's text; returns its handle (handles count up from 0). Inline: the
  // importer calls it once per event.
  uint32_t Add(std::string_view text) {
    if (open_.size() + text.size() > kBlockBytes && !open_.empty()) Seal();
    const auto handle = static_cast<uint32_t>(offsets_.size());
    offsets_.push_back(static_cast<uint32_t>(open_.size()));
    open_.append(text);
    raw_bytes_ += text.size();
    return handle;
  }
  // Seals the open block, then takes `packed`'s blocks (leaving it empty); returns the handle of
  // its first object (the others follow in order), or size() when it holds none.
  uint32_t AddPacked(PackedArgs* packed);
  // Moves the open block into the sealed list (compressed when the store is large).
  void Seal();

  size_t size() const { return offsets_.size(); }
  // The text of `handle`; "{}" for a handle the store does not hold.
  std::string Get(uint32_t handle) const;
  size_t MemoryBytes() const;

 private:
  static constexpr size_t kBlockBytes = PackedArgs::kBlockBytes;
  static constexpr size_t kCompressAbove = PackedArgs::kCompressAbove;
  static constexpr size_t kCacheBlocks = 16;
  struct Block {
    std::string text;  // raw or zstd-compressed
    uint32_t first = 0;
    uint32_t raw_size = 0;
    bool compressed = false;
  };

  // The raw text of sealed block `index`, through the cache. Caller holds mu_.
  const std::string& Inflate(size_t index) const;

  std::vector<Block> blocks_;
  // Per handle: byte offset inside its block. Millions of them, grown in place: on huge pages
  // from 2 MiB (internal::HugePageResource).
  std::pmr::vector<uint32_t> offsets_{internal::HugePageResource()};
  std::string open_;  // emptied, not freed, when sealed into a compressed block
  uint32_t open_first_ = 0;
  size_t raw_bytes_ = 0;
  mutable std::mutex mu_;
  mutable std::list<std::pair<size_t, std::string>> cache_;  // most recent first
  BlockCompressor compressor_;                               // building thread only
  mutable ZSTD_DCtx* dctx_ = nullptr;                        // under mu_
};

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_TRACE_ARG_STORE_H_
