// Input Dims / Input Strides text (see input_shapes.h).
#include "profiler/input_shapes.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace opscope::internal {
namespace {

// A cursor over the text; each Read* advances past what it read, or returns false.
class ShapeText {
 public:
  explicit ShapeText(std::string_view s) : s_(s) {}

  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }
  // Consumes `c` (after whitespace) when it is next.
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool EatNull() {
    SkipSpace();
    if (s_.substr(i_, 4) != "null") return false;
    i_ += 4;
    return true;
  }

  // "[1, 2, 3]" or "[]".
  bool ReadSizes(std::vector<int64_t>* out) {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    do {
      int64_t v = 0;
      if (!ReadNumber(&v)) return false;
      out->push_back(v);
    } while (Eat(','));
    return Eat(']');
  }

  // One item of the outer list: a tensor's sizes, a TensorList's or null.
  bool ReadShape(ArgShape* out) {
    if (EatNull()) return true;
    const size_t start = i_;
    if (!Eat('[')) return false;
    if (!Peek('[')) {  // a tensor: read the list again as sizes
      i_ = start;
      return ReadSizes(&out->sizes);
    }
    out->is_list = true;
    do {
      out->list.emplace_back();
      if (!ReadSizes(&out->list.back())) return false;
    } while (Eat(','));
    return Eat(']');
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) {
      ++i_;
    }
  }

  // A JSON number; an integer as it is, anything else truncated toward zero.
  bool ReadNumber(int64_t* out) {
    SkipSpace();
    size_t end = i_;
    bool integer = true;
    while (end < s_.size()) {
      const char c = s_[end];
      if (c == '.' || c == 'e' || c == 'E' || c == '+') {
        integer = false;
      } else if (!(c == '-' || (c >= '0' && c <= '9'))) {
        break;
      }
      ++end;
    }
    const char* first = s_.data() + i_;
    const char* last = s_.data() + end;
    if (first == last) return false;
    if (integer) {
      auto [p, ec] = std::from_chars(first, last, *out);
      if (ec == std::errc() && p == last) {
        i_ = end;
        return true;
      }
      if (ec != std::errc::result_out_of_range) return false;
    }
    double d = 0;
    auto [p, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || p != last || !std::isfinite(d)) return false;
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    *out = d >= kLimit ? INT64_MAX : d < -kLimit ? INT64_MIN : static_cast<int64_t>(d);
    i_ = end;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

void AppendSizes(const std::vector<int64_t>& sizes, std::string* out) {
  *out += '[';
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) *out += ", ";
    *out += std::to_string(sizes[i]);
  }
  *out += ']';
}

bool ReadShapes(ShapeText& t, std::vector<ArgShape>* out) {
  if (!t.Eat('[')) return false;
  if (t.Eat(']')) return t.AtEnd();
  do {
    ArgShape shape;
    if (!t.ReadShape(&shape)) return false;
    out->push_back(std::move(shape));
  } while (t.Eat(','));
  return t.Eat(']') && t.AtEnd();
}

}  // namespace

bool ParseShapes(std::string_view text, std::vector<ArgShape>* out) {
  out->clear();
  ShapeText t(text);
  if (ReadShapes(t, out)) return true;
  out->clear();
  return false;
}

std::string FormatShapes(const std::vector<ArgShape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    if (shapes[i].is_list) {
      out += '[';
      for (size_t j = 0; j < shapes[i].list.size(); ++j) {
        if (j) out += ", ";
        AppendSizes(shapes[i].list[j], &out);
      }
      out += ']';
    } else {
      AppendSizes(shapes[i].sizes, &out);
    }
  }
  return out + "]";
}

}  // namespace opscope::internal
