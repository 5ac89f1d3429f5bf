// Streaming JSON value scanner (see json_stream.h).
#include "analysis/json_stream.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opscope::analysis {
namespace {

constexpr size_t kMaxValueBytes = size_t{1} << 30;  // one value (event) may not exceed 1 GiB

#if !defined(__SSE2__)
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
#endif

// First index in [i, end) holding one of "{}[] (outside strings), or `end`. Reads up to 15
// bytes past `end`, which the stream's padding makes safe.
inline size_t FindStructural(const char* p, size_t i, size_t end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open = _mm_set1_epi8('{');   // '[' | 0x20 == '{'
  const __m128i close = _mm_set1_epi8('}');  // ']' | 0x20 == '}'
  const __m128i lower = _mm_set1_epi8(0x20);
  for (; i < end; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i folded = _mm_or_si128(v, lower);
    const __m128i hit =
        _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                     _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return std::min(end, i + static_cast<size_t>(__builtin_ctz(mask)));
  }
  return end;
#else
  while (i < end && !kStructural[static_cast<unsigned char>(p[i])]) ++i;
  return i;
#endif
}

// First index in [i, end) holding '"' or '\\', or `end` (same padding contract).
inline size_t FindStringStop(const char* p, size_t i, size_t end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i < end; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return std::min(end, i + static_cast<size_t>(__builtin_ctz(mask)));
  }
  return end;
#else
  while (i < end && !kStringStop[static_cast<unsigned char>(p[i])]) ++i;
  return i;
#endif
}

// Bit k of each mask is set when byte k of a 64-byte block is: a quote, a backslash, an opening
// bracket ('{' or '['), a closing bracket ('}' or ']').
struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

// What ScanContainer found.
struct ContainerScan {
  enum What { kComplete, kIncomplete, kTooDeep, kMismatch } what;
  size_t at;       // kComplete: one past the value; kTooDeep/kMismatch: the offending bracket
  int depth;       // open brackets left (stack[depth - 1] is the innermost)
  bool in_string;  // kIncomplete: the input ended inside a string
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
#include "analysis/json_scan_kernel.inc"
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
#include "analysis/json_scan_kernel.inc"
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
#include "analysis/json_scan_kernel.inc"
#undef OPSCOPE_SCAN_BLOCK
#undef OPSCOPE_SCAN_TARGET
}  // namespace avx512
#endif

// Whether this CPU runs the kernel (checked once).
bool CpuRuns(JsonStream::Kernel kernel) {
#if defined(OPSCOPE_SCAN_HAS_AVX)
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  }();
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("pclmul");
  }();
  if (kernel == JsonStream::Kernel::kAvx2) return avx2;
  if (kernel == JsonStream::Kernel::kAvx512) return avx512;
#endif
  return kernel == JsonStream::Kernel::kGeneric || kernel == JsonStream::Kernel::kAuto;
}

ContainerScan ScanContainerWith(JsonStream::Kernel kernel, const char* p, size_t i, size_t end,
                                char* stack, int max_depth) {
  switch (kernel) {
#if defined(OPSCOPE_SCAN_HAS_AVX)
    case JsonStream::Kernel::kAvx512:
      return avx512::ScanContainer(p, i, end, stack, max_depth, 1);
    case JsonStream::Kernel::kAvx2:
      return avx2::ScanContainer(p, i, end, stack, max_depth, 1);
#endif
    default:
      return generic::ScanContainer(p, i, end, stack, max_depth, 1);
  }
}

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool EndsScalar(char c) { return IsWs(c) || c == ',' || c == '}' || c == ']' || c == ':'; }

}  // namespace

bool JsonStream::Supported(Kernel kernel) {
  switch (kernel) {
    case Kernel::kAuto:
    case Kernel::kGeneric:
      return true;
    case Kernel::kAvx2:
    case Kernel::kAvx512:
      return CpuRuns(kernel);
  }
  return false;
}

