// ParseShapes / FormatShapes on Input Dims and Input Strides texts as PyTorch writes them.
#include "profiler/input_shapes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace opscope::internal {
namespace {

std::vector<ArgShape> Parse(std::string_view text) {
  std::vector<ArgShape> out;
  EXPECT_TRUE(ParseShapes(text, &out)) << text;
  return out;
}

ArgShape Tensor(std::vector<int64_t> sizes) {
  ArgShape shape;
  shape.sizes = std::move(sizes);
  return shape;
}

TEST(InputShapesTest, ReadsTensorsScalarsListsAndNulls) {
  // aten::cat's Input Dims: a TensorList, then the scalar dim.
  std::vector<ArgShape> cat = Parse("[[[2, 3], [4, 3]], []]");
  ASSERT_EQ(cat.size(), 2u);
  EXPECT_TRUE(cat[0].is_list);
  EXPECT_EQ(cat[0].list, (std::vector<std::vector<int64_t>>{{2, 3}, {4, 3}}));
  EXPECT_TRUE(cat[1].empty());
  EXPECT_EQ(Parse("[[8, 16], [], [16, 4]]"),
            (std::vector<ArgShape>{Tensor({8, 16}), {}, Tensor({16, 4})}));
  EXPECT_EQ(Parse("[null, [1]]"), (std::vector<ArgShape>{{}, Tensor({1})}));
  EXPECT_EQ(Parse(" [ [ -1 ,2 ] ,\n\t[] ]\r\n"), (std::vector<ArgShape>{Tensor({-1, 2}), {}}));
  EXPECT_TRUE(Parse("[]").empty());
  // A list of empty tensors is a list; an empty item is a scalar.
  EXPECT_TRUE(Parse("[[[]]]")[0].is_list);
  EXPECT_FALSE(Parse("[[]]")[0].is_list);
}

TEST(InputShapesTest, NumbersAsJsonReadsThem) {
  EXPECT_EQ(Parse("[[2.0, 3.9, -1.5, 1e2]]")[0].sizes, (std::vector<int64_t>{2, 3, -1, 100}));
  EXPECT_EQ(Parse("[[9223372036854775807, -9223372036854775808]]")[0].sizes,
            (std::vector<int64_t>{INT64_MAX, INT64_MIN}));
  EXPECT_EQ(Parse("[[18446744073709551615, -1e30]]")[0].sizes,
            (std::vector<int64_t>{INT64_MAX, INT64_MIN}));
}

TEST(InputShapesTest, RejectsWhatIsNotAShapeList) {
  for (std::string_view bad :
       {"",         "[",      "]",          "[[2, 3]",    "[[2, 3]] x", "[[2, x]]",    "[[2,]]",
        "[[, 2]]",  "[2, 3]", "[[1, [2]]]", "[[[1], 2]]", "[[[[1]]]]",  "[\"float\"]", "[[true]]",
        "[[null]]", "{}",     "null",       "[[1e999]]",  "[[1-2]]",    "[[2] [3]]",   "[nul]"}) {
    std::vector<ArgShape> out = {Tensor({7})};
    EXPECT_FALSE(ParseShapes(bad, &out)) << bad;
    EXPECT_TRUE(out.empty()) << bad;
  }
}

TEST(InputShapesTest, FormatsAsPyTorchPrintsAndReadsBack) {
  const std::string text = "[[2, 3], [], [[1], [2, 2]], [-4]]";
  const std::vector<ArgShape> shapes = Parse(text);
  EXPECT_EQ(FormatShapes(shapes), text);
  EXPECT_EQ(FormatShapes(Parse("[null,[ 5 ,6 ]]")), "[[], [5, 6]]");
  EXPECT_EQ(FormatShapes({}), "[]");
}

}  // namespace
}  // namespace opscope::internal
