// One column chunk of one row group read into a ColumnData: its pages in order (an optional
// dictionary page, then data pages v1 and v2; index pages and unknown page types skipped), each
// checked against its CRC when it has one, decompressed, its levels and values decoded.
//
// Every offset and length is checked against the column chunk and the file before it is used.
// Errors name the file, the column's path, the row group and the page's byte offset:
//   "x.parquet: column 'a.b' row group 0, page at byte 1234: unsupported encoding BIT_PACKED
//    for a INT32 column"
// Thread-safe for distinct outputs (reads only the file's immutable bytes).
#ifndef OPSCOPE_IMPORT_PARQUET_COLUMN_READER_H_
#define OPSCOPE_IMPORT_PARQUET_COLUMN_READER_H_

#include <cstdint>
#include <string>

#include "import/parquet/column_data.h"
#include "import/parquet/read_options.h"
#include "import/parquet/schema.h"
#include "import/parquet/thrift_decode.h"
#include "opscope/status.h"

namespace opscope::parquet {

// Where a column chunk lies: the file's bytes, and the part of them pages may occupy.
struct ChunkSource {
  const std::string* file_name = nullptr;
  const uint8_t* data = nullptr;  // the whole file
  uint64_t data_begin = 0;        // the first byte after the leading magic
  uint64_t data_end = 0;          // the footer's first byte
  int row_group = 0;
  int64_t row_group_rows = 0;
  const ReadOptions* options = nullptr;
  // Bytes decoded so far from this row group, against options->max_row_group_bytes.
  uint64_t* row_group_bytes = nullptr;
};

// Reads `chunk` (of `column`) into `out`, which must be empty and made for `column`.
Status ReadColumnChunk(const ChunkSource& source, const ::parquet::ColumnChunk& chunk,
                       const ColumnDescriptor& column, ColumnData* out);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_COLUMN_READER_H_
