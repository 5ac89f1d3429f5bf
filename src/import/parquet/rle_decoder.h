// The RLE / bit-packed hybrid decoder (Encodings.md, "RLE = 3"): definition and repetition
// levels, dictionary indices and RLE booleans. Runs are decoded in batches straight into the
// caller's array: an RLE run is a fill, a bit-packed run unpacks 8 values per step.
//
//   RleDecoder d(data, size, /*bit_width=*/3);
//   size_t got = d.GetBatch(indices, n);   // < n: the data ended early (or d.error() is set)
//
// Not thread-safe; reads only inside [data, data + size).
#ifndef OPSCOPE_IMPORT_PARQUET_RLE_DECODER_H_
#define OPSCOPE_IMPORT_PARQUET_RLE_DECODER_H_

#include <cstddef>
#include <cstdint>

namespace opscope::parquet {

class RleDecoder {
 public:
  RleDecoder() = default;
  // bit_width: 0..32.
  RleDecoder(const uint8_t* data, size_t size, int bit_width)
      : pos_(data), end_(data + size), bit_width_(bit_width) {}

  // Decodes up to `n` values into `out`; returns how many (fewer only when the data ends or is
  // malformed). T: uint8_t (bit_width <= 8), uint16_t (<= 16) or uint32_t.
  template <typename T>
  size_t GetBatch(T* out, size_t n);

  // Why decoding stopped early, or nullptr.
  const char* error() const { return error_; }
  // Bytes not yet consumed by a run header or run (what follows the encoded data).
  const uint8_t* position() const { return pos_; }

 private:
  bool NextRun();

  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  int bit_width_ = 0;
  // The current run: an RLE run repeats rle_value_; a bit-packed run has packed_left_ values left
  // starting at packed_ (whole groups of 8), and staged_ holds a group split between batches.
  uint64_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  uint64_t packed_left_ = 0;
  const uint8_t* packed_ = nullptr;
  uint32_t staged_[8] = {};
  int staged_pos_ = 0;
  int staged_count_ = 0;
  const char* error_ = nullptr;
};

extern template size_t RleDecoder::GetBatch<uint8_t>(uint8_t*, size_t);
extern template size_t RleDecoder::GetBatch<uint16_t>(uint16_t*, size_t);
extern template size_t RleDecoder::GetBatch<uint32_t>(uint32_t*, size_t);

// Reads a ULEB128 varint of up to 64 bits; false when it runs past `end` or is longer than 10
// bytes.
bool ReadUleb128(const uint8_t** pos, const uint8_t* end, uint64_t* out);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_RLE_DECODER_H_
