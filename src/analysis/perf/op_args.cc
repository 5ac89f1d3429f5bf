// Parsing of the record_shapes args (see op_args.h), with simdjson's DOM parser.
#include "analysis/perf/op_args.h"

#include <simdjson.h>

#include <cstring>

namespace opscope::analysis {
namespace {

using simdjson::dom::element;

// ["float", "Scalar", ""] -> strings; non-string items become "".
bool ReadStrings(element value, std::vector<std::string>* out) {
  simdjson::dom::array a;
  if (value.get_array().get(a) != simdjson::SUCCESS) return false;
  for (element item : a) {
    std::string_view s;
    if (item.get_string().get(s) == simdjson::SUCCESS) {
      out->emplace_back(s);
    } else {
      out->emplace_back();
    }
  }
  return true;
}

}  // namespace

std::string FormatStrings(const std::vector<std::string>& strings) {
  std::string out = "[";
  for (size_t i = 0; i < strings.size(); ++i) {
    if (i) out += ", ";
    out += '"';
    for (char c : strings[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

struct OpArgsParser::Impl {
  simdjson::dom::parser parser;
  std::string buffer;  // the values as one JSON array, plus simdjson's padding
};

OpArgsParser::OpArgsParser() : impl_(std::make_unique<Impl>()) {}
OpArgsParser::~OpArgsParser() = default;

namespace {

constexpr std::string_view kKeys[4] = {"Input Dims", "Input type", "Input Strides",
                                       "Concrete Inputs"};

size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  return i;
}

// One past the string starting at s[i] == '"', or npos. A quote preceded by an odd number of
// backslashes is escaped.
size_t StringEnd(std::string_view s, size_t i) {
  for (size_t q = i + 1; q < s.size(); ++q) {
    const void* hit = std::memchr(s.data() + q, '"', s.size() - q);
    if (hit == nullptr) return std::string_view::npos;
    q = static_cast<size_t>(static_cast<const char*>(hit) - s.data());
    size_t backslashes = 0;
    while (q - backslashes > i + 1 && s[q - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return q + 1;
  }
  return std::string_view::npos;
}

// One past the JSON value starting at s[i], or npos.
size_t ValueEnd(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return StringEnd(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        i = StringEnd(s, i);
        if (i == std::string_view::npos) return i;
        --i;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\t' && s[i] != '\r') {
    ++i;
  }
  return i;
}

}  // namespace

bool OpArgsParser::Scan(std::string_view s) {
  for (auto& span : spans_) span = {};
  key_.clear();
  size_t i = SkipWs(s, 0);
  if (i >= s.size() || s[i] != '{') return false;
  i = SkipWs(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = StringEnd(s, i);
    if (key_end == std::string_view::npos) return false;
    const std::string_view k = s.substr(i + 1, key_end - i - 2);
    i = SkipWs(s, key_end);
    if (i >= s.size() || s[i] != ':') return false;
    i = SkipWs(s, i + 1);
    const size_t value_end = ValueEnd(s, i);
    if (value_end == std::string_view::npos) return false;
    for (int k_index = 0; k_index < 4; ++k_index) {
      if (k == kKeys[k_index]) spans_[k_index] = s.substr(i, value_end - i);
    }
    i = SkipWs(s, value_end);
    if (i < s.size() && s[i] == ',') i = SkipWs(s, i + 1);
  }
  if (i >= s.size() || s[i] != '}') return false;
  for (const std::string_view span : spans_) {
    key_ += span;
    key_ += '\x1f';
  }
  return true;
}

bool OpArgsParser::ParseScanned(OpArgs* out) {
  *out = OpArgs();
  Impl& m = *impl_;
  m.buffer.clear();
  m.buffer.push_back('[');
  for (int k = 0; k < 4; ++k) {
    if (k) m.buffer += ',';
    m.buffer += spans_[k].empty() ? std::string_view("null") : spans_[k];
  }
  m.buffer += ']';
  const size_t len = m.buffer.size();
  m.buffer.resize(len + simdjson::SIMDJSON_PADDING);
  element doc;
  if (m.parser.parse(m.buffer.data(), len, false).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::array values;
  if (doc.get_array().get(values) != simdjson::SUCCESS) return false;
  int k = 0;
  for (element v : values) {
    if (!spans_[k].empty()) {
      switch (k) {
        case 0:  // the value's text, valid JSON here: the one shape parser reads it
          out->has_dims = internal::ParseShapes(spans_[k], &out->dims);
          break;
        case 1:
          out->has_types = ReadStrings(v, &out->types);
          break;
        case 2:
          out->has_strides = internal::ParseShapes(spans_[k], &out->strides);
          break;
        default:
          out->has_concrete = ReadStrings(v, &out->concrete);
      }
    }
    ++k;
  }
  return true;
}

bool OpArgsParser::Parse(std::string_view args_json, OpArgs* out) {
  *out = OpArgs();
  return Scan(args_json) && ParseScanned(out);
}

}  // namespace opscope::analysis
