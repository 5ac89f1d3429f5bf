// Tests of JSON string escaping: control characters, quotes, invalid UTF-8.
#include "base/json_escape.h"

#include <gtest/gtest.h>

namespace opscope::internal {
namespace {

TEST(JsonEscapeTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(JsonString(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  EXPECT_EQ(JsonString("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
}

TEST(JsonEscapeTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonString("\xce\xbc s"), "\"\xce\xbc s\"");              // U+03BC
  EXPECT_EQ(JsonString("\xf0\x9f\x94\xa5"), "\"\xf0\x9f\x94\xa5\"");  // 4-byte
  EXPECT_EQ(JsonString("a\xff"
                       "b"),
            "\"a\xef\xbf\xbd"
            "b\"");                                                   // stray byte
  EXPECT_EQ(JsonString("\xc3"), "\"\xef\xbf\xbd\"");                  // truncated
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");  // overlong '/'
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");  // surrogate
}

TEST(JsonEscapeTest, Utf8LengthAndPrefixCountCodePoints) {
  EXPECT_EQ(Utf8Length("abc"), 3u);
  EXPECT_EQ(Utf8Length("\xce\xbc\xce\xbcx"), 3u);
  EXPECT_EQ(Utf8Prefix("\xce\xbc\xce\xbcx", 1), "\xce\xbc");
  EXPECT_EQ(Utf8Prefix("abc", 10), "abc");
}

}  // namespace
}  // namespace opscope::internal
