// Shape arithmetic (shape.h): strides, broadcasting and view strides.
#include "tensor/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "opscope/device.h"
#include "opscope/tensor.h"

namespace opscope {

namespace {

[[noreturn]] void ThrowShapeOverflow(const char* what, std::span<const int64_t> shape) {
  throw TensorError(fmt::format("{} of shape {} overflows int64", what, ShapeToString(shape)));
}

}  // namespace

int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    throw TensorError(fmt::format("{} overflows int64 ({} x {})", what, a, b));
  }
  return out;
}

int64_t ShapeNumel(std::span<const int64_t> shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : shape) overflow |= __builtin_mul_overflow(n, s, &n);
  // A zero dim makes the tensor empty whatever the others are (as in PyTorch).
  if (overflow) {
    if (std::find(shape.begin(), shape.end(), 0) == shape.end()) {
      ThrowShapeOverflow("the number of elements", shape);
    }
    return 0;
  }
  return n;
}

int64_t NumelBytes(int64_t numel, size_t element_size, std::span<const int64_t> shape) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(element_size), &bytes)) {
    ThrowShapeOverflow("the size in bytes", shape);
  }
  return bytes;
}

Shape ContiguousStrides(std::span<const int64_t> shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    if (i > 0 && __builtin_mul_overflow(s, std::max<int64_t>(shape[i], 1), &s)) {
      ThrowShapeOverflow("the strides", shape);
    }
  }
  return strides;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

int64_t NormalizeDim(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) {
    throw TensorError(
        fmt::format("Dimension out of range (expected to be in range of [{}, {}], but got {})", -n,
                    n - 1, dim));
  }
  return dim < 0 ? dim + n : dim;
}

uint32_t ReduceMask(std::span<const int64_t> dims, int64_t ndim) {
  if (ndim > kMaxDims) throw TensorError(fmt::format("tensors have at most {} dims", kMaxDims));
  if (dims.empty()) return ndim == 0 ? 0u : ((1u << ndim) - 1);
  uint32_t mask = 0;
  for (int64_t d : dims) {
    int64_t nd = NormalizeDim(d, ndim);
    if (ndim == 0) continue;
    if (mask & (1u << nd)) {
      throw TensorError(fmt::format("dim {} appears multiple times in the list of dims", nd));
    }
    mask |= 1u << nd;
  }
  return mask;
}

Shape InferSize(std::span<const int64_t> shape, int64_t numel) {
  Shape out(shape.begin(), shape.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer) throw TensorError("only one dimension can be inferred");
      infer = i;
    } else if (out[i] < 0) {
      throw TensorError(fmt::format("invalid shape dimension {}", out[i]));
    } else {
      if (__builtin_mul_overflow(known, out[i], &known)) {
        ThrowShapeOverflow("the number of elements", shape);
      }
    }
  }
  if (infer) {
    if (known != 0 && numel % known == 0) {
      out[*infer] = numel / known;
      return out;
    }
  } else if (known == numel) {
    return out;
  }
  throw TensorError(
      fmt::format("shape '{}' is invalid for input of size {}", ShapeToString(shape), numel));
}

std::optional<Shape> ViewStrides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                                 std::span<const int64_t> new_shape) {
  Shape new_strides(new_shape.size());
  if (sizes.empty()) {  // 0-d: every new dim has size 1
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  const int64_t numel = ShapeNumel(sizes);
  if (numel == 0) {
    if (std::equal(sizes.begin(), sizes.end(), new_shape.begin(), new_shape.end())) {
      return Shape(strides.begin(), strides.end());
    }
    return ContiguousStrides(new_shape);
  }
  // Walk old dims from the back in chunks that are contiguous among themselves (PyTorch's
  // computeStride_impl).
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= sizes[tensor_d];
    if (tensor_d == 0 ||
        (sizes[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = CheckedMul(view_numel, chunk_base_stride, "a view's stride");
        view_numel = CheckedMul(view_numel, new_shape[view_d], "a view's number of elements");
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

Shape ExpandStrides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                    std::span<const int64_t> shape) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t old = static_cast<int64_t>(sizes.size());
  if (ndim < old) {
    throw TensorError(fmt::format(
        "expand: the number of sizes provided ({}) must be greater or equal to the number of "
        "dimensions in the tensor ({})",
        ndim, old));
  }
  Shape out(ndim);
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t j = i - (ndim - old);
    int64_t want = shape[i];
    if (j < 0) {
      if (want < 0) {
        throw TensorError(fmt::format(
            "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing "
            "dimension {}",
            want, i));
      }
      out[i] = 0;
      continue;
    }
    if (want == -1) want = sizes[j];
    if (sizes[j] == want) {
      out[i] = strides[j];
    } else if (sizes[j] == 1) {
      out[i] = 0;
    } else {
      throw TensorError(
          fmt::format("The expanded size of the tensor ({}) must match the existing size ({}) at "
                      "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                      want, sizes[j], i, ShapeToString(shape), ShapeToString(sizes)));
    }
  }
  return out;
}

std::vector<int64_t> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw TensorError(fmt::format(
          "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
          "dimension {}",
          da, db, i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace opscope
