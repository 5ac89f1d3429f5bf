// The canonical JSON form of a Parquet file through opscope's reader (see canonical_json.h).
#include "tests/import/parquet/canonical_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "import/parquet/parquet_file.h"
#include "import/parquet/record_assembly.h"

namespace opscope::parquet {
namespace {

// JSON.stringify's escaping: quotes, backslashes and control characters; the rest as is.
void Quote(std::string_view s, std::string* out) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string Int128(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  while (u > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) digits.push_back('-');
  return {digits.rbegin(), digits.rend()};
}

void Hex(std::string_view bytes, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out->push_back('"');
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    out->push_back(kDigits[c >> 4]);
    out->push_back(kDigits[c & 15]);
  }
  out->push_back('"');
}

void Number(double v, std::string* out) {
  if (std::isnan(v)) {
    *out += "\"NaN\"";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else if (v == 0 && std::signbit(v)) {
    *out += "\"-0\"";
  } else {
    *out += JsNumber(v);
  }
}

class JsonSink final : public RecordSink {
 public:
  explicit JsonSink(std::string* out) : out_(out) {}

  void BeginStruct(const SchemaNode&) override {
    Separate();
    out_->push_back('{');
    first_.push_back(true);
  }
  void Field(const SchemaNode& field) override {
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
    Quote(field.name, out_);
    out_->push_back(':');
    after_field_ = true;
  }
  void EndStruct() override {
    first_.pop_back();
    out_->push_back('}');
    if (first_.empty()) out_->push_back('\n');  // a row ends
  }
  void BeginList(const SchemaNode&) override {
    Separate();
    out_->push_back('[');
    first_.push_back(true);
  }
  void EndList() override {
    first_.pop_back();
    out_->push_back(']');
  }
  void Null() override {
    Separate();
    *out_ += "null";
  }
  void Value(const ColumnData& c, int64_t i) override {
    Separate();
    switch (c.type()) {
      case PhysicalType::kBoolean:
        *out_ += c.bools()[i] ? "true" : "false";
        break;
      case PhysicalType::kInt32:
        *out_ += std::to_string(c.int32s()[i]);
        break;
      case PhysicalType::kInt64:
        *out_ += '"' + std::to_string(c.int64s()[i]) + '"';
        break;
      case PhysicalType::kInt96: {
        const Int96 v = c.int96s()[i];
        constexpr int64_t kUnixEpochJulianDay = 2440588;
        constexpr int64_t kNanosPerDay = 86400LL * 1000 * 1000 * 1000;
        const __int128 nanos =
            static_cast<__int128>(int64_t{v.julian_day()} - kUnixEpochJulianDay) * kNanosPerDay +
            static_cast<int64_t>(v.nanos_of_day());
        *out_ += '"' + Int128(nanos) + '"';
        break;
      }
      case PhysicalType::kFloat:
        Number(c.floats()[i], out_);
        break;
      case PhysicalType::kDouble:
        Number(c.doubles()[i], out_);
        break;
      case PhysicalType::kByteArray:
      case PhysicalType::kFixedLenByteArray:
        Hex(c.ByteArray(i), out_);
        break;
    }
  }

 private:
  // A comma before a list's second and later elements (a field's value follows its name).
  void Separate() {
    if (after_field_) {
      after_field_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }

  std::string* out_;
  std::vector<bool> first_;  // per open struct / list: nothing written in it yet
  bool after_field_ = false;
};

void Header(const ParquetFile& file, const std::string& base, std::string* out) {
  *out += "{\"file\":";
  Quote(base, out);
  *out += ",\"rows\":" + std::to_string(file.num_rows()) + ",\"columns\":[";
  for (const ColumnDescriptor& c : file.schema().columns()) {
    if (c.index > 0) out->push_back(',');
    *out += "{\"path\":";
    Quote(c.path, out);
    *out += ",\"type\":\"" + std::string(ToString(c.type)) + "\"";
    if (c.type == PhysicalType::kFixedLenByteArray) {
      *out += ",\"type_length\":" + std::to_string(c.type_length);
    }
    const std::string_view converted = ToString(c.converted_type);
    *out += ",\"converted\":" + (converted.empty() ? "null" : "\"" + std::string(converted) + "\"");
    const LogicalType::Kind k = c.logical_type.kind;
    const std::string_view logical = k == LogicalType::Kind::kUnknown ? "" : ToString(k);
    *out += ",\"logical\":" + (logical.empty() ? "null" : "\"" + std::string(logical) + "\"");
    *out += ",\"max_def\":" + std::to_string(c.max_def) +
            ",\"max_rep\":" + std::to_string(c.max_rep) + "}";
  }
  *out += "]}\n";
}

}  // namespace

std::string JsNumber(double v) {
  // Shortest round-trip digits d1.d2...dk and exponent e: v = 0.d1...dk * 10^n with n = e + 1.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  std::string sign;
  if (s.front() == '-') {
    sign = "-";
    s.remove_prefix(1);
  }
  const size_t e_pos = s.find('e');
  std::string digits;
  for (const char c : s.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  const int exp = std::stoi(std::string(s.substr(e_pos + 1)));
  const int k = static_cast<int>(digits.size());
  const int n = exp + 1;
  // ECMAScript Number::toString.
  if (k <= n && n <= 21) return sign + digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return sign + "0." + std::string(-n, '0') + digits;
  const std::string e = (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  if (k == 1) return sign + digits + e;
  return sign + digits.substr(0, 1) + "." + digits.substr(1) + e;
}

Status CanonicalJson(const std::string& path, const ReadOptions& options, std::string* out) {
  std::unique_ptr<ParquetFile> file;
  if (Status st = ParquetFile::Open(path, &file); !st.ok()) return st;
  out->clear();
  Header(*file, std::filesystem::path(path).filename().string(), out);
  std::vector<int> all(file->schema().num_columns());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  std::vector<std::string> rows(file->num_row_groups());
  Status st = file->ReadRowGroups(all, options, [&](RowGroupData& rg) {
    JsonSink sink(&rows[rg.row_group]);
    return AssembleRecords(file->schema(), rg, file->name(), &sink);
  });
  if (!st.ok()) return st;
  for (const std::string& r : rows) *out += r;
  return Status::Ok();
}

}  // namespace opscope::parquet
