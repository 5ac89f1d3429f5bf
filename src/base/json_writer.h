// A small streaming JSON writer for everything opscope writes as JSON (API answers, reports).
//
//   JsonWriter w;
//   w.BeginObject(); w.Key("name"); w.String("aten::mul"); w.Key("ts"); w.Int(1000); w.EndObject();
//   std::string body = w.Take();
//
// Strings are escaped per RFC 8259 (quotes, backslash, control characters; invalid UTF-8 bytes are
// replaced with U+FFFD so the output always parses). Non-finite doubles are written as null.
// Not thread-safe; one writer per answer.
#ifndef OPSCOPE_BASE_JSON_WRITER_H_
#define OPSCOPE_BASE_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();
  // Writes already-valid JSON text as one value.
  void Raw(std::string_view json);

  // Key + value shorthands.
  void Field(std::string_view key, std::string_view s) {
    Key(key);
    String(s);
  }
  void Field(std::string_view key, const char* s) {
    Key(key);
    String(s);
  }
  void Field(std::string_view key, int64_t v) {
    Key(key);
    Int(v);
  }
  void Field(std::string_view key, int v) {
    Key(key);
    Int(v);
  }
  void Field(std::string_view key, uint32_t v) {
    Key(key);
    Int(v);
  }
  void Field(std::string_view key, uint64_t v) {
    Key(key);
    Uint(v);
  }
  void Field(std::string_view key, double v) {
    Key(key);
    Double(v);
  }
  void Field(std::string_view key, bool v) {
    Key(key);
    Bool(v);
  }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace opscope

#endif  // OPSCOPE_BASE_JSON_WRITER_H_
