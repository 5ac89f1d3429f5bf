// How a Parquet read behaves: threads, checksums, and the limits that keep a file's size fields
// from making the reader allocate without bound.
#ifndef OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_
#define OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_

#include <cstdint>
#include <vector>

namespace opscope::parquet {

struct ReadOptions {
  // Threads for ParquetFile::ReadRowGroups, counting the calling thread (<= 1: the caller's
  // thread alone). Each holds one row group's columns at a time.
  int threads = 1;
  // Page CRCs (PageHeader.crc, CRC-32 of the page as stored) are checked when present; a page
  // whose checksum does not match is refused. False skips the check.
  bool verify_checksums = true;
  // The most bytes one page may take decompressed, and the most its levels and values may
  // decode to. Writers cut pages at about 1 MiB (parquet-mr's and Arrow's default), so a page
  // claiming more is refused rather than trusted (a few compressed bytes can claim gigabytes).
  uint64_t max_page_bytes = uint64_t{256} << 20;
  // The most bytes the columns read from one row group may decode to.
  uint64_t max_row_group_bytes = uint64_t{16} << 30;
  // BYTE_ARRAY columns (schema column indices) read as indices into their chunk's dictionary
  // (ColumnData::dictionary_indices()) instead of copied values: a reader that interns names looks
  // each distinct string up once per row group, not once per row. Pages a writer stored without the
  // dictionary (its fallback to PLAIN or DELTA when the dictionary grows large) append their values
  // to the dictionary, so every value has an index. Other columns listed here read as usual.
  std::vector<int> dictionary_index_columns;
};

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_
