// The streaming JSON writer (json_writer.h): numbers, strings and nesting into one buffer.
#include "base/json_writer.h"

#include <fmt/format.h>

#include <cmath>

#include "base/json_escape.h"

namespace opscope {

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
  internal::AppendJsonString(out_, key);
  out_.push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  internal::AppendJsonString(out_, s);
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

}  // namespace opscope
