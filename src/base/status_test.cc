// Status: ok is empty and cheap; errors keep code, message, file and offset through copies and
// moves; InFile names the file once.
#include "opscope/status.h"

#include <gtest/gtest.h>

#include <utility>

namespace opscope {
namespace {

TEST(StatusTest, OkHoldsNothing) {
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kOk);
  EXPECT_EQ(st.message(), "");
  EXPECT_EQ(st.file(), "");
  EXPECT_EQ(st.offset(), 0u);
  EXPECT_EQ(st.ToString(), "OK");
  EXPECT_EQ(sizeof(Status), sizeof(void*));
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, InputErrorKeepsWhatAndWhere) {
  Status st = Status::InvalidInput("byte 17: expected ',' or ']'", 17);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.offset(), 17u);
  EXPECT_EQ(st.file(), "");
  EXPECT_EQ(st.ToString(), "invalid input: byte 17: expected ',' or ']'");

  Status named = std::move(st).InFile("run/trace.json");
  EXPECT_EQ(named.message(), "run/trace.json: byte 17: expected ',' or ']'");
  EXPECT_EQ(named.file(), "run/trace.json");
  EXPECT_EQ(named.offset(), 17u);
  EXPECT_TRUE(Status::Ok().InFile("x.json").ok());
}

TEST(StatusTest, CopiesAreDeepAndMovesEmptyTheSource) {
  Status a = Status::IoError("cannot write out.json: Permission denied", "out.json");
  Status b = a;
  EXPECT_EQ(b.message(), a.message());
  EXPECT_EQ(b.file(), "out.json");
  EXPECT_EQ(b.code(), Status::Code::kIoError);
  Status c = std::move(a);
  EXPECT_EQ(c.message(), b.message());
  a = c;
  EXPECT_EQ(a.message(), c.message());
  a = Status::Ok();
  EXPECT_TRUE(a.ok());
  EXPECT_FALSE(c.ok());
}

TEST(StatusTest, EveryCodeHasAName) {
  EXPECT_EQ(Status::NotFound("x").ToString(), "not found: x");
  EXPECT_EQ(Status::InvalidArgument("x").ToString(), "invalid argument: x");
  EXPECT_EQ(Status::Unavailable("x").ToString(), "unavailable: x");
  EXPECT_EQ(Status::IoError("x").code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace opscope
