// The RLE / bit-packed hybrid decoder.
#include "import/parquet/rle_decoder.h"

#include <algorithm>

#include "import/parquet/bit_unpack.h"

namespace opscope::parquet {

bool ReadUleb128(const uint8_t** pos, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  const uint8_t* p = *pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) return false;
    const uint8_t b = *p++;
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) {
      *pos = p;
      *out = v;
      return true;
    }
  }
  return false;
}

bool RleDecoder::NextRun() {
  if (pos_ >= end_) return false;
  uint64_t header = 0;
  if (!ReadUleb128(&pos_, end_, &header)) {
    error_ = "truncated run header";
    return false;
  }
  const size_t avail = static_cast<size_t>(end_ - pos_);
  if (header & 1) {
    // Bit-packed: header >> 1 groups of 8 values, bit_width bytes per group. A last run cut short
    // keeps the values its bytes hold (some writers drop the padding of the final group).
    const uint64_t groups = std::min<uint64_t>(header >> 1, uint64_t{1} << 40);
    uint64_t values = groups * 8;
    if (bit_width_ > 0) values = std::min<uint64_t>(values, uint64_t{avail} * 8 / bit_width_);
    if (values == 0 && groups != 0) {
      error_ = "bit-packed run past the end of the data";
      return false;
    }
    packed_ = pos_;
    packed_left_ = values;
    pos_ += std::min<uint64_t>(avail, groups * static_cast<uint64_t>(bit_width_));
    return true;
  }
  const size_t value_bytes = (static_cast<size_t>(bit_width_) + 7) / 8;
  if (avail < value_bytes) {
    error_ = "RLE run value past the end of the data";
    return false;
  }
  uint32_t v = 0;
  for (size_t i = 0; i < value_bytes; ++i) v |= uint32_t{pos_[i]} << (8 * i);
  pos_ += value_bytes;
  rle_value_ = bit_width_ >= 32 ? v : v & ((uint32_t{1} << bit_width_) - 1);
  rle_left_ = header >> 1;
  return true;
}

template <typename T>
size_t RleDecoder::GetBatch(T* out, size_t n) {
  if (bit_width_ < 0 || bit_width_ > static_cast<int>(sizeof(T) * 8)) {
    error_ = "bit width too large for the values";
    return 0;
  }
  size_t done = 0;
  while (done < n) {
    if (staged_pos_ < staged_count_) {
      const size_t k = std::min<size_t>(staged_count_ - staged_pos_, n - done);
      for (size_t i = 0; i < k; ++i) out[done + i] = static_cast<T>(staged_[staged_pos_ + i]);
      staged_pos_ += static_cast<int>(k);
      done += k;
      continue;
    }
    if (rle_left_ > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(rle_left_, n - done));
      std::fill(out + done, out + done + k, static_cast<T>(rle_value_));
      rle_left_ -= k;
      done += k;
      continue;
    }
    if (packed_left_ > 0) {
      const size_t avail = static_cast<size_t>(end_ - packed_);
      const size_t whole = static_cast<size_t>(std::min<uint64_t>(packed_left_, n - done)) / 8 * 8;
      if (whole > 0) {
        UnpackBits(packed_, avail, bit_width_, out + done, whole);
        packed_ += std::min(avail, whole / 8 * bit_width_);
        packed_left_ -= whole;
        done += whole;
        continue;
      }
      // Fewer than 8 wanted or left: unpack one group and hand it out across batches.
      UnpackBits(packed_, avail, bit_width_, staged_, 8);
      packed_ += std::min<size_t>(avail, bit_width_);
      staged_count_ = static_cast<int>(std::min<uint64_t>(8, packed_left_));
      packed_left_ -= staged_count_;
      staged_pos_ = 0;
      continue;
    }
    if (!NextRun()) break;
  }
  return done;
}

template size_t RleDecoder::GetBatch<uint8_t>(uint8_t*, size_t);
template size_t RleDecoder::GetBatch<uint16_t>(uint16_t*, size_t);
template size_t RleDecoder::GetBatch<uint32_t>(uint32_t*, size_t);

}  // namespace opscope::parquet
