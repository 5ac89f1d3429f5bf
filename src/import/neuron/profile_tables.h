// The tables of a Neuron Explorer output directory: finding them (`<Table>.parquet`, or a large
// table split as `<Table>_0.parquet`, `<Table>_1.parquet`, ...), and reading chosen fields of one
// table row group by row group on several threads, with each field checked against the type the
// reader expects and every error naming the file, the table, the column and the row group.
//
//   std::map<std::string, TableParts> tables;
//   Status st = ListProfileTables(dir, &tables);
//   std::unique_ptr<ProfileTable> t;
//   st = ProfileTable::Open(tables.at("Instruction"), &t);
//   TableRead read;
//   read.fields = {{"start_ts", FieldType::kInt, true}, {"engine", FieldType::kString, true}};
//   read.decode = [&](const RowGroupView& rg, int slot) { ... rg.field(0).Int(row) ... };  //
//   threads read.merge = [&](const RowGroupView& rg, int slot) { ... };  // one at a time, in row
//   order st = t->Read(read);
//
// Thread safety: a ProfileTable is immutable once open; Read runs `decode` on several threads.
#ifndef OPSCOPE_IMPORT_NEURON_PROFILE_TABLES_H_
#define OPSCOPE_IMPORT_NEURON_PROFILE_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "import/parquet/column_data.h"
#include "import/parquet/parquet_file.h"
#include "opscope/status.h"

namespace opscope::import::neuron {

// A table's files, in part order (one file when the table is not split).
struct TableParts {
  std::string name;
  std::vector<std::string> files;
};

// The tables in `dir` by name. Files that are not `*.parquet` are ignored. A table found both
// whole and split, or split with a missing part, is kInvalidInput naming the files.
Status ListProfileTables(const std::string& dir, std::map<std::string, TableParts>* tables);

// What the reader expects a field to hold. kInt accepts INT64 and INT32 columns, kFloat FLOAT and
// DOUBLE, kString BYTE_ARRAY, kBool BOOLEAN, kStringList a list of BYTE_ARRAY.
enum class FieldType : uint8_t { kInt, kFloat, kString, kBool, kStringList };
std::string_view FieldTypeName(FieldType type);

struct FieldRequest {
  std::string_view name;
  FieldType type = FieldType::kInt;
  bool needed = false;  // a file of the table without it is an error (else the field reads null)
  // kString: read as indices into the row group's dictionary (FieldColumn::Index): for names that
  // repeat over millions of rows.
  bool indexed = false;
};

// One field of one row group, by row. A field absent from the file reads as null everywhere.
class FieldColumn {
 public:
  bool present() const { return data_ != nullptr; }
  bool IsNull(int64_t row) const {
    return data_ == nullptr || (!value_of_row_.empty() && value_of_row_[row] < 0);
  }
  // The value, or `fallback` when null. Inline: the big tables read two or three a row.
  int64_t Int(int64_t row, int64_t fallback = 0) const {
    if (IsNull(row)) return fallback;
    const int64_t v = Value(row);
    return int64s_ != nullptr ? int64s_[v] : int32s_[v];
  }
  double Float(int64_t row, double fallback = 0) const;
  bool Bool(int64_t row, bool fallback = false) const;
  std::string_view Str(int64_t row) const;  // "" when null
  // Indexed strings: the row's index into dictionary(), -1 when null.
  int32_t Index(int64_t row) const {
    if (IsNull(row)) return -1;
    return data_->dictionary_indices()[Value(row)];
  }
  const parquet::ValueBuffer& dictionary() const { return data_->dictionary(); }
  // kStringList: the row's elements (null elements left out).
  std::vector<std::string_view> StrList(int64_t row) const;

  // Points this field at `c` of the decoded row group (nullptr: absent); a string list is
  // assembled from its levels. Errors are the assembler's, without the place.
  Status Bind(const parquet::Schema& schema, const parquet::ColumnData* c, bool list);

 private:
  friend class ProfileTable;
  int64_t Value(int64_t row) const { return value_of_row_.empty() ? row : value_of_row_[row]; }

  const parquet::ColumnData* data_ = nullptr;
  // data_'s integers by physical type, set by Bind (CheckFields admits INT32 and INT64 for kInt).
  const int64_t* int64s_ = nullptr;
  const int32_t* int32s_ = nullptr;
  std::vector<int64_t> value_of_row_;  // row -> dense value index (-1 null); empty: no nulls
  std::vector<int64_t> list_offsets_;  // kStringList: row r's values are [r], [r + 1])
  std::vector<int64_t> list_values_;   // kStringList: value index per element (-1 null)
};

// One row group of one part of a table, its requested fields resolved.
struct RowGroupView {
  std::string_view table;
  const std::string* file = nullptr;
  int part = 0;
  int row_group = 0;
  int64_t rows = 0;
  int64_t first_row = 0;            // the table's row number of this row group's first row
  size_t index = 0;                 // this row group's place among the table's, all parts in order
  std::vector<FieldColumn> fields;  // in TableRead::fields order
  const FieldColumn& field(size_t i) const { return fields[i]; }
};

struct TableRead {
  std::vector<FieldRequest> fields;
  int threads = 1;
  // Runs on up to `threads` threads at once, for different row groups; `slot` (< threads) is the
  // same for a row group's decode and merge, and no two row groups hold one slot at once.
  std::function<Status(const RowGroupView& rg, int slot)> decode;
  // Runs after the row group's decode, one row group at a time, in the table's row order.
  std::function<Status(const RowGroupView& rg, int slot)> merge;
  // Reads only the table's first `row_groups` row groups (all parts in order).
  size_t row_groups = SIZE_MAX;
};

class ProfileTable {
 public:
  // Opens every part (mapped, footers parsed). Errors name the file and the table.
  static Status Open(const TableParts& parts, std::unique_ptr<ProfileTable>* out);

  const std::string& name() const { return name_; }
  int64_t num_rows() const;
  // Row groups of all parts together (RowGroupView::index is below it).
  size_t num_row_groups() const;
  // Checks that every part has each `needed` field of `fields` (the check Read starts with), for
  // a reader that reads the table in several passes of a few fields each.
  Status CheckFields(const std::vector<FieldRequest>& fields) const;
  // The columns of every part's file (top-level field names), for counting unknown fields.
  std::vector<std::string> ColumnNames() const;
  // Whether part 0's file has a top-level field `name`.
  bool HasField(std::string_view name) const;

  // Reads the requested fields of every row group of every part. The first error stops the read:
  // the row groups before it are merged, the error names the file, table, column and row group.
  Status Read(const TableRead& read) const;

 private:
  Status Resolve(size_t part, const std::vector<FieldRequest>& fields, std::vector<int>* columns,
                 std::vector<int>* list_columns) const;

  std::string name_;
  std::vector<std::unique_ptr<parquet::ParquetFile>> files_;
};

// The table's error for a row group: "FILE: table T, column 'c' row group N: why".
Status TableError(const RowGroupView& rg, std::string_view column, const std::string& why);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_PROFILE_TABLES_H_
