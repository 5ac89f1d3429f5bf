// A minimal JSON text builder for the analyses' ToJson() methods.
//
//   JsonWriter w;
//   w.BeginObject(); w.Key("busy_ns"); w.Int(12); w.EndObject();
//   std::string text = w.Take();
//
// Commas are inserted automatically. Not thread-safe.
#ifndef OPSCOPE_ANALYSIS_JSON_WRITER_H_
#define OPSCOPE_ANALYSIS_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::analysis {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view k);
  void String(std::string_view s);
  void Int(int64_t v);
  void Double(double v);
  void Bool(bool v);
  // Inserts already-valid JSON text as one value.
  void Raw(std::string_view json);
  std::string Take() { return std::move(out_); }

  // Appends `s` JSON-escaped (without quotes) to `out`.
  static void Escape(std::string_view s, std::string* out);

 private:
  void Open(char c);
  void Close(char c);
  void Separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_JSON_WRITER_H_
