// Args objects packed into the arg store's blocks away from the thread that builds the trace.
//
// The arg store (arg_store.h) keeps args as JSON text in blocks of at most 64 KiB, each compressed
// with zstd once the store is large. Copying and compressing them is the costliest part of
// building a trace from a large file; the importer's parse threads do it per chunk instead with an
// ArgPacker, and the building thread links the finished blocks with Trace::AddPackedArgs: a move
// per block and one copy of the offsets. Handles are the same as adding the objects one by one
// (consecutive, in order); only where blocks begin and end differs, which Get does not show.
//
// Thread safety: an ArgPacker is used by one thread at a time; a PackedArgs may move between
// threads.
#ifndef OPSCOPE_SRC_TRACE_PACKED_ARGS_H_
#define OPSCOPE_SRC_TRACE_PACKED_ARGS_H_

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

// Blocks of args text, in object order.
struct PackedArgs {
  static constexpr size_t kBlockBytes = 64 * 1024;  // a block's raw text, unless one object is more
  // The store compresses its blocks once it holds more than this; a packer's caller applies the
  // same rule to what it knows (the importer: the JSON read so far).
  static constexpr size_t kCompressAbove = 256u << 10;

  struct Block {
    std::string text;    // raw or zstd-compressed
    uint32_t count = 0;  // objects in the block (>= 1)
    uint32_t raw_size = 0;
    bool compressed = false;
  };
  std::vector<Block> blocks;
  std::vector<uint32_t> offsets;  // per object: byte offset in its block's raw text
  size_t raw_bytes = 0;           // all objects' text

  void Clear() {
    blocks.clear();
    offsets.clear();
    raw_bytes = 0;
  }
};

// zstd level 1 into a scratch buffer kept across calls, with one context for its life (a fresh
// context per block would allocate and map a few hundred KiB every 64 KiB of args).
class BlockCompressor {
 public:
  BlockCompressor() = default;
  BlockCompressor(const BlockCompressor&) = delete;
  BlockCompressor& operator=(const BlockCompressor&) = delete;
  ~BlockCompressor() { ZSTD_freeCCtx(cctx_); }

  // Sets *out to `raw` compressed and returns true when that is smaller; else returns false and
  // leaves *out alone.
  bool Compress(std::string_view raw, std::string* out);

 private:
  ZSTD_CCtx* cctx_ = nullptr;
  std::unique_ptr<char[]> scratch_;
  size_t scratch_size_ = 0;
};

// Packs objects into blocks as the arg store would: a block is sealed when the next object would
// take it past kBlockBytes. One per thread.
//
//   packer.Pack(objects, compress, &packed);   // a span of objects at once, or one by one:
//   packer.Begin(rows, compress, &packed);
//   for (...) packer.Add(object_text);          // copied: the text may be a stack buffer
//   packer.Finish();
class ArgPacker {
 public:
  // Replaces *out with `objects` packed, each block compressed when `compress` and that makes it
  // smaller.
  void Pack(std::span<const std::string_view> objects, bool compress, PackedArgs* out);

  // Starts replacing *out (kept until Finish) with the objects Add is given; `expected`: how many
  // there will be, for the offsets' room (a hint).
  void Begin(size_t expected, bool compress, PackedArgs* out);
  void Add(std::string_view text) {
    if (open_.size() + text.size() > PackedArgs::kBlockBytes && !open_.empty()) Seal();
    out_->offsets.push_back(static_cast<uint32_t>(open_.size()));
    open_.append(text);
    out_->raw_bytes += text.size();
    ++count_;
  }
  // Seals the last block; *out is complete.
  void Finish();

 private:
  void Seal();

  BlockCompressor compressor_;
  std::string open_;  // the block being filled (capacity kept across blocks)
  PackedArgs* out_ = nullptr;
  bool compress_ = false;
  uint32_t count_ = 0;  // objects in the open block
};

}  // namespace opscope

#endif  // OPSCOPE_SRC_TRACE_PACKED_ARGS_H_
