// The JSON structure scanner: every kernel this CPU runs gives the answers of a plain byte loop,
// on values that straddle the 16- and 64-byte blocks, with escapes and brackets inside strings;
// nothing is read past the end of unpadded text (exact-size heap buffers, checked under ASan).
#include "base/json_scan.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace opscope::internal {
namespace {

std::vector<JsonScanKernel> Kernels() {
  std::vector<JsonScanKernel> out;
  for (JsonScanKernel k :
       {JsonScanKernel::kGeneric, JsonScanKernel::kAvx2, JsonScanKernel::kAvx512}) {
    if (JsonScanKernelSupported(k)) out.push_back(k);
  }
  return out;
}

// The reference: one byte at a time, the obvious way. One past the container opening at text[0],
// or kJsonNoEnd (unclosed, mismatched, or deeper than max_depth).
size_t ReferenceContainerEnd(const std::string& text, int max_depth) {
  std::vector<char> stack;
  bool in_string = false, escape = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (static_cast<int>(stack.size()) >= max_depth) return kJsonNoEnd;
      stack.push_back(c);
    } else if (c == '}' || c == ']') {
      if (stack.empty() || (c == '}') != (stack.back() == '{')) return kJsonNoEnd;
      stack.pop_back();
      if (stack.empty()) return i + 1;
    }
  }
  return kJsonNoEnd;
}

// Exact-size copy on the heap: a read past its end is a heap overflow ASan reports.
std::unique_ptr<char[]> Exact(const std::string& s) {
  auto p = std::make_unique<char[]>(s.size());
  std::copy(s.begin(), s.end(), p.get());
  return p;
}

size_t ScanEnd(JsonScanKernel kernel, const std::string& text, int max_depth) {
  auto p = Exact(text);
  std::vector<char> stack(static_cast<size_t>(max_depth));
  stack[0] = text[0];
  const ContainerScan r =
      ScanContainer(kernel, p.get(), 1, text.size(), stack.data(), max_depth, 1);
  return r.what == ContainerScan::kComplete ? r.at : kJsonNoEnd;
}

TEST(JsonScanTest, HandWrittenValues) {
  struct Case {
    std::string text;
    size_t end;
  };
  const std::vector<Case> cases = {
      {R"({})", 2},
      {R"({"a": [1, 2, {"b": "}]"}]} tail)", 26},
      {R"(["\"]", "\\"], 1)", 13},
      {R"({"k": "a\\\"}"}x)", 15},
      {R"([[[]]])", 6},
      {R"({"a": [})", kJsonNoEnd},  // mismatched
      {R"({"a": "})", kJsonNoEnd},  // ends inside a string
      {R"({"a": 1)", kJsonNoEnd},   // not closed
  };
  for (JsonScanKernel k : Kernels()) {
    for (const Case& c : cases) {
      EXPECT_EQ(ScanEnd(k, c.text, 64), c.end) << c.text;
      EXPECT_EQ(JsonValueEnd(c.text, 0), c.end) << c.text;
    }
  }
}

TEST(JsonScanTest, ErrorsSayWhatAndWhere) {
  for (JsonScanKernel k : Kernels()) {
    const std::string mismatch = std::string(100, ' ').insert(0, "{\"a\": [1, 2}");
    auto p = Exact(mismatch);
    char stack[8] = {'{'};
    ContainerScan r = ScanContainer(k, p.get(), 1, mismatch.size(), stack, 8, 1);
    EXPECT_EQ(r.what, ContainerScan::kMismatch);
    EXPECT_EQ(r.at, mismatch.find('}'));
    EXPECT_EQ(stack[r.depth - 1], '[');

    const std::string deep = "[[[[[[[[[[]]]]]]]]]]";
    auto q = Exact(deep);
    stack[0] = '[';
    r = ScanContainer(k, q.get(), 1, deep.size(), stack, 8, 1);
    EXPECT_EQ(r.what, ContainerScan::kTooDeep);
    EXPECT_EQ(r.at, 8u);

    const std::string cut = "{\"a\": \"" + std::string(200, 'x');
    auto c = Exact(cut);
    stack[0] = '{';
    r = ScanContainer(k, c.get(), 1, cut.size(), stack, 8, 1);
    EXPECT_EQ(r.what, ContainerScan::kIncomplete);
    EXPECT_TRUE(r.in_string);
    EXPECT_EQ(r.depth, 1);
  }
}