JsonStream::JsonStream(ByteSource* source, int max_depth, size_t initial_buffer, Kernel kernel)
    : source_(source),
      kernel_(kernel != Kernel::kAuto && Supported(kernel)
                  ? kernel
                  : (Supported(Kernel::kAvx512)
                         ? Kernel::kAvx512
                         : (Supported(Kernel::kAvx2) ? Kernel::kAvx2 : Kernel::kGeneric))),
      max_depth_(max_depth < 1 ? 1 : max_depth),
      storage_(new char[1 + initial_buffer + kPadding + 1]),
      buf_(storage_.get() + 1),
      cap_(initial_buffer),
      stack_(new char[static_cast<size_t>(max_depth_) + 1]) {
  std::memset(storage_.get(), 0, 1 + cap_ + kPadding + 1);
}

std::string JsonStream::Describe(int c) {
  if (c < 0) return "end of input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%02x", c & 0xff);
  return std::string("byte ") + hex;
}

Status JsonStream::Refill(size_t keep_from, size_t* got) {
  RestoreSentinel();
  *got = 0;
  if (keep_from > 0) {
    const size_t keep = end_ - keep_from;
    if (keep) std::memmove(buf_, buf_ + keep_from, keep);
    base_ += keep_from;
    pos_ = pos_ >= keep_from ? pos_ - keep_from : 0;
    end_ = keep;
  }
  if (eof_) return Status::Ok();
  if (end_ == cap_) {
    if (cap_ * 2 > kMaxValueBytes) {
      return Status::InvalidInput("byte " + std::to_string(base_) +
                                      ": one JSON value is larger than 1 GiB; expected events of "
                                      "reasonable size",
                                  base_);
    }
    std::unique_ptr<char[]> bigger(new char[1 + cap_ * 2 + kPadding + 1]);
    bigger[0] = 0;
    std::memcpy(bigger.get() + 1, buf_, end_);
    std::memset(bigger.get() + 1 + end_, 0, cap_ * 2 + kPadding + 1 - end_);
    storage_ = std::move(bigger);
    buf_ = storage_.get() + 1;
    cap_ *= 2;
  }
  size_t n = 0;
  Status st = source_->Read(buf_ + end_, cap_ - end_, &n);
  if (!st.ok()) return st;
  end_ += n;
  // Keep the padding after the data deterministic for simdjson.
  std::memset(buf_ + end_, 0, std::min(kPadding, cap_ + kPadding - end_));
  if (n == 0) eof_ = true;
  *got = n;
  return Status::Ok();
}

Status JsonStream::Peek(int* c) {
  RestoreSentinel();
  for (;;) {
    while (pos_ < end_ && IsWs(buf_[pos_])) ++pos_;
    if (pos_ < end_) {
      *c = static_cast<unsigned char>(buf_[pos_]);
      return Status::Ok();
    }
    size_t got = 0;
    Status st = Refill(pos_, &got);
    if (!st.ok()) return st;
    if (got == 0) {
      *c = -1;
      return Status::Ok();
    }
  }
}

