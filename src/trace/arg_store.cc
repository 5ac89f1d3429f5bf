// The args store of the trace model (see arg_store.h).
#include "trace/arg_store.h"

#include <algorithm>

namespace opscope::internal {

ArgStore::~ArgStore() { ZSTD_freeDCtx(dctx_); }

uint32_t ArgStore::AddPacked(PackedArgs* packed) {
  Seal();
  const auto first = static_cast<uint32_t>(offsets_.size());
  uint32_t next = first;
  for (PackedArgs::Block& p : packed->blocks) {
    Block& b = blocks_.emplace_back();
    b.text = std::move(p.text);
    b.first = next;
    b.raw_size = p.raw_size;
    b.compressed = p.compressed;
    next += p.count;
  }
  if (offsets_.capacity() - offsets_.size() < packed->offsets.size()) {
    offsets_.reserve(std::max(offsets_.size() + packed->offsets.size(), 2 * offsets_.capacity()));
  }
  offsets_.insert(offsets_.end(), packed->offsets.begin(), packed->offsets.end());
  raw_bytes_ += packed->raw_bytes;
  open_first_ = static_cast<uint32_t>(offsets_.size());
  packed->Clear();
  return first;
}

void ArgStore::Seal() {
  if (open_.empty()) return;
  Block b;
  b.first = open_first_;
  b.raw_size = static_cast<uint32_t>(open_.size());
  if (raw_bytes_ > kCompressAbove) b.compressed = compressor_.Compress(open_, &b.text);
  if (b.compressed) {
    open_.clear();  // its capacity takes the next block without growing again
  } else {
    b.text = std::move(open_);
    b.text.shrink_to_fit();
    open_ = std::string();
  }
  blocks_.push_back(std::move(b));
  open_first_ = static_cast<uint32_t>(offsets_.size());
}

std::string ArgStore::Get(uint32_t handle) const {
  if (handle >= offsets_.size()) return "{}";
  const uint32_t begin = offsets_[handle];
  if (handle >= open_first_) {
    const uint32_t end =
        handle + 1 < offsets_.size() ? offsets_[handle + 1] : static_cast<uint32_t>(open_.size());
    return open_.substr(begin, end - begin);
  }
  // The block holding `handle`: the last one whose first handle is <= handle.
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), handle,
                             [](uint32_t h, const Block& b) { return h < b.first; });
  const size_t index = static_cast<size_t>(it - blocks_.begin()) - 1;
  const Block& block = blocks_[index];
  const uint32_t next_first = index + 1 < blocks_.size() ? blocks_[index + 1].first : open_first_;
  const uint32_t end = handle + 1 < next_first ? offsets_[handle + 1] : block.raw_size;
  if (!block.compressed) return block.text.substr(begin, end - begin);
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& raw = Inflate(index);
  return raw.substr(begin, end - begin);
}

size_t ArgStore::MemoryBytes() const {
  size_t bytes = open_.capacity() + offsets_.capacity() * sizeof(uint32_t) +
                 blocks_.capacity() * sizeof(Block);
  for (const Block& b : blocks_) bytes += b.text.capacity();
  return bytes;
}

const std::string& ArgStore::Inflate(size_t index) const {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first == index) {
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front().second;
    }
  }
  if (cache_.size() >= kCacheBlocks) cache_.pop_back();
  const Block& b = blocks_[index];
  std::string raw(b.raw_size, '\0');
  if (dctx_ == nullptr) dctx_ = ZSTD_createDCtx();
  const size_t n =
      dctx_ == nullptr
          ? ZSTD_decompress(raw.data(), raw.size(), b.text.data(), b.text.size())
          : ZSTD_decompressDCtx(dctx_, raw.data(), raw.size(), b.text.data(), b.text.size());
  if (ZSTD_isError(n)) raw = std::string(b.raw_size, ' ');  // cannot happen for our own data
  cache_.emplace_front(index, std::move(raw));
  return cache_.front().second;
}

}  // namespace opscope::internal