// A random JSON value: strings full of escaped quotes, backslashes and brackets, nested arrays and
// objects, numbers.
std::string RandomValue(std::mt19937& rng, int depth) {
  switch (depth >= 8 ? rng() % 3 : rng() % 5) {
    case 0:
      return std::to_string(rng() % 100000);
    case 1: {
      static const char* const kParts[] = {"a", "\\\"", "\\\\", "{",   "}",
                                           "[", "]",    " ",    "xyz", ","};
      std::string s = "\"";
      for (unsigned n = rng() % 40; n > 0; --n) s += kParts[rng() % std::size(kParts)];
      return s + "\"";
    }
    case 2:
      return "null";
    case 3: {
      std::string s = "[";
      for (unsigned n = rng() % 5; n > 0; --n)
        s += RandomValue(rng, depth + 1) + (n > 1 ? ", " : "");
      return s + "]";
    }
    default: {
      std::string s = "{";
      for (unsigned n = rng() % 5; n > 0; --n) {
        s += "\"k\": " + RandomValue(rng, depth + 1) + (n > 1 ? ", " : "");
      }
      return s + "}";
    }
  }
}

// Random containers, complete, cut short, or with one bracket changed, at every length up to a
// few blocks: each kernel must agree with the reference, including on where nesting is too deep.
TEST(JsonScanTest, KernelsAgreeWithTheReferenceOnRandomValues) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text = rng() % 2 ? "[" : "{\"k\": ";
    text += RandomValue(rng, 1) + (text[0] == '[' ? "]" : "}");
    if (rng() % 3 == 0) text.resize(1 + rng() % text.size());
    if (rng() % 4 == 0) {
      const size_t at = text.find_first_of("{}[]", rng() % text.size());
      if (at != std::string::npos && at > 0) text[at] = "{}[]"[rng() % 4];
    }
    text += std::string(rng() % 70, ' ');
    for (int max_depth : {6, 64}) {
      const size_t expected = ReferenceContainerEnd(text, max_depth);
      for (JsonScanKernel k : Kernels()) {
        ASSERT_EQ(ScanEnd(k, text, max_depth), expected) << text;
      }
    }
    ASSERT_EQ(JsonValueEnd(text, 0), ReferenceContainerEnd(text, 1 << 20)) << text;
  }
}

TEST(JsonScanTest, CompleteValuesAtEveryLengthAndAlignment) {
  for (size_t pad = 0; pad < 140; ++pad) {
    const std::string body = "{\"name\": \"" + std::string(pad, 'n') + "\\\"}\", \"v\": [1, {}]}";
    for (JsonScanKernel k : Kernels()) {
      ASSERT_EQ(ScanEnd(k, body, 64), body.size()) << pad;
    }
    ASSERT_EQ(JsonValueEnd(body, 0), body.size());
    // Cut anywhere: never complete, never a read past the end.
    for (size_t cut = 1; cut < body.size(); cut += 7) {
      ASSERT_EQ(JsonValueEnd(body.substr(0, cut), 0), kJsonNoEnd);
    }
  }
}

TEST(JsonScanTest, StringsAndScalars) {
  const std::string s = R"("a\"b\\" rest)";
  auto p = Exact(s);
  EXPECT_EQ(JsonStringEnd(p.get(), 1, s.size()), 8u);
  EXPECT_EQ(JsonStringEnd(p.get(), 1, 7), kJsonNoEnd);  // ends on the escaped backslash
  EXPECT_EQ(JsonStringEnd(p.get(), 1, 3), kJsonNoEnd);  // ends right after a backslash
  EXPECT_EQ(JsonValueEnd(s, 0), 8u);
  EXPECT_EQ(JsonValueEnd("12.5e3,", 0), 6u);
  EXPECT_EQ(JsonValueEnd("true", 0), 4u);
  EXPECT_EQ(JsonValueEnd("[1] ", 1), 2u);
  EXPECT_EQ(JsonValueEnd("}", 0), kJsonNoEnd);
  EXPECT_EQ(JsonValueEnd("", 0), kJsonNoEnd);
  EXPECT_EQ(JsonValueEnd("1", 5), kJsonNoEnd);
  // Deeper than JsonValueEnd's own stack: still found.
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(JsonValueEnd(deep, 0), deep.size());
}

}  // namespace
}  // namespace opscope::internal