JsonStream::Scan JsonStream::ScanValue(size_t start, size_t* end_out, const char** missing,
                                       Status* error) {
  const char* p = buf_;
  const size_t end = end_;
  const char first = p[start];
  size_t i = start + 1;

  if (first == '{' || first == '[') {
    stack_[0] = first;
    const ContainerScan r = ScanContainerWith(kernel_, p, i, end, stack_.get(), max_depth_);
    switch (r.what) {
      case ContainerScan::kComplete:
        *end_out = r.at;
        return Scan::kComplete;
      case ContainerScan::kTooDeep:
        *error = Status::InvalidInput(
            "byte " + std::to_string(base_ + r.at) + ": JSON nested deeper than " +
                std::to_string(max_depth_) + " levels; expected a flatter event",
            base_ + r.at);
        return Scan::kError;
      case ContainerScan::kMismatch: {
        const char open = stack_[r.depth - 1];
        *error = Status::InvalidInput("byte " + std::to_string(base_ + r.at) + ": expected '" +
                                          (open == '{' ? "}" : "]") + "', found '" + p[r.at] + "'",
                                      base_ + r.at);
        return Scan::kError;
      }
      case ContainerScan::kIncomplete:
        break;
    }
    *missing =
        r.in_string ? "'\"' to close a string" : (stack_[r.depth - 1] == '{' ? "'}'" : "']'");
    return Scan::kIncomplete;
  }

  if (first == '"') {
    bool escape = false;
    while (i < end) {
      if (escape) {
        escape = false;
        ++i;
        continue;
      }
      i = FindStringStop(p, i, end);
      if (i == end) break;
      if (p[i++] == '\\') {
        escape = true;
      } else {
        *end_out = i;
        return Scan::kComplete;
      }
    }
    *missing = "'\"'";
    return Scan::kIncomplete;
  }

  // A scalar: number, true, false, null (validated by whoever parses it).
  if (first == '}' || first == ']' || first == ',' || first == ':') {
    *error = Status::InvalidInput(
        "byte " + std::to_string(base_ + start) + ": expected a value, found " + Describe(first),
        base_ + start);
    return Scan::kError;
  }
  while (i < end && !EndsScalar(p[i])) ++i;
  if (i - start > 64) {
    *error = Status::InvalidInput("byte " + std::to_string(base_ + start) +
                                      ": expected a number, string, object, array, true, false or "
                                      "null",
                                  base_ + start);
    return Scan::kError;
  }
  if (i == end && !eof_) {
    *missing = "the rest of a number or literal";
    return Scan::kIncomplete;
  }
  *end_out = i;
  return Scan::kComplete;
}

Status JsonStream::ReadValue(std::string_view* span) {
  int first = 0;
  Status st = Peek(&first);
  if (!st.ok()) return st;
  value_offset_ = offset();
  if (first < 0) {
    return Status::InvalidInput(
        "byte " + std::to_string(offset()) + ": unexpected end of input, expected a value",
        offset());
  }
  for (;;) {
    size_t value_end = 0;
    const char* missing = "";
    Status error;
    const Scan r = ScanValue(pos_, &value_end, &missing, &error);
    if (r == Scan::kError) return error;
    if (r == Scan::kComplete) {
      *span = std::string_view(buf_ + pos_, value_end - pos_);
      pos_ = value_end;
      return Status::Ok();
    }
    size_t got = 0;
    st = Refill(pos_, &got);  // pos_ becomes 0
    if (!st.ok()) return st;
    if (got == 0) {
      // A scalar may end with the input.
      if (first != '{' && first != '[' && first != '"') continue;
      const std::string kind = first == '"' ? "string" : (first == '{' ? "object" : "array");
      return Status::InvalidInput("byte " + std::to_string(base_ + end_) +
                                      ": unexpected end of input inside the " + kind +
                                      " that starts at byte " + std::to_string(value_offset_) +
                                      "; expected " + missing + " (truncated file?)",
                                  base_ + end_);
    }
  }
}

