// DELTA_BINARY_PACKED (Encodings.md "Delta Encoding"): a header, then blocks of miniblocks of
// bit-packed deltas from a per-block minimum. Decoded in batches of up to 256 values (unpack,
// then a running sum in wrapping unsigned arithmetic, as the format requires). Also the two byte
// array encodings built on it, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.
//
//   DeltaBinaryPackedDecoder d;
//   if (std::string why = d.Init(data, size); !why.empty()) ...;
//   why = d.Decode(out, n);          // n <= d.values_left()
//
// Not thread-safe; reads only inside [data, data + size); allocates nothing proportional to a
// size the data claims.
#ifndef OPSCOPE_IMPORT_PARQUET_DELTA_DECODER_H_
#define OPSCOPE_IMPORT_PARQUET_DELTA_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "import/parquet/column_data.h"

namespace opscope::parquet {

class DeltaBinaryPackedDecoder {
 public:
  // Reads the header; "" or the reason it is malformed.
  std::string Init(const uint8_t* data, size_t size);
  uint64_t total_values() const { return total_; }
  uint64_t values_left() const { return left_; }

  // Decodes the next `n` values (n <= values_left()). T: int32_t or int64_t (values wrap to T).
  template <typename T>
  std::string Decode(T* out, size_t n);
  // Skips the values left, so that end() is where the encoded data stops.
  std::string SkipRest();
  // The first byte after the blocks decoded so far (after the whole encoding once every value is
  // decoded or skipped).
  const uint8_t* end() const { return pos_; }

 private:
  std::string StartMiniblock();

  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t values_per_block_ = 0;
  uint64_t miniblocks_per_block_ = 0;
  uint64_t values_per_miniblock_ = 0;
  uint64_t total_ = 0;
  uint64_t left_ = 0;                // values not yet returned
  uint64_t packed_left_ = 0;         // values in the blocks not yet unpacked
  bool first_ = true;                // the header's first value is still to return
  uint64_t last_ = 0;                // the previous value, as unsigned
  uint64_t min_delta_ = 0;           // the current block's
  const uint8_t* widths_ = nullptr;  // the current block's miniblock bit widths
  uint64_t miniblock_ = 0;           // index of the current miniblock in its block
  const uint8_t* mini_data_ = nullptr;
  size_t mini_bytes_ = 0;   // bytes of the current miniblock at mini_data_
  uint64_t mini_left_ = 0;  // values left in the current miniblock
  int width_ = 0;
  // Deltas unpacked from the current miniblock and not yet returned.
  static constexpr size_t kPending = 256;
  uint64_t pending_[kPending];
  size_t pending_pos_ = 0;
  size_t pending_n_ = 0;
};

extern template std::string DeltaBinaryPackedDecoder::Decode<int32_t>(int32_t*, size_t);
extern template std::string DeltaBinaryPackedDecoder::Decode<int64_t>(int64_t*, size_t);

// Appends `count` byte arrays encoded with DELTA_LENGTH_BYTE_ARRAY in [data, data + size) to
// `out` (offsets and bytes).
std::string DecodeDeltaLengthByteArray(const uint8_t* data, size_t size, int64_t count,
                                       ValueBuffer* out);
// Appends `count` values encoded with DELTA_BYTE_ARRAY. fixed_length > 0: FIXED_LEN_BYTE_ARRAY
// values of that length (no offsets appended). `max_bytes` caps the decoded bytes (prefixes can
// repeat a long value many times from a few encoded bytes).
std::string DecodeDeltaByteArray(const uint8_t* data, size_t size, int64_t count,
                                 int32_t fixed_length, uint64_t max_bytes, ValueBuffer* out);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_DELTA_DECODER_H_
