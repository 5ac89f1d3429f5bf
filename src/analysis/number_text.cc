// Exact number-text conversions (see number_text.h).
#include "analysis/number_text.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace opscope::analysis {
namespace {

constexpr int64_t kMaxNs = INT64_MAX;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

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
