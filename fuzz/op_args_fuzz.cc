// libFuzzer target for the record_shapes args parsers: any bytes, read as one event's args object
// ("Input Dims", "Input type", "Input Strides", "Concrete Inputs") and as an Input Dims text,
// must parse or be refused without a crash, and what parses must keep these invariants:
//   - ParseShapes refused leaves nothing; accepted, its FormatShapes text parses back to the same
//     shapes and prints the same again (the text round-trips);
//   - Parse equals Scan + ParseScanned, with the same key();
//   - the args written back from what was read (FormatShapes, FormatStrings) read back the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/perf/op_args.h"
#include "profiler/input_shapes.h"

namespace {

using opscope::analysis::OpArgs;
using opscope::analysis::OpArgsParser;
using opscope::internal::ArgShape;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckShapesRoundTrip(std::string_view text) {
  std::vector<ArgShape> shapes;
  if (!opscope::internal::ParseShapes(text, &shapes)) {
    Check(shapes.empty());
    return;
  }
  const std::string printed = opscope::internal::FormatShapes(shapes);
  std::vector<ArgShape> again;
  Check(opscope::internal::ParseShapes(printed, &again));
  Check(again == shapes);
  Check(opscope::internal::FormatShapes(again) == printed);
}

bool SameArgs(const OpArgs& a, const OpArgs& b) {
  return a.has_dims == b.has_dims && a.has_types == b.has_types && a.has_strides == b.has_strides &&
         a.has_concrete == b.has_concrete && a.dims == b.dims && a.types == b.types &&
         a.strides == b.strides && a.concrete == b.concrete;
}

// FormatStrings escapes only '"' and '\\': strings with other control characters do not print as
// JSON, so they are left out of the write-back check.
bool Printable(const std::vector<std::string>& strings) {
  for (const std::string& s : strings) {
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20) return false;
    }
  }
  return true;
}

// The args object that prints what `a` holds, in the parser's own formats.
std::string WriteBack(const OpArgs& a) {
  std::string out = "{";
  auto field = [&](bool has, const char* key, const std::string& value) {
    if (!has) return;
    if (out.size() > 1) out += ", ";
    out += '"';
    out += key;
    out += "\": ";
    out += value;
  };
  field(a.has_dims, "Input Dims", opscope::internal::FormatShapes(a.dims));
  field(a.has_types, "Input type", opscope::analysis::FormatStrings(a.types));
  field(a.has_strides, "Input Strides", opscope::internal::FormatShapes(a.strides));
  field(a.has_concrete, "Concrete Inputs", opscope::analysis::FormatStrings(a.concrete));
  return out + "}";
}

void CheckArgs(OpArgsParser& parser, std::string_view text) {
  OpArgs args;
  const bool ok = parser.Parse(text, &args);
  const std::string key(parser.key());
  OpArgs scanned;
  const bool scan_ok = parser.Scan(text) && parser.ParseScanned(&scanned);
  Check(ok == scan_ok);
  if (!ok) return;
  Check(SameArgs(args, scanned) && key == parser.key());
  if (!Printable(args.types) || !Printable(args.concrete)) return;
  OpArgs again;
  Check(parser.Parse(WriteBack(args), &again));
  Check(SameArgs(args, again));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static OpArgsParser parser;  // reused across inputs, as the importer reuses one per thread
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckShapesRoundTrip(input);
  CheckArgs(parser, input);
  return 0;
}
