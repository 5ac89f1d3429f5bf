// Bit unpacking: values of a fixed bit width packed least-significant bit first, as the RLE /
// bit-packed hybrid and DELTA_BINARY_PACKED store them. The hot loop of every level, dictionary
// index and delta: one unaligned 64-bit load, a shift and a mask per value, with the width a
// compile-time constant (one specialization per width).
#ifndef OPSCOPE_IMPORT_PARQUET_BIT_UNPACK_H_
#define OPSCOPE_IMPORT_PARQUET_BIT_UNPACK_H_

#include <cstddef>
#include <cstdint>

namespace opscope::parquet {

// Unpacks `n` values (a multiple of 8) of `width` bits from `in` into `out`. `in_bytes` is how many
// bytes may be read from `in` (at least n * width / 8; more lets the unpacker load whole words
// instead of copying the tail). width: 0..8 for uint8_t, 0..16 for uint16_t, 0..32 for uint32_t,
// 0..64 for uint64_t.
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint8_t* out, size_t n);
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint16_t* out, size_t n);
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint32_t* out, size_t n);
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint64_t* out, size_t n);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_BIT_UNPACK_H_
