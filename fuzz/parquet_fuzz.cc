// libFuzzer target for the Parquet reader: any bytes must open as a Parquet file or give an error
// status, and every row group must then decode or give an error naming the file, never a crash,
// a read out of bounds, a hang or unbounded memory. What decodes must hold together: dense values
// no more than level entries, byte array offsets rising inside the byte buffer, levels within
// their maximums; records and lists must then assemble or fail with a status.
//
// Checksums are not verified here (a mutated page would rarely get past them to the decoders);
// the page and row group limits are small so the fuzzer's memory limit is never the one that
// stops a decompression bomb.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "import/parquet/list_assembly.h"
#include "import/parquet/parquet_file.h"
#include "import/parquet/record_assembly.h"

namespace {

using opscope::parquet::ColumnData;
using opscope::parquet::SchemaNode;

class CountingSink final : public opscope::parquet::RecordSink {
 public:
  void BeginStruct(const SchemaNode&) override { ++events; }
  void Field(const SchemaNode&) override { ++events; }
  void EndStruct() override { ++events; }
  void BeginList(const SchemaNode&) override { ++events; }
  void EndList() override { ++events; }
  void Null() override { ++events; }
  void Value(const ColumnData& c, int64_t i) override {
    if (i < 0 || i >= c.num_values()) __builtin_trap();
    ++events;
  }
  uint64_t events = 0;
};

void CheckColumn(const ColumnData& c) {
  const auto& d = c.descriptor();
  if (c.num_values() > c.num_levels()) __builtin_trap();
  if (!c.def_levels().empty() && static_cast<int64_t>(c.def_levels().size()) != c.num_levels()) {
    __builtin_trap();
  }
  for (int16_t v : c.def_levels()) {
    if (v < 0 || v > d.max_def) __builtin_trap();
  }
  for (int16_t v : c.rep_levels()) {
    if (v < 0 || v > d.max_rep) __builtin_trap();
  }
  if (d.type == opscope::parquet::PhysicalType::kByteArray) {
    const auto off = c.offsets();
    if (static_cast<int64_t>(off.size()) != c.num_values() + 1) __builtin_trap();
    for (size_t i = 1; i < off.size(); ++i) {
      if (off[i] < off[i - 1]) __builtin_trap();
    }
    if (off.back() != static_cast<int64_t>(c.bytes().size())) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<opscope::parquet::ParquetFile> file;
  if (!opscope::parquet::ParquetFile::OpenBuffer("fuzz.parquet", data, size, &file).ok()) {
    return 0;
  }
  opscope::parquet::ReadOptions options;
  options.verify_checksums = false;
  options.max_page_bytes = uint64_t{4} << 20;
  options.max_row_group_bytes = uint64_t{64} << 20;
  const auto& schema = file->schema();
  std::vector<int> columns(schema.num_columns());
  for (size_t i = 0; i < columns.size(); ++i) columns[i] = static_cast<int>(i);
  for (int rg = 0; rg < file->num_row_groups() && rg < 8; ++rg) {
    opscope::parquet::RowGroupData data_rg;
    const opscope::Status st = file->ReadRowGroup(rg, columns, options, &data_rg);
    if (!st.ok()) {
      if (st.message().rfind("fuzz.parquet: ", 0) != 0) __builtin_trap();
      continue;
    }
    for (const ColumnData& c : data_rg.columns) {
      CheckColumn(c);
      if (c.descriptor().max_rep == 1) {
        opscope::parquet::Lists lists;
        if (opscope::parquet::AssembleLists(schema, c, &lists).ok() &&
            lists.num_rows() != data_rg.num_rows) {
          __builtin_trap();
        }
      }
    }
    CountingSink sink;
    (void)opscope::parquet::AssembleRecords(schema, data_rg, file->name(), &sink);
  }
  return 0;
}
