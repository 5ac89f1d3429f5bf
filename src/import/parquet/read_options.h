// How a Parquet read behaves: threads, checksums, and the limits that keep a file's size fields
// from making the reader allocate without bound.
#ifndef OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_
#define OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_

#include <cstdint>

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
};

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_READ_OPTIONS_H_
