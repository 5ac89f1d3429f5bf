// The values section of a page: every value encoding of Encodings.md but the deprecated
// BIT_PACKED (levels only) and ALP (in preview), appended in batches to a column's ValueBuffer.
//
//   PLAIN                     all types (BOOLEAN bit-packed; BYTE_ARRAY length-prefixed)
//   RLE_DICTIONARY /          all types: RLE / bit-packed indices into the chunk's dictionary,
//   PLAIN_DICTIONARY          gathered in batches of 1024 with one bounds check per batch
//   RLE                       BOOLEAN (4-byte length prefix, bit width 1)
//   DELTA_BINARY_PACKED       INT32, INT64
//   DELTA_LENGTH_BYTE_ARRAY   BYTE_ARRAY
//   DELTA_BYTE_ARRAY          BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
//   BYTE_STREAM_SPLIT         INT32, INT64, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY
//
// Errors are reasons ("" = ok): the column reader adds the file, column, row group and page.
#ifndef OPSCOPE_IMPORT_PARQUET_VALUE_DECODER_H_
#define OPSCOPE_IMPORT_PARQUET_VALUE_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "import/parquet/column_data.h"
#include "import/parquet/schema.h"

namespace opscope::parquet {

// Appends `count` values of `column` decoded from [data, data + size) with `encoding` to `out`.
// `dictionary`: the chunk's decoded dictionary page, or nullptr. `max_bytes`: the most bytes
// the values may decode to (dictionary gathers and DELTA_BYTE_ARRAY prefixes can expand a few
// encoded bytes into many).
std::string DecodeValues(Encoding encoding, const ColumnDescriptor& column, const uint8_t* data,
                         size_t size, int64_t count, const ValueBuffer* dictionary,
                         uint64_t max_bytes, ValueBuffer* out);

// Bytes a dictionary's byte arrays keep readable past their end (DecodeDictionaryPage zeroes
// them), so gathers can copy values up to that long with one fixed-size move.
inline constexpr size_t kCopySlack = 32;

// PLAIN alone.
std::string DecodePlain(const ColumnDescriptor& column, const uint8_t* data, size_t size,
                        int64_t count, ValueBuffer* out);

// Dictionary-indexed columns (ReadOptions::dictionary_index_columns): appends `count` RLE /
// bit-packed dictionary indices, each checked against `dict`'s count, to `indices`.
std::string DecodeDictionaryIndices(const uint8_t* data, size_t size, int64_t count,
                                    const ValueBuffer& dict, PodBuffer<int32_t>* indices);
// The values of a page stored without the dictionary, appended to `dict` as new entries, their
// indices to `indices`.
std::string AppendToDictionary(Encoding encoding, const ColumnDescriptor& column,
                               const uint8_t* data, size_t size, int64_t count, uint64_t max_bytes,
                               ValueBuffer* dict, PodBuffer<int32_t>* indices);

// A dictionary page's values (PLAIN) into an empty `dict`, padded for the gathers.
std::string DecodeDictionaryPage(const ColumnDescriptor& column, const uint8_t* data, size_t size,
                                 int64_t count, ValueBuffer* dict);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_VALUE_DECODER_H_
