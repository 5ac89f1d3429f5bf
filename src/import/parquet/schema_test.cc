// Schemas built from footer elements: levels, paths, and the LIST / MAP rules of LogicalTypes.md
// with their backward-compatibility forms; malformed trees refused.
#include "import/parquet/schema.h"

#include <gtest/gtest.h>

#include "import/parquet/parquet_test_writer.h"
#include "import/parquet/thrift_decode.h"

namespace opscope::parquet {
namespace {

using testing::Group;
using testing::Leaf;
using testing::Root;
using R = ::parquet::FieldRepetitionType;
using T = ::parquet::Type;
using C = ::parquet::ConvertedType;

Schema Build(const std::vector<::parquet::SchemaElement>& e) {
  Schema s;
  EXPECT_EQ(BuildSchema(e, &s), "");
  return s;
}

TEST(SchemaTest, LevelsAndPaths) {
  const Schema s =
      Build({Root(2), Leaf("id", T::INT64, R::REQUIRED), Group("a", R::OPTIONAL, 1, C::LIST),
             Group("list", R::REPEATED, 1), Leaf("element", T::BYTE_ARRAY, R::OPTIONAL)});
  ASSERT_EQ(s.num_columns(), 2);
  EXPECT_EQ(s.column(0).path, "id");
  EXPECT_EQ(s.column(0).max_def, 0);
  const ColumnDescriptor& e = s.column(1);
  EXPECT_EQ(e.path, "a.list.element");
  EXPECT_EQ(e.path_parts, (std::vector<std::string>{"a", "list", "element"}));
  EXPECT_EQ(e.max_def, 3);
  EXPECT_EQ(e.max_rep, 1);
  EXPECT_EQ(s.FindColumn("a.list.element"), 1);
  EXPECT_EQ(s.FindColumn("a.list"), -1);
  const SchemaNode& a = s.node(2);
  EXPECT_EQ(a.nesting, Nesting::kList);
  EXPECT_EQ(a.list_element, 4);  // the standard 3-level form: the repeated group's child
  EXPECT_EQ(s.ListOf(e.node), 2);
  EXPECT_EQ(s.ColumnsUnder(0), (std::vector<int>{0, 1}));
}

TEST(SchemaTest, LegacyListForms) {
  // 2-level: the repeated field is the element (a primitive; a group of several fields; a group
  // of one field named "array" or "<list>_tuple").
  const Schema s =
      Build({Root(4), Group("p", R::OPTIONAL, 1, C::LIST), Leaf("item", T::INT32, R::REPEATED),
             Group("m", R::OPTIONAL, 1, C::LIST), Group("pair", R::REPEATED, 2),
             Leaf("x", T::INT32, R::REQUIRED), Leaf("y", T::INT32, R::REQUIRED),
             Group("a", R::OPTIONAL, 1, C::LIST), Group("array", R::REPEATED, 1),
             Leaf("z", T::INT32, R::REQUIRED), Group("t", R::OPTIONAL, 1, C::LIST),
             Group("t_tuple", R::REPEATED, 1), Leaf("w", T::INT32, R::REQUIRED)});
  EXPECT_EQ(s.node(1).list_element, 2);
  EXPECT_EQ(s.node(3).list_element, 4);
  EXPECT_EQ(s.node(7).list_element, 8);
  EXPECT_EQ(s.node(10).list_element, 11);
  EXPECT_EQ(s.column(0).max_def, 2);  // p.item: p optional, item repeated
  EXPECT_EQ(s.column(0).max_rep, 1);
}

TEST(SchemaTest, MapsAndPlainStructs) {
  const Schema s =
      Build({Root(2), Group("m", R::OPTIONAL, 1, C::MAP), Group("key_value", R::REPEATED, 2),
             Leaf("key", T::BYTE_ARRAY, R::REQUIRED), Leaf("value", T::INT32, R::OPTIONAL),
             Group("st", R::REQUIRED, 1), Leaf("f", T::DOUBLE, R::OPTIONAL)});
  const SchemaNode& m = s.node(1);
  EXPECT_EQ(m.nesting, Nesting::kMap);
  EXPECT_EQ(m.map_key, 3);
  EXPECT_EQ(m.map_value, 4);
  EXPECT_EQ(s.node(2).nesting, Nesting::kStruct);
  EXPECT_EQ(s.node(5).nesting, Nesting::kStruct);
  EXPECT_EQ(s.column(1).max_def, 3);
  EXPECT_EQ(s.column(2).max_def, 1);
  EXPECT_EQ(s.column(2).max_rep, 0);
}

TEST(SchemaTest, MalformedTreesAreRefused) {
  Schema s;
  EXPECT_NE(BuildSchema({}, &s), "");
  EXPECT_NE(BuildSchema({Root(3), Leaf("a", T::INT32, R::REQUIRED)}, &s), "");
  ::parquet::SchemaElement no_type;
  no_type.__set_name("x");
  EXPECT_NE(BuildSchema({Root(1), no_type}, &s), "");
  EXPECT_NE(BuildSchema({Root(1), Leaf("f", T::FIXED_LEN_BYTE_ARRAY, R::REQUIRED)}, &s), "");
  std::vector<::parquet::SchemaElement> deep = {Root(1)};
  for (int i = 0; i < 150; ++i) deep.push_back(Group("g", R::OPTIONAL, 1));
  deep.push_back(Leaf("x", T::INT32, R::OPTIONAL));
  EXPECT_NE(BuildSchema(deep, &s).find("deeper"), std::string::npos);
}

}  // namespace
}  // namespace opscope::parquet
