// Exact number-text conversions (see number_text.h).
#include "analysis/number_text.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace opscope::analysis {
namespace {

constexpr int64_t kMaxNs = INT64_MAX;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads digits from text[*i] on into *v (which the caller keeps below 10^18 before the call by
// bounding *count), eight at a time where it can: timestamps run to 16 digits. Stops at the first
// non-digit or when *count would pass 18 digits.
inline void ReadDigits(std::string_view text, size_t* i, uint64_t* v, size_t* count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (*i + 8 <= text.size() && *count + 8 <= 18) {
    uint64_t chunk;
    std::memcpy(&chunk, text.data() + *i, 8);
    // All eight bytes in '0'..'9': high nibbles 3, and adding 6 keeps them 3.
    if (((chunk & 0xF0F0F0F0F0F0F0F0ull) |
         (((chunk + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) !=
        0x3333333333333333ull) {
      break;
    }
    chunk -= 0x3030303030303030ull;
    chunk = (chunk * 10) + (chunk >> 8);  // pairs
    chunk = (((chunk & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
             (((chunk >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
            32;
    *v = *v * 100000000ull + chunk;
    *i += 8;
    *count += 8;
  }
#endif
  while (*i < text.size() && IsDigit(text[*i]) && *count < 18) {
    *v = *v * 10 + static_cast<uint64_t>(text[*i] - '0');
    ++*i;
    ++*count;
  }
}

// Trims JSON whitespace a raw token may carry.
std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

bool ParseMicrosToNanos(std::string_view text, int64_t* ns) {
  text = Trim(text);
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  if (i >= text.size() || !IsDigit(text[i])) return false;
  // Integer microseconds.
  uint64_t whole = 0;
  size_t digits = 0;
  ReadDigits(text, &i, &whole, &digits);
  for (; i < text.size() && IsDigit(text[i]); ++i, ++digits) {
    if (whole > (UINT64_MAX - 9) / 10) return false;
    whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (digits > 1 && text[negative ? 1 : 0] == '0') return false;  // JSON forbids leading zeros
  uint64_t frac_ns = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || !IsDigit(text[i])) return false;
    int n = 0;
    bool round_up = false;
    for (; i < text.size() && IsDigit(text[i]); ++i, ++n) {
      if (n < 3) {
        frac_ns = frac_ns * 10 + static_cast<uint64_t>(text[i] - '0');
      } else if (n == 3) {
        round_up = text[i] >= '5';
      }
    }
    for (int k = n; k < 3; ++k) frac_ns *= 10;
    if (round_up) ++frac_ns;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    // Rare in traces: fall back to a double, with a range check.
    std::string copy(text);
    char* end = nullptr;
    double us = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(us)) return false;
    double v = std::round(us * 1000.0);
    if (v >= 9.2e18 || v <= -9.2e18) return false;
    *ns = static_cast<int64_t>(v);
    return true;
  }
  if (i != text.size()) return false;
  if (whole > static_cast<uint64_t>(kMaxNs / 1000) - 1) return false;
  const int64_t v = static_cast<int64_t>(whole * 1000 + frac_ns);
  *ns = negative ? -v : v;
  return true;
}

bool ParseInt64(std::string_view text, int64_t* value) {
  text = Trim(text);
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  if (i >= text.size() || !IsDigit(text[i])) return false;
  uint64_t v = 0;
  size_t digits = 0;
  ReadDigits(text, &i, &v, &digits);
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    if (v > (static_cast<uint64_t>(INT64_MAX) - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size()) return false;
    for (; i < text.size(); ++i) {
      if (text[i] != '0') return false;
    }
  }
  if (i != text.size()) return false;
  *value = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace opscope::analysis
