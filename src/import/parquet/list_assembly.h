// Per-row lists of a leaf column under exactly one repeated level: list<int64>, list<string>
// (the standard 3-level LIST, the legacy 2-level forms) or a repeated primitive field. One pass
// over the levels, no copy of the values.
//
//   Lists lists;
//   Status st = AssembleLists(rg.columns[0], &lists);
//   for (int64_t r = 0; r < lists.num_rows(); ++r) {
//     if (lists.is_null(r)) continue;
//     for (int64_t e = lists.offsets[r]; e < lists.offsets[r + 1]; ++e) {
//       int64_t v = lists.value(e);                    // -1: a null element
//       if (v >= 0) Use(column.int64s()[v]);            // or column.ByteArray(v)
//     }
//   }
#ifndef OPSCOPE_IMPORT_PARQUET_LIST_ASSEMBLY_H_
#define OPSCOPE_IMPORT_PARQUET_LIST_ASSEMBLY_H_

#include <cstdint>
#include <vector>

#include "import/parquet/column_data.h"
#include "import/parquet/schema.h"
#include "opscope/status.h"

namespace opscope::parquet {

struct Lists {
  std::vector<int64_t> offsets;  // rows + 1: row r's elements are [offsets[r], offsets[r + 1])
  // Per row: 0 when the list itself is null (the list field or a group above it is absent).
  // Empty when no list is null.
  std::vector<uint8_t> valid;
  // Per element: the index of its value in the column's dense values, -1 for a null element.
  // Empty when no element is null (element e is then value e).
  std::vector<int64_t> value_index;

  int64_t num_rows() const {
    return offsets.empty() ? 0 : static_cast<int64_t>(offsets.size()) - 1;
  }
  bool is_null(int64_t row) const { return !valid.empty() && valid[row] == 0; }
  int64_t value(int64_t element) const {
    return value_index.empty() ? element : value_index[element];
  }
};

// Assembles `column` (max_rep must be 1) of one row group into `out`. kInvalidArgument when the
// column does not have exactly one repeated level.
Status AssembleLists(const Schema& schema, const ColumnData& column, Lists* out);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_LIST_ASSEMBLY_H_
