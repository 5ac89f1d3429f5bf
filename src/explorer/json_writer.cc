#include "explorer/json_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace opscope::explorer {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  uint32_t min = 0;
  if (b < 0x80) return 1;
  if ((b & 0xe0) == 0xc0) {
    len = 2;
    min = 0x80;
  } else if ((b & 0xf0) == 0xe0) {
    len = 3;
    min = 0x800;
  } else if ((b & 0xf8) == 0xf0) {
    len = 4;
    min = 0x10000;
  } else
    return 0;
  if (i + len > s.size()) return 0;
  uint32_t cp = b & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out->append("\xef\xbf\xbd");  // U+FFFD for a byte that is not valid UTF-8
        ++i;
      } else {
        out->append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          fmt::format_to(std::back_inserter(*out), "\\u{:04x}", c);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

void JsonWriter::Open(char c) {
  BeforeValue();
  out_.push_back(c);
  first_.push_back(true);
}

void JsonWriter::Close(char c) {
  out_.push_back(c);
  first_.pop_back();
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, &out_);
  out_.push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(s, &out_);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  const fmt::format_int text(v);  // no allocation, no locale: viewport answers are mostly ints
  out_.append(text.data(), text.size());
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  const fmt::format_int text(v);
  out_.append(text.data(), text.size());
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_.append("null");
    return;
  }
  fmt::format_to(std::back_inserter(out_), "{}", v);
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_.append(v ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
}

void JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json);
}

}  // namespace opscope::explorer
