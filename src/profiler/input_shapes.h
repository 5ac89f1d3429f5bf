// The shape lists of record_shapes args as PyTorch's profiler writes them, "Input Dims" and
// "Input Strides": one parser and one printer for every layer that reads them (the profiler's
// FLOPs count, the analyses' op args).
//
//   std::vector<ArgShape> shapes;
//   if (ParseShapes("[[2, 3], [], [[1], [2]]]", &shapes)) {
//     shapes[0].sizes -> {2, 3};   shapes[1].empty() -> true;   shapes[2].list -> {{1}, {2}}
//     FormatShapes(shapes) -> "[[2, 3], [], [[1], [2]]]"
//   }
//
// Thread safety: pure functions.
#ifndef OPSCOPE_PROFILER_INPUT_SHAPES_H_
#define OPSCOPE_PROFILER_INPUT_SHAPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::internal {

// One entry of "Input Dims" / "Input Strides": a tensor's sizes ([2, 3]), nothing ([] for a
// scalar or an absent optional), or the sizes of each tensor of a TensorList ([[2, 3], [4]]).
struct ArgShape {
  std::vector<int64_t> sizes;              // a tensor's sizes; empty for [] and for lists
  std::vector<std::vector<int64_t>> list;  // a TensorList's tensors' sizes
  bool is_list = false;
  bool empty() const { return !is_list && sizes.empty(); }
  bool operator==(const ArgShape&) const = default;
};

// Reads `text`, a JSON array whose items are each an array of numbers (a tensor), an array of
// arrays of numbers (a TensorList; decided by its first item) or null (an absent optional, read
// as []). A number that is not an integer is truncated toward zero, saturating at int64's range.
// JSON whitespace is allowed between tokens and around the array. Returns false, with `*out`
// empty, for any other text.
bool ParseShapes(std::string_view text, std::vector<ArgShape>* out);

// The text of a shape list as PyTorch prints Input Dims: "[[2, 3], [], [[1], [2]]]". Parsing it
// gives `shapes` back.
std::string FormatShapes(const std::vector<ArgShape>& shapes);

}  // namespace opscope::internal

#endif  // OPSCOPE_PROFILER_INPUT_SHAPES_H_
