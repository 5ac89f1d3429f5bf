// Records of a row group assembled from its leaf columns' definition and repetition levels
// (Dremel's record assembly): the schema's physical nesting, a group as a struct of its fields,
// a repeated field as a list of its values, an absent optional field as a null. LIST and MAP
// annotations are not collapsed here: their groups appear as they are stored (Schema's nesting
// fields say how to read them), so the output is the file's structure with nothing dropped.
//
//   class Printer : public RecordSink { ... };
//   Printer p;
//   Status st = AssembleRecords(file->schema(), rg, &p);   // p sees one root struct per row
//
// Every top-level field whose leaf columns were all read is assembled; the others are left out.
#ifndef OPSCOPE_IMPORT_PARQUET_RECORD_ASSEMBLY_H_
#define OPSCOPE_IMPORT_PARQUET_RECORD_ASSEMBLY_H_

#include <cstdint>

#include "import/parquet/column_data.h"
#include "import/parquet/parquet_file.h"
#include "import/parquet/schema.h"
#include "opscope/status.h"

namespace opscope::parquet {

// Receives records as a stream of nested events. For each row: BeginStruct(root), then for each
// field Field(node) followed by its value (Null, Value, a BeginStruct..EndStruct or a
// BeginList..EndList holding the elements' values), then EndStruct.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void BeginStruct(const SchemaNode& node) = 0;
  virtual void Field(const SchemaNode& field) = 0;
  virtual void EndStruct() = 0;
  virtual void BeginList(const SchemaNode& repeated) = 0;
  virtual void EndList() = 0;
  virtual void Null() = 0;
  // Value `index` of `column` (ColumnData's dense values).
  virtual void Value(const ColumnData& column, int64_t index) = 0;
};

// Streams every row of `rg` into `sink`. kInvalidInput when the columns' levels do not describe
// the same records (a malformed file), naming the file's row group.
Status AssembleRecords(const Schema& schema, const RowGroupData& rg, const std::string& file_name,
                       RecordSink* sink);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_RECORD_ASSEMBLY_H_
