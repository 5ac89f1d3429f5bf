// Bit unpacking, one specialization per (width, output type).
#include "import/parquet/bit_unpack.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace opscope::parquet {
namespace {

template <int W>
constexpr uint64_t Mask() {
  if constexpr (W >= 64) {
    return ~uint64_t{0};
  } else {
    return (uint64_t{1} << W) - 1;
  }
}

// Value I of a group of 8 packed at W bits: one 64-bit load when its bits fit one word after the
// byte shift, two otherwise (widths above 57).
template <int W, size_t I, typename Out>
inline void UnpackOne(const uint8_t* in, Out* out) {
  constexpr size_t kBit = I * W;
  constexpr size_t kByte = kBit / 8;
  constexpr unsigned kShift = kBit % 8;
  uint64_t lo;
  std::memcpy(&lo, in + kByte, 8);
  uint64_t v = lo >> kShift;
  if constexpr (W + kShift > 64) {
    uint64_t hi;
    std::memcpy(&hi, in + kByte + 8, 8);
    v |= hi << (64 - kShift);
  }
  out[I] = static_cast<Out>(v & Mask<W>());
}

// How far past a group's first byte its loads reach.
template <int W>
constexpr size_t Reach() {
  size_t reach = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t bit = i * W;
    reach = std::max(reach, bit / 8 + (W + bit % 8 > 64 ? 16 : 8));
  }
  return reach;
}

template <int W, typename Out>
inline void UnpackGroup(const uint8_t* in, Out* out) {
  [&]<size_t... I>(std::index_sequence<I...>) { (UnpackOne<W, I>(in, out), ...); }
  (std::make_index_sequence<8>{});
}

template <int W, typename Out>
void Unpack(const uint8_t* in, size_t in_bytes, Out* out, size_t n) {
  const size_t groups = n / 8;
  if constexpr (W == 0) {
    std::fill(out, out + groups * 8, Out{0});
  } else {
    constexpr size_t kReach = Reach<W>();
    // Groups whose loads stay inside the input go straight; the last few through a padded copy.
    size_t fast = 0;
    if (in_bytes >= kReach) fast = std::min(groups, (in_bytes - kReach) / W + 1);
    for (size_t g = 0; g < fast; ++g) UnpackGroup<W>(in + g * W, out + g * 8);
    for (size_t g = fast; g < groups; ++g) {
      uint8_t padded[W + 16] = {};
      std::memcpy(padded, in + g * W, std::min<size_t>(W, in_bytes - std::min(in_bytes, g * W)));
      UnpackGroup<W>(padded, out + g * 8);
    }
  }
}

template <typename Out>
using UnpackFn = void (*)(const uint8_t*, size_t, Out*, size_t);

template <typename Out, size_t... W>
constexpr std::array<UnpackFn<Out>, sizeof...(W)> MakeTable(std::index_sequence<W...>) {
  return {&Unpack<static_cast<int>(W), Out>...};
}

template <typename Out>
void Dispatch(const uint8_t* in, size_t in_bytes, int width, Out* out, size_t n) {
  static constexpr auto kTable = MakeTable<Out>(std::make_index_sequence<sizeof(Out) * 8 + 1>{});
  kTable[static_cast<size_t>(width)](in, in_bytes, out, n);
}

}  // namespace

void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint8_t* out, size_t n) {
  Dispatch(in, in_bytes, width, out, n);
}
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint16_t* out, size_t n) {
  Dispatch(in, in_bytes, width, out, n);
}
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint32_t* out, size_t n) {
  Dispatch(in, in_bytes, width, out, n);
}
void UnpackBits(const uint8_t* in, size_t in_bytes, int width, uint64_t* out, size_t n) {
  Dispatch(in, in_bytes, width, out, n);
}

}  // namespace opscope::parquet
