// Shape arithmetic shared by the tensor runtime: dims, strides, broadcasting, view strides.
// All functions throw TensorError with PyTorch's wording on bad input.
#ifndef OPSCOPE_SRC_TENSOR_SHAPE_H_
#define OPSCOPE_SRC_TENSOR_SHAPE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opscope {

using Shape = std::vector<int64_t>;

// Every size computation below is checked: a product that does not fit int64 throws TensorError
// naming the shape, never wraps around.
int64_t ShapeNumel(std::span<const int64_t> shape);
// Bytes of `numel` elements of `element_size` bytes (throws past int64).
int64_t NumelBytes(int64_t numel, size_t element_size, std::span<const int64_t> shape);
// a * b, throwing TensorError "`what` overflows int64 (a x b)" when it does not fit int64.
int64_t CheckedMul(int64_t a, int64_t b, const char* what);
// Row-major strides for `shape` (size-1 and size-0 dims get the stride they would have).
Shape ContiguousStrides(std::span<const int64_t> shape);
// "[2, 3]".
std::string ShapeToString(std::span<const int64_t> shape);
// Wraps a possibly negative dim into [0, ndim); a 0-d tensor accepts -1 and 0.
int64_t NormalizeDim(int64_t dim, int64_t ndim);
// Normalized, sorted reduce dims as a bit mask (empty `dims` = every dim).
uint32_t ReduceMask(std::span<const int64_t> dims, int64_t ndim);
// Replaces one -1 in `shape` so that it holds `numel` elements.
Shape InferSize(std::span<const int64_t> shape, int64_t numel);
// Strides for viewing (sizes, strides) as `new_shape` without a copy, or nullopt when impossible
// (PyTorch's computeStride).
std::optional<Shape> ViewStrides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                 std::span<const int64_t> new_shape);
// Strides of `sizes/strides` expanded to `shape` (stride 0 on broadcast dims). Throws with
// PyTorch's expand message when impossible.
Shape ExpandStrides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                    std::span<const int64_t> shape);

}  // namespace opscope

#endif  // OPSCOPE_SRC_TENSOR_SHAPE_H_
