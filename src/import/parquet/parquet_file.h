// A Parquet file opened for reading: its footer (schema, row groups, key/value metadata) parsed
// once, then chosen columns of one row group at a time decoded into typed ColumnData.
//
//   std::unique_ptr<ParquetFile> file;
//   Status st = ParquetFile::Open("Instruction.parquet", &file);      // mmaps the file
//   std::vector<int> cols = {file->schema().FindColumn("timestamp")};
//   st = file->ReadRowGroups(cols, {.threads = 2}, [&](RowGroupData& rg) {
//     std::span<const int64_t> ts = rg.columns[0].int64s();              // rg.row_group, num_rows
//     return Status::Ok();
//   });
//
// Memory: the file is mapped, not read; a read holds one row group's chosen columns per thread
// (ReadOptions bounds a page and a row group), never the whole file's values.
// Thread safety: a ParquetFile is immutable after Open; ReadRowGroup may run concurrently.
// Errors (Status, kInvalidInput) name the file, and where known the column's path, the row group
// and the byte offset of the page or footer, with the reason: malformed, encrypted, unsupported.
#ifndef OPSCOPE_IMPORT_PARQUET_PARQUET_FILE_H_
#define OPSCOPE_IMPORT_PARQUET_PARQUET_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "import/parquet/column_data.h"
#include "import/parquet/read_options.h"
#include "import/parquet/schema.h"
#include "opscope/status.h"

namespace opscope::parquet {

// Chosen columns of one row group.
struct RowGroupData {
  int row_group = 0;
  int64_t num_rows = 0;
  std::vector<ColumnData> columns;  // in the order the read asked for them

  // The column with schema index `column`, or nullptr when it was not read.
  const ColumnData* Find(int column) const {
    for (const ColumnData& c : columns) {
      if (c.descriptor().index == column) return &c;
    }
    return nullptr;
  }
};

class ParquetFile {
 public:
  // Maps `path` and parses its footer. kNotFound / kIoError when it cannot be read,
  // kInvalidInput when it is not a readable Parquet file.
  static Status Open(const std::string& path, std::unique_ptr<ParquetFile>* out);
  // Reads a file held in memory (tests, fuzzing); `data` must outlive the ParquetFile. `name`
  // stands for the file in errors.
  static Status OpenBuffer(std::string name, const uint8_t* data, size_t size,
                           std::unique_ptr<ParquetFile>* out);
  ~ParquetFile();
  ParquetFile(const ParquetFile&) = delete;
  ParquetFile& operator=(const ParquetFile&) = delete;

  const std::string& name() const;
  uint64_t size() const;
  const Schema& schema() const;
  int64_t num_rows() const;
  int num_row_groups() const;
  int64_t row_group_rows(int row_group) const;
  const std::string& created_by() const;  // "" when the writer did not say
  const std::vector<std::pair<std::string, std::string>>& key_value_metadata() const;

  // Decodes `columns` (schema column indices, each at most once) of `row_group` into `out`.
  Status ReadRowGroup(int row_group, std::span<const int> columns, const ReadOptions& options,
                      RowGroupData* out) const;

  // Reads every row group's `columns` on options.threads threads and hands each to `consume`,
  // which runs on the reading threads, concurrently for different row groups and in no fixed
  // order (merge results by rg.row_group). It may move the data out. The first error stops the
  // reads not yet started and is returned (the lowest row group's, when several fail).
  using RowGroupConsumer = std::function<Status(RowGroupData& rg)>;
  Status ReadRowGroups(std::span<const int> columns, const ReadOptions& options,
                       const RowGroupConsumer& consume) const;

 private:
  struct Impl;
  explicit ParquetFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_PARQUET_FILE_H_
