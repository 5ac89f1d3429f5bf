// Exact number-text conversions (see number_text.h).
#include "import/kineto/number_text.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace opscope::import {
namespace {

constexpr int64_t kMaxNs = INT64_MAX;

bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }
bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The value of the eight ASCII digits in `chunk` (little-endian: first digit in the low byte).
inline uint64_t EightDigitsValue(uint64_t chunk) {
  chunk -= 0x3030303030303030ull;
  chunk = (chunk * 10) + (chunk >> 8);  // pairs
  return (((chunk & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
          (((chunk >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
         32;
}

// Reads the run of digits at *p (before `end`) into *v; at most 18 digits are taken (they cannot
// overflow). Returns the number of digits read; *p is left after them. With kPadded, 8 bytes are
// read at a time even near `end` (the caller guarantees they are readable), so any run of up to
// 8 digits costs one load; otherwise 8 at a time where there is room.
template <bool kPadded>
inline size_t ReadDigits(const char** p, const char* end, uint64_t* v) {
  const char* q = *p;
  uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  static constexpr uint64_t kPow10[9] = {1,      10,      100,      1000,     10000,
                                         100000, 1000000, 10000000, 100000000};
  for (int rounds = 0; rounds < 2 && (kPadded || end - q >= 8); ++rounds) {
    uint64_t chunk;
    std::memcpy(&chunk, q, 8);
    // A byte is a digit when its high nibble is 3 and adding 6 keeps it 3. A carry out of a
    // non-digit byte can only disturb the bytes after it, which are not taken.
    const uint64_t not_digit =
        ((chunk & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
        (((chunk + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull);
    size_t k = not_digit == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(not_digit)) / 8;
    if (q + k > end) k = static_cast<size_t>(end - q);
    if (k == 0) break;
    if (k < 8) {
      // Move the k digits to the top and fill below with '0's: the value is unchanged.
      const unsigned shift = static_cast<unsigned>(8 * (8 - k));
      chunk = (chunk << shift) | (0x3030303030303030ull >> (64 - shift));
    }
    x = x * kPow10[k] + EightDigitsValue(chunk);
    q += k;
    if (k < 8) break;
  }
#endif
  const char* limit = *p + 18 < end ? *p + 18 : end;
  while (q < limit && IsDigit(*q)) x = x * 10 + static_cast<uint64_t>(*q++ - '0');
  const size_t n = static_cast<size_t>(q - *p);
  *p = q;
  *v = x;
  return n;
}

// The token without the JSON whitespace a raw token may carry after it.
const char* TrimmedEnd(std::string_view s) {
  const char* end = s.data() + s.size();
  while (end > s.data() && IsWs(end[-1])) --end;
  return end;
}

template <bool kPadded>
bool MicrosToNanos(std::string_view text, int64_t* ns) {
  const char* p = text.data();
  const char* end = TrimmedEnd(text);
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p == end || !IsDigit(*p)) return false;
  const char* first = p;
  // Integer microseconds: 18 digits at most (more cannot fit in int64 nanoseconds anyway).
  uint64_t whole = 0;
  const size_t digits = ReadDigits<kPadded>(&p, end, &whole);
  if (p < end && IsDigit(*p)) return false;
  if (digits > 1 && *first == '0') return false;  // JSON forbids leading zeros
  uint64_t frac_ns = 0;
  if (p < end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return false;
    // The first six decimals are picoseconds; digits below a picosecond round it (half up),
    // then the picoseconds round to the nanosecond (half up). Writers of fractional
    // microseconds have picoseconds at most: XProf's trace viewer writes ps / 1e6 with %.17g,
    // whose digits past the sixth decimal are the double's rounding ("3.0004999999999999" is
    // 3000500 ps, 3001 ns, not 3000).
    int n = 0;
    uint64_t frac_ps = 0;
    bool ps_up = false;
    for (; p < end && IsDigit(*p); ++p, ++n) {
      if (n < 6) {
        frac_ps = frac_ps * 10 + static_cast<uint64_t>(*p - '0');
      } else if (n == 6) {
        ps_up = *p >= '5';
      }
    }
    for (int k = n; k < 6; ++k) frac_ps *= 10;
    if (ps_up) ++frac_ps;  // up to 1000000: a whole microsecond, carried below
    frac_ns = frac_ps / 1000 + (frac_ps % 1000 >= 500 ? 1 : 0);
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    // Rare in traces: fall back to a double, with a range check.
    std::string copy(text.data(), static_cast<size_t>(end - text.data()));
    char* stop = nullptr;
    double us = std::strtod(copy.c_str(), &stop);
    if (stop != copy.c_str() + copy.size() || !std::isfinite(us)) return false;
    double v = std::round(us * 1000.0);
    if (v >= 9.2e18 || v <= -9.2e18) return false;
    *ns = static_cast<int64_t>(v);
    return true;
  }
  if (p != end) return false;
  if (whole > static_cast<uint64_t>(kMaxNs / 1000) - 1) return false;
  const int64_t v = static_cast<int64_t>(whole * 1000 + frac_ns);
  *ns = negative ? -v : v;
  return true;
}

}  // namespace

bool ParseMicrosToNanos(std::string_view text, int64_t* ns) {
  return MicrosToNanos<false>(text, ns);
}

bool ParseMicrosToNanosPadded(std::string_view text, int64_t* ns) {
  return MicrosToNanos<true>(text, ns);
}

bool ParseInt64(std::string_view text, int64_t* value) {
  const char* p = text.data();
  const char* end = TrimmedEnd(text);
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p == end || !IsDigit(*p)) return false;
  uint64_t v = 0;
  ReadDigits<false>(&p, end, &v);
  if (p < end && IsDigit(*p)) {  // a 19th digit may still fit
    const uint64_t d = static_cast<uint64_t>(*p++ - '0');
    if (v > (static_cast<uint64_t>(INT64_MAX) - d) / 10) return false;
    v = v * 10 + d;
    if (p < end && IsDigit(*p)) return false;
  }
  if (p < end && *p == '.') {  // an integral float: 17.0, 17.000
    ++p;
    if (p == end) return false;
    for (; p < end; ++p) {
      if (*p != '0') return false;
    }
  }
  if (p != end) return false;
  *value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace opscope::import
