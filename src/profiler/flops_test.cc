// FlopsFromShapes against the figures torch 1.13's profiler printed (with_flops=True,
// record_shapes=True) for the same ops and shapes.
#include "profiler/flops.h"

#include <gtest/gtest.h>

namespace opscope::internal {
namespace {

TEST(FlopsTest, MatchesTorch) {
  // torch: addmm 8192, mm 8192, bmm 240, baddbmm 240, mul 128, add 128, conv2d 10800.
  EXPECT_EQ(FlopsFromShapes("aten::addmm", "[[32], [8, 16], [16, 32], [], []]"), 8192);
  EXPECT_EQ(FlopsFromShapes("aten::mm", "[[8, 16], [16, 32]]"), 8192);
  EXPECT_EQ(FlopsFromShapes("aten::bmm", "[[2, 3, 4], [2, 4, 5]]"), 240);
  EXPECT_EQ(FlopsFromShapes("aten::baddbmm", "[[2, 3, 5], [2, 3, 4], [2, 4, 5], [], []]"), 240);
  EXPECT_EQ(FlopsFromShapes("aten::mul", "[[8, 16], []]"), 128);
  EXPECT_EQ(FlopsFromShapes("aten::add", "[[8, 16], [8, 16], []]"), 128);
  EXPECT_EQ(FlopsFromShapes("aten::conv2d", "[[2, 3, 10, 10], [4, 3, 3, 3], [], [], [], [], []]",
                            R"(["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])"),
            10800);
  // Ops torch 1.13 does not count, and shapes that do not say.
  EXPECT_EQ(FlopsFromShapes("aten::mul_", "[[8, 16], []]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::matmul", "[[8, 16], [16, 32]]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::conv2d", "[[2, 3, 10, 10], [4, 3, 3, 3]]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::mm", "[[8, 0], [0, 32]]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::mm", "[[8, 16]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::mm", "not json"), 0);
}

TEST(FlopsTest, TensorListsAndNullsCountNothing) {
  // The Input Dims text is read by ParseShapes (input_shapes_test.cc); a TensorList has no
  // formula here, and an absent optional reads as [].
  EXPECT_EQ(FlopsFromShapes("aten::mm", "[[[8, 16]], [16, 32]]"), 0);
  EXPECT_EQ(FlopsFromShapes("aten::mul", "[[8, 16], null]"), 128);
  EXPECT_EQ(FlopsFromShapes("aten::mm", "[[8, x], [16, 32]]"), 0);
}

}  // namespace
}  // namespace opscope::internal
