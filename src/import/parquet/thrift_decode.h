// The bridge to the Thrift types generated from parquet.thrift: the footer and page headers read
// from memory with Thrift's compact protocol, under limits that keep a hostile size field from
// allocating more than the bytes it came in, and the footer's schema turned into a Schema.
//
// Only the reader's own .cc files include this header (it pulls in the generated
// parquet_types.h, which lies in the build tree). Errors are returned as a reason ("" = ok); the
// callers add the file and the place.
#ifndef OPSCOPE_IMPORT_PARQUET_THRIFT_DECODE_H_
#define OPSCOPE_IMPORT_PARQUET_THRIFT_DECODE_H_

#include <parquet_types.h>  // generated from parquet.thrift at build time

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "import/parquet/schema.h"

namespace opscope::parquet {

// Decodes a FileMetaData from exactly `size` bytes. Strings, lists and the whole message are
// limited to `size` (a list of n elements needs at least n bytes of input).
std::string DecodeFileMetaData(const uint8_t* data, size_t size, ::parquet::FileMetaData* out);

// Decodes the page header at the front of [data, data + size); *header_bytes = its encoded
// length. Limits as for the footer, with `size` the bytes left in the column chunk.
std::string DecodePageHeader(const uint8_t* data, size_t size, ::parquet::PageHeader* out,
                             uint32_t* header_bytes);

// The number a Thrift enum field holds. Thrift stores whatever integer the file has into the
// generated enum types, whose valid range is narrower; reading the field as its enum type would
// then be undefined, so every enum field from a file is read through this.
template <typename E>
int32_t RawEnum(const E& field) {
  static_assert(sizeof(E) == sizeof(int32_t));
  int32_t v;
  std::memcpy(&v, &field, sizeof(v));
  return v;
}

// Builds `schema` from the footer's flattened, depth-first schema elements.
std::string BuildSchema(const std::vector<::parquet::SchemaElement>& elements, Schema* schema);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_THRIFT_DECODE_H_
