// The JSON structure scanner (see json_scan.h).
#include "base/json_scan.h"

#include <array>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opscope::internal {
namespace {

// Bytes that matter outside strings while scanning a container.
constexpr std::array<uint8_t, 256> MakeStructural() {
  std::array<uint8_t, 256> t{};
  t['"'] = 1;
  t['{'] = 1;
  t['['] = 1;
  t['}'] = 1;
  t[']'] = 1;
  return t;
}
// Bytes that end a string run: the quote, a backslash.
constexpr std::array<uint8_t, 256> MakeStringStop() {
  std::array<uint8_t, 256> t{};
  t['"'] = 1;
  t['\\'] = 1;
  return t;
}
constexpr auto kStructural = MakeStructural();
constexpr auto kStringStop = MakeStringStop();

// First index in [i, end) holding one of "{}[] (outside strings), or `end`. Reads nothing at or
// past `end`: 16 bytes at a time while they fit, then byte by byte.
inline size_t FindStructural(const char* p, size_t i, size_t end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open = _mm_set1_epi8('{');   // '[' | 0x20 == '{'
  const __m128i close = _mm_set1_epi8('}');  // ']' | 0x20 == '}'
  const __m128i lower = _mm_set1_epi8(0x20);
  for (; i + 16 <= end; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i folded = _mm_or_si128(v, lower);
    const __m128i hit =
        _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                     _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  while (i < end && !kStructural[static_cast<unsigned char>(p[i])]) ++i;
  return i;
}

// First index in [i, end) holding '"' or '\\', or `end` (reads nothing at or past `end`).
inline size_t FindStringStop(const char* p, size_t i, size_t end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= end; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  while (i < end && !kStringStop[static_cast<unsigned char>(p[i])]) ++i;
  return i;
}

// Bit k of each mask is set when byte k of a 64-byte block is: a quote, a backslash, an opening
// bracket ('{' or '['), a closing bracket ('}' or ']').
struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

// '[' | 0x20 == '{' and ']' | 0x20 == '}': one compare finds both kinds of each bracket.
namespace generic {
#define OPSCOPE_SCAN_TARGET
#if defined(__SSE2__)
inline BlockMasks Block(const char* p) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i lower = _mm_set1_epi8(0x20);
  BlockMasks m{0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, lower);
    const int shift = 16 * k;
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << shift;
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
  }
  return m;
}
// Bit k = parity of the set bits at positions <= k: with quote bits in, marks string interiors
// (opening quote included, closing quote excluded).
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}
#define OPSCOPE_SCAN_BLOCK Block
#endif
#include "base/json_scan_kernel.inc"
#undef OPSCOPE_SCAN_BLOCK
#undef OPSCOPE_SCAN_TARGET
}  // namespace generic

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OPSCOPE_SCAN_HAS_AVX 1
// The prefix XOR as a carry-less multiply by all ones, shared by the AVX2 and AVX-512 kernels
// (a pclmul-only function inlines into both).
namespace clmul {
__attribute__((target("pclmul"))) inline uint64_t PrefixXor(uint64_t x) {
  const __m128i product =
      _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
}
}  // namespace clmul

namespace avx2 {
#define OPSCOPE_SCAN_TARGET __attribute__((target("avx2,pclmul")))
using clmul::PrefixXor;
OPSCOPE_SCAN_TARGET inline uint64_t Bits(__m256i lo, __m256i hi) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(lo))) |
         (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi))) << 32);
}
OPSCOPE_SCAN_TARGET inline BlockMasks Block(const char* p) {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i open = _mm256_set1_epi8('{');
  const __m256i close = _mm256_set1_epi8('}');
  const __m256i lower = _mm256_set1_epi8(0x20);
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const __m256i lo_folded = _mm256_or_si256(lo, lower);
  const __m256i hi_folded = _mm256_or_si256(hi, lower);
  return {Bits(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
          Bits(_mm256_cmpeq_epi8(lo, backslash), _mm256_cmpeq_epi8(hi, backslash)),
          Bits(_mm256_cmpeq_epi8(lo_folded, open), _mm256_cmpeq_epi8(hi_folded, open)),
          Bits(_mm256_cmpeq_epi8(lo_folded, close), _mm256_cmpeq_epi8(hi_folded, close))};
}
#define OPSCOPE_SCAN_BLOCK Block
#include "base/json_scan_kernel.inc"
#undef OPSCOPE_SCAN_BLOCK
#undef OPSCOPE_SCAN_TARGET
}  // namespace avx2

