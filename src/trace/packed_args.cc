// Packing args objects into arg store blocks (see packed_args.h).
#include "trace/packed_args.h"

namespace opscope {

bool BlockCompressor::Compress(std::string_view raw, std::string* out) {
  if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
  const size_t bound = ZSTD_compressBound(raw.size());
  if (scratch_size_ < bound) {
    scratch_ = std::make_unique<char[]>(bound);
    scratch_size_ = bound;
  }
  const size_t n = cctx_ == nullptr
                       ? ZSTD_compress(scratch_.get(), bound, raw.data(), raw.size(), 1)
                       : ZSTD_compressCCtx(cctx_, scratch_.get(), bound, raw.data(), raw.size(), 1);
  if (ZSTD_isError(n) || n >= raw.size()) return false;
  out->assign(scratch_.get(), n);
  return true;
}

void ArgPacker::Pack(std::span<const std::string_view> objects, bool compress, PackedArgs* out) {
  out->Clear();
  out->offsets.reserve(objects.size());
  open_.clear();
  uint32_t count = 0;
  for (std::string_view text : objects) {
    if (open_.size() + text.size() > PackedArgs::kBlockBytes && !open_.empty()) {
      Seal(count, compress, out);
      count = 0;
    }
    out->offsets.push_back(static_cast<uint32_t>(open_.size()));
    open_.append(text);
    out->raw_bytes += text.size();
    ++count;
  }
  if (count > 0) Seal(count, compress, out);
}

void ArgPacker::Seal(uint32_t count, bool compress, PackedArgs* out) {
  PackedArgs::Block& b = out->blocks.emplace_back();
  b.count = count;
  b.raw_size = static_cast<uint32_t>(open_.size());
  b.compressed = compress && compressor_.Compress(open_, &b.text);
  if (!b.compressed) b.text.assign(open_);
  open_.clear();
}

}  // namespace opscope
