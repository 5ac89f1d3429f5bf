// Lists and records assembled from levels: list<int64> and list<string> with null lists, empty
// lists and null elements, the legacy repeated primitive, and the same rows through the record
// assembly.
#include "import/parquet/list_assembly.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "import/parquet/parquet_file.h"
#include "import/parquet/parquet_test_writer.h"
#include "import/parquet/record_assembly.h"

namespace opscope::parquet {
namespace {

using testing::Group;
using testing::Leaf;
using testing::Root;
using testing::TestFileWriter;
using R = ::parquet::FieldRepetitionType;
using T = ::parquet::Type;
using C = ::parquet::ConvertedType;

// Rows: [1, 2], null, [], [null, 3]; the same lists of strings.
std::string ListFile() {
  TestFileWriter w({Root(2), Group("ints", R::OPTIONAL, 1, C::LIST), Group("list", R::REPEATED, 1),
                    Leaf("element", T::INT64, R::OPTIONAL), Group("strs", R::OPTIONAL, 1, C::LIST),
                    Group("list", R::REPEATED, 1), Leaf("element", T::BYTE_ARRAY, R::OPTIONAL)});
  const std::vector<uint32_t> rep = {0, 1, 0, 0, 0, 1};
  const std::vector<uint32_t> def = {3, 3, 0, 1, 2, 3};
  w.BeginRowGroup(4);
  w.BeginColumn(Codec::kSnappy);
  w.AddDataPageV1(
      6, testing::Levels(rep, 1) + testing::Levels(def, 3) + testing::PlainInt64({1, 2, 3}));
  w.EndColumn();
  w.BeginColumn();
  w.AddDataPageV1(6, testing::Levels(rep, 1) + testing::Levels(def, 3) +
                         testing::PlainByteArrays({"a", "bc", "d"}));
  w.EndColumn();
  return w.Finish();
}

struct Read {
  std::string bytes;
  std::unique_ptr<ParquetFile> file;
  RowGroupData rg;
};

void ReadFile(Read* r) {
  ASSERT_TRUE(ParquetFile::OpenBuffer("l.parquet",
                                      reinterpret_cast<const uint8_t*>(r->bytes.data()),
                                      r->bytes.size(), &r->file)
                  .ok());
  std::vector<int> cols(r->file->schema().num_columns());
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = static_cast<int>(i);
  const Status st = r->file->ReadRowGroup(0, cols, {}, &r->rg);
  ASSERT_TRUE(st.ok()) << st.message();
}

TEST(ListAssemblyTest, Int64AndStringLists) {
  Read r{ListFile(), nullptr, {}};
  ReadFile(&r);
  Lists ints;
  ASSERT_TRUE(AssembleLists(r.file->schema(), r.rg.columns[0], &ints).ok());
  EXPECT_EQ(ints.offsets, (std::vector<int64_t>{0, 2, 2, 2, 4}));
  EXPECT_EQ(ints.valid, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(ints.value_index, (std::vector<int64_t>{0, 1, -1, 2}));
  const auto v = r.rg.columns[0].int64s();
  EXPECT_EQ(v[ints.value(1)], 2);
  EXPECT_EQ(v[ints.value(3)], 3);
  Lists strs;
  ASSERT_TRUE(AssembleLists(r.file->schema(), r.rg.columns[1], &strs).ok());
  EXPECT_EQ(strs.offsets, ints.offsets);
  EXPECT_EQ(r.rg.columns[1].ByteArray(strs.value(1)), "bc");
  EXPECT_TRUE(strs.is_null(1));
  EXPECT_FALSE(strs.is_null(2));
}

TEST(ListAssemblyTest, RepeatedPrimitiveWithoutNulls) {
  TestFileWriter w({Root(1), Leaf("xs", T::INT64, R::REPEATED)});
  w.BeginRowGroup(3);
  w.BeginColumn();
  // [7, 8, 9], [], [10]
  w.AddDataPageV1(5, testing::Levels({0, 1, 1, 0, 0}, 1) + testing::Levels({1, 1, 1, 0, 1}, 1) +
                         testing::PlainInt64({7, 8, 9, 10}));
  w.EndColumn();
  Read r{w.Finish(), nullptr, {}};
  ReadFile(&r);
  Lists l;
  ASSERT_TRUE(AssembleLists(r.file->schema(), r.rg.columns[0], &l).ok());
  EXPECT_EQ(l.offsets, (std::vector<int64_t>{0, 3, 3, 4}));
  EXPECT_TRUE(l.valid.empty());
  EXPECT_TRUE(l.value_index.empty());
  EXPECT_EQ(l.value(3), 3);
}

TEST(ListAssemblyTest, NeedsExactlyOneRepeatedLevel) {
  TestFileWriter w({Root(1), Leaf("x", T::INT64, R::REQUIRED)});
  w.BeginRowGroup(1);
  w.BeginColumn();
  w.AddDataPageV1(1, testing::PlainInt64({1}));
  w.EndColumn();
  Read r{w.Finish(), nullptr, {}};
  ReadFile(&r);
  Lists l;
  EXPECT_EQ(AssembleLists(r.file->schema(), r.rg.columns[0], &l).code(),
            Status::Code::kInvalidArgument);
}

// Prints records compactly: {a:[1,2],b:null}.
class Printer : public RecordSink {
 public:
  std::string out;
  void BeginStruct(const SchemaNode&) override { Open('{'); }
  void Field(const SchemaNode& f) override {
    Comma();
    out += f.name + ":";
    after_field_ = true;
  }
  void EndStruct() override { Close('}'); }
  void BeginList(const SchemaNode&) override { Open('['); }
  void EndList() override { Close(']'); }
  void Null() override {
    Comma();
    out += "null";
  }
  void Value(const ColumnData& c, int64_t i) override {
    Comma();
    out += c.type() == PhysicalType::kInt64 ? std::to_string(c.int64s()[i])
                                            : std::string(c.ByteArray(i));
  }

 private:
  void Open(char c) {
    Comma();
    out.push_back(c);
    first_.push_back(true);
  }
  void Close(char c) {
    first_.pop_back();
    out.push_back(c);
    if (first_.empty()) out.push_back('\n');
  }
  void Comma() {
    if (after_field_) {
      after_field_ = false;
      return;
    }
    if (!first_.empty() && !first_.back()) out.push_back(',');
    if (!first_.empty()) first_.back() = false;
  }
  std::vector<bool> first_;
  bool after_field_ = false;
};

TEST(RecordAssemblyTest, ListsAsStoredWithNullsAndEmpties) {
  Read r{ListFile(), nullptr, {}};
  ReadFile(&r);
  Printer p;
  ASSERT_TRUE(AssembleRecords(r.file->schema(), r.rg, "l.parquet", &p).ok());
  EXPECT_EQ(
      p.out,
      "{ints:{list:[{element:1},{element:2}]},strs:{list:[{element:a},{element:bc}]}}\n"
      "{ints:null,strs:null}\n"
      "{ints:{list:[]},strs:{list:[]}}\n"
      "{ints:{list:[{element:null},{element:3}]},strs:{list:[{element:null},{element:d}]}}\n");
}

TEST(RecordAssemblyTest, DisagreeingColumnsAreAnError) {
  TestFileWriter w({Root(1), Group("g", R::OPTIONAL, 2), Leaf("a", T::INT64, R::OPTIONAL),
                    Leaf("b", T::INT64, R::OPTIONAL)});
  w.BeginRowGroup(2);
  w.BeginColumn();
  w.AddDataPageV1(2, testing::Levels({2, 0}, 2) + testing::PlainInt64({1}));
  w.EndColumn();
  w.BeginColumn();
  // Says g is absent in row 0 while a says it holds a value.
  w.AddDataPageV1(2, testing::Levels({0, 2}, 2) + testing::PlainInt64({5}));
  w.EndColumn();
  Read r{w.Finish(), nullptr, {}};
  ReadFile(&r);
  Printer p;
  const Status st = AssembleRecords(r.file->schema(), r.rg, "l.parquet", &p);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("row group 0"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace opscope::parquet