namespace avx512 {
#define OPSCOPE_SCAN_TARGET __attribute__((target("avx512f,avx512bw,pclmul")))
using clmul::PrefixXor;
OPSCOPE_SCAN_TARGET inline BlockMasks Block(const char* p) {
  const __m512i v = _mm512_loadu_si512(p);
  const __m512i folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
  return {_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')),
          _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')),
          _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('{')),
          _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('}'))};
}
#define OPSCOPE_SCAN_BLOCK Block
#include "base/json_scan_kernel.inc"
#undef OPSCOPE_SCAN_BLOCK
#undef OPSCOPE_SCAN_TARGET
}  // namespace avx512
#endif

// Whether this CPU runs the kernel (checked once).
bool CpuRuns(JsonScanKernel kernel) {
#if defined(OPSCOPE_SCAN_HAS_AVX)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  }();
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("pclmul");
  }();
  if (kernel == JsonScanKernel::kAvx2) return avx2;
  if (kernel == JsonScanKernel::kAvx512) return avx512;
#endif
  return kernel == JsonScanKernel::kGeneric || kernel == JsonScanKernel::kAuto;
}

ContainerScan ScanWith(JsonScanKernel kernel, const char* p, size_t i, size_t end, char* stack,
                       int max_depth, int depth) {
  switch (kernel) {
#if defined(OPSCOPE_SCAN_HAS_AVX)
    case JsonScanKernel::kAvx512:
      return avx512::ScanContainer(p, i, end, stack, max_depth, depth);
    case JsonScanKernel::kAvx2:
      return avx2::ScanContainer(p, i, end, stack, max_depth, depth);
#endif
    default:
      return generic::ScanContainer(p, i, end, stack, max_depth, depth);
  }
}

}  // namespace

bool JsonScanKernelSupported(JsonScanKernel kernel) { return CpuRuns(kernel); }

JsonScanKernel ResolveJsonScanKernel(JsonScanKernel kernel) {
  if (kernel != JsonScanKernel::kAuto && CpuRuns(kernel)) return kernel;
  if (CpuRuns(JsonScanKernel::kAvx512)) return JsonScanKernel::kAvx512;
  if (CpuRuns(JsonScanKernel::kAvx2)) return JsonScanKernel::kAvx2;
  return JsonScanKernel::kGeneric;
}

ContainerScan ScanContainer(JsonScanKernel kernel, const char* p, size_t i, size_t end, char* stack,
                            int max_depth, int depth) {
  return ScanWith(kernel, p, i, end, stack, max_depth, depth);
}

size_t JsonStringEnd(const char* p, size_t i, size_t end) {
  while (i < end) {
    i = FindStringStop(p, i, end);
    if (i == end) break;
    if (p[i] == '"') return i + 1;
    i += 2;  // a backslash and the byte it escapes
  }
  return kJsonNoEnd;
}

size_t JsonValueEnd(std::string_view text, size_t i) {
  const size_t n = text.size();
  if (i >= n) return kJsonNoEnd;
  const char* p = text.data();
  const char first = p[i];
  if (first == '"') return JsonStringEnd(p, i + 1, n);
  if (first == '{' || first == '[') {
    static const JsonScanKernel kernel = ResolveJsonScanKernel(JsonScanKernel::kAuto);
    constexpr int kStackDepth = 128;
    char stack[kStackDepth];
    stack[0] = first;
    ContainerScan r = ScanWith(kernel, p, i + 1, n, stack, kStackDepth, 1);
    if (r.what == ContainerScan::kTooDeep) {
      // Rare: nesting past the stack above. No value nests deeper than its length.
      std::vector<char> deep(n - i + 1);
      deep[0] = first;
      r = ScanWith(kernel, p, i + 1, n, deep.data(), static_cast<int>(deep.size()), 1);
    }
    return r.what == ContainerScan::kComplete ? r.at : kJsonNoEnd;
  }
  if (EndsJsonScalar(first)) return kJsonNoEnd;
  while (i < n && !EndsJsonScalar(p[i])) ++i;
  return i;
}

}  // namespace opscope::internal
