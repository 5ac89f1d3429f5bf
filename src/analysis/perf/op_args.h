// The record_shapes arguments of one framework op, as PyTorch's profiler writes them in an
// event's args: "Input Dims", "Input type", "Input Strides" and "Concrete Inputs".
//
//   OpArgs a;
//   if (ParseOpArgs(R"({"Input Dims": [[2, 3], []], "Input type": ["float", "Scalar"]})", &a)) {
//     a.dims[0].sizes  -> {2, 3};   a.types[1] -> "Scalar"
//   }
//
// Thread safety: pure functions; an OpArgsParser is one thread's scratch state.
#ifndef OPSCOPE_ANALYSIS_PERF_OP_ARGS_H_
#define OPSCOPE_ANALYSIS_PERF_OP_ARGS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/input_shapes.h"

namespace opscope::analysis {

// ArgShape, ParseShapes and FormatShapes: the one reader and printer of Input Dims / Input
// Strides text, shared with the profiler's FLOPs count (profiler/input_shapes.h).
using internal::ArgShape;
using internal::FormatShapes;

struct OpArgs {
  std::vector<ArgShape> dims;         // "Input Dims"
  std::vector<std::string> types;     // "Input type" ("float", "c10::BFloat16", "Scalar", "")
  std::vector<ArgShape> strides;      // "Input Strides"
  std::vector<std::string> concrete;  // "Concrete Inputs" ("", "[768]", "True", "0.125")
  bool has_dims = false, has_types = false, has_strides = false, has_concrete = false;
};

// Text of a string list as JSON: ["float", "Scalar"].
std::string FormatStrings(const std::vector<std::string>& strings);

// Parses args objects. Keeps a parser and a padded buffer across calls (cheap per op).
class OpArgsParser {
 public:
  OpArgsParser();
  ~OpArgsParser();
  OpArgsParser(const OpArgsParser&) = delete;
  OpArgsParser& operator=(const OpArgsParser&) = delete;

  // Reads the four keys from `args_json` (one event's args object). A key that is missing or
  // whose value is not the expected kind is left absent (has_* false). Returns false when the
  // text is not a JSON object.
  bool Parse(std::string_view args_json, OpArgs* out);

  // The same in two steps, so that ops with args already seen are not parsed again: Scan finds
  // the four values' text (false when `args_json` is not an object) and sets key(); Parse of
  // the scanned values reads them. `args_json` must stay alive in between.
  bool Scan(std::string_view args_json);
  bool ParseScanned(OpArgs* out);
  // The four values' texts as recorded, joined: identifies an op's args without the per-event
  // keys (External id, Ev Idx, ...). Valid after Scan or Parse.
  std::string_view key() const { return key_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string_view spans_[4];  // raw value texts of the four keys; empty when absent
  std::string key_;
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_OP_ARGS_H_
