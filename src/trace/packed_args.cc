// Packing args objects into arg store blocks (see packed_args.h).
#include "trace/packed_args.h"

#include "base/huge_array.h"

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
  Begin(objects.size(), compress, out);
  for (std::string_view text : objects) Add(text);
  Finish();
}

void ArgPacker::Begin(size_t expected, bool compress, PackedArgs* out) {
  out->Clear();
  internal::ReserveHuge(&out->offsets, expected);
  open_.clear();
  out_ = out;
  compress_ = compress;
  count_ = 0;
}

void ArgPacker::Finish() {
  if (count_ > 0) Seal();
  out_ = nullptr;
}

void ArgPacker::Seal() {
  PackedArgs::Block& b = out_->blocks.emplace_back();
  b.count = count_;
  b.raw_size = static_cast<uint32_t>(open_.size());
  b.compressed = compress_ && compressor_.Compress(open_, &b.text);
  if (!b.compressed) b.text.assign(open_);
  open_.clear();
  count_ = 0;
}

}  // namespace opscope