Status JsonStream::ReadElements(size_t max_bytes, std::string_view what, uint64_t first_index,
                                Batch* batch, bool* end) {
  RestoreSentinel();
  batch->array = {};
  batch->elements.clear();
  batch->offsets.clear();
  *end = false;
  if (!pending_error_.ok()) {
    Status st = std::move(pending_error_);
    pending_error_ = Status::Ok();
    return st;
  }
  if (first_index == 0) after_element_ = false;
  size_t first_start = 0, last_end = 0;
  // Fails the call, or, when elements were read, returns them and keeps the error for later.
  auto fail = [&](Status st) {
    if (batch->elements.empty()) return st;
    pending_error_ = std::move(st);
    return Status::Ok();
  };
  auto index = [&] { return first_index + batch->elements.size(); };
  for (;;) {
    // The next byte that is not whitespace, refilling only while the batch is empty (a refill
    // moves the buffer under the elements already handed out).
    while (pos_ < end_ && IsWs(buf_[pos_])) ++pos_;
    if (pos_ == end_) {
      if (!batch->elements.empty()) break;
      size_t got = 0;
      Status st = Refill(pos_, &got);
      if (!st.ok()) return st;
      if (got == 0) {
        return Status::InvalidInput(
            "byte " + std::to_string(offset()) + ": unexpected end of input, expected " +
                (after_element_
                     ? "',' or ']' after " + std::string(what) + " " + std::to_string(index() - 1)
                     : std::string("a value")) +
                " (truncated file?)",
            offset());
      }
      continue;
    }
    const char c = buf_[pos_];
    if (after_element_) {
      if (c == ']') {
        ++pos_;
        after_element_ = false;
        *end = true;
        break;
      }
      if (c != ',') {
        return fail(Status::InvalidInput("byte " + std::to_string(offset()) +
                                             ": expected ',' or ']' after " + std::string(what) +
                                             " " + std::to_string(index() - 1) + ", found " +
                                             Describe(static_cast<unsigned char>(c)),
                                         offset()));
      }
      ++pos_;
      after_element_ = false;
      continue;
    }
    if (c == ']' && index() == 0) {  // an empty array
      ++pos_;
      *end = true;
      break;
    }
    if (!batch->elements.empty() && pos_ - first_start > max_bytes) break;
    size_t value_end = 0;
    const char* missing = "";
    Status error;
    const Scan r = ScanValue(pos_, &value_end, &missing, &error);
    if (r == Scan::kError) {
      return fail(Status::InvalidInput(
          error.message() + " (in " + std::string(what) + " " + std::to_string(index()) + ")",
          error.offset()));
    }
    if (r == Scan::kIncomplete) {
      if (!batch->elements.empty()) break;
      const uint64_t value_offset = offset();
      size_t got = 0;
      Status st = Refill(pos_, &got);
      if (!st.ok()) return st;
      if (got == 0) {
        if (ScanValue(pos_, &value_end, &missing, &error) == Scan::kComplete) continue;
        return Status::InvalidInput(
            "byte " + std::to_string(base_ + end_) + ": unexpected end of input inside " +
                std::string(what) + " " + std::to_string(index()) + ", which starts at byte " +
                std::to_string(value_offset) + "; expected " + missing + " (truncated file?)",
            base_ + end_);
      }
      continue;
    }
    if (batch->elements.empty()) first_start = pos_;
    batch->elements.emplace_back(buf_ + pos_, value_end - pos_);
    batch->offsets.push_back(base_ + pos_);
    last_end = value_end;
    pos_ = value_end;
    after_element_ = true;
  }
  if (!batch->elements.empty()) {
    // Wrap [first_start, last_end) in brackets: the byte before it was consumed (the headroom
    // byte when the element starts the buffer); the byte after it is saved and restored.
    char* const first = buf_ + first_start;
    first[-1] = '[';
    sentinel_ = last_end;
    sentinel_byte_ = buf_[last_end];
    buf_[last_end] = ']';
    batch->array = std::string_view(first - 1, last_end - first_start + 2);
  }
  return Status::Ok();
}

Status JsonStream::ReadRawString(std::string* out) {
  int c = 0;
  Status st = Peek(&c);
  if (!st.ok()) return st;
  if (c != '"') {
    return Status::InvalidInput(
        "byte " + std::to_string(offset()) + ": expected '\"' to start a key, found " + Describe(c),
        offset());
  }
  std::string_view span;
  st = ReadValue(&span);
  if (!st.ok()) return st;
  out->assign(span.substr(1, span.size() - 2));
  return Status::Ok();
}

}  // namespace opscope::analysis
