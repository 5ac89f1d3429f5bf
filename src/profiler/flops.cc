// FLOPs of ATen ops from their input shapes (flops.h), as torch.profiler's with_flops counts them.
#include "profiler/flops.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/input_shapes.h"

namespace opscope::internal {
namespace {

using Dims = std::vector<int64_t>;

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  return i;
}

// One "[a, b, ...]" at s[i]; advances i past it.
std::optional<Dims> ParseList(std::string_view s, size_t& i) {
  i = SkipSpace(s, i);
  if (i >= s.size() || s[i] != '[') return std::nullopt;
  Dims out;
  i = SkipSpace(s, i + 1);
  if (i < s.size() && s[i] == ']') {
    ++i;
    return out;
  }
  while (i < s.size()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    i = SkipSpace(s, static_cast<size_t>(p - s.data()));
    if (i < s.size() && s[i] == ',') {
      i = SkipSpace(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == ']') {
      ++i;
      return out;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Products in unsigned 64-bit arithmetic, as computeFlops does (uint64_t); a negative or
// overflowing figure counts 0.
int64_t Clamp(unsigned __int128 v) {
  return v > static_cast<unsigned __int128>(INT64_MAX) ? 0 : static_cast<int64_t>(v);
}

int64_t Gemm(const Dims& a, const Dims& b, bool batched) {
  if (a.empty() || a.back() <= 0 || (batched && a.front() <= 0)) return 0;
  unsigned __int128 f = 1;
  for (int64_t d : a) f *= static_cast<uint64_t>(d < 0 ? 0 : d);
  f /= static_cast<uint64_t>(a.back());
  if (batched) f /= static_cast<uint64_t>(a.front());
  for (int64_t d : b) f *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return Clamp(f * 2);
}

// Concrete Inputs: a JSON array of strings; element k's text ("[2, 2]", "1", "").
std::optional<std::string> ConcreteInput(std::string_view text, size_t k) {
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  for (size_t index = 0;; ++index) {
    i = SkipSpace(text, i);
    if (i >= text.size() || text[i] != '"') return std::nullopt;
    const size_t end = text.find('"', i + 1);
    if (end == std::string_view::npos) return std::nullopt;
    if (index == k) return std::string(text.substr(i + 1, end - i - 1));
    i = SkipSpace(text, end + 1);
    if (i >= text.size() || text[i] != ',') return std::nullopt;
    ++i;
  }
}

int64_t Conv2d(const std::vector<Dims>& in, std::string_view concrete) {
  if (in.size() < 2 || in[0].size() != 4 || in[1].size() != 4) return 0;
  Dims p[3];
  for (size_t k = 0; k < 3; ++k) {
    std::optional<std::string> t = ConcreteInput(concrete, 3 + k);
    size_t i = 0;
    std::optional<Dims> d = t ? ParseList(*t, i) : std::nullopt;
    if (!d || d->size() != 2) return 0;
    p[k] = *d;
  }
  std::optional<std::string> g = ConcreteInput(concrete, 6);
  int64_t groups = 0;
  if (!g || std::from_chars(g->data(), g->data() + g->size(), groups).ec != std::errc() ||
      groups <= 0) {
    return 0;
  }
  const Dims &x = in[0], &w = in[1], &stride = p[0], &pad = p[1], &dil = p[2];
  if (stride[0] <= 0 || stride[1] <= 0) return 0;
  const int64_t oh = (x[2] + 2 * pad[0] - dil[0] * (w[2] - 1) - 1) / stride[0] + 1;
  const int64_t ow = (x[3] + 2 * pad[1] - dil[1] * (w[3] - 1) - 1) / stride[1] + 1;
  for (int64_t v : {x[0], x[1], w[0], w[2], w[3], oh, ow}) {
    if (v < 0) return 0;
  }
  unsigned __int128 f = 2;
  for (int64_t v : {x[0], oh, ow, w[2], w[3], x[1], w[0]}) f *= static_cast<uint64_t>(v);
  return Clamp(f / static_cast<uint64_t>(groups));
}

}  // namespace

namespace {

// Input Dims text -> one sizes list per input; nullopt when the text is not a list of tensor
// shapes (a TensorList has no FLOPs formula here).
std::optional<std::vector<Dims>> InputSizes(std::string_view text) {
  std::vector<ArgShape> shapes;
  if (!ParseShapes(text, &shapes)) return std::nullopt;
  std::vector<Dims> out;
  out.reserve(shapes.size());
  for (ArgShape& shape : shapes) {
    if (shape.is_list) return std::nullopt;
    out.push_back(std::move(shape.sizes));
  }
  return out;
}

}  // namespace

bool CountsFlops(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::mul" || op == "aten::add" || op == "aten::conv2d";
}

int64_t FlopsFromShapes(std::string_view op, std::string_view input_dims,
                        std::string_view concrete_inputs) {
  if (!CountsFlops(op)) return 0;
  std::optional<std::vector<Dims>> in = InputSizes(input_dims);
  if (!in) return 0;
  auto input = [&](size_t k) -> const Dims* { return k < in->size() ? &(*in)[k] : nullptr; };
  if (op == "aten::mm" || op == "aten::bmm") {
    if (!input(1)) return 0;
    return Gemm(*input(0), *input(1), op == "aten::bmm");
  }
  if (op == "aten::addmm" || op == "aten::baddbmm") {
    if (!input(2)) return 0;
    return Gemm(*input(1), *input(2), op == "aten::baddbmm");
  }
  if (op == "aten::mul" || op == "aten::add") {
    if (!input(0)) return 0;
    unsigned __int128 f = 1;
    for (int64_t d : *input(0)) f *= static_cast<uint64_t>(d < 0 ? 0 : d);
    return Clamp(f);
  }
  return Conv2d(*in, concrete_inputs);
}

}  // namespace opscope::internal
