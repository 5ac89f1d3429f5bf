// A real trace repeated in time (see tiled_trace.h).
#include "bench/tiled_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>

namespace opscope::bench {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The end of the string token starting at text[i] == '"' (one past its closing quote).
size_t StringEnd(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// Calls fn(key, begin, end) for every member of every object in `text` whose value is a number
// ([begin, end) is the number's text), in order.
void ForEachNumberMember(std::string_view text,
                         const std::function<void(std::string_view, size_t, size_t)>& fn) {
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '"') {
      ++i;
      continue;
    }
    const size_t end = StringEnd(text, i);
    const std::string_view key = text.substr(i + 1, end - i - 2);
    size_t j = end;
    while (j < text.size() && IsSpace(text[j])) ++j;
    if (j >= text.size() || text[j] != ':') {
      i = end;  // a string value, not a key
      continue;
    }
    for (++j; j < text.size() && IsSpace(text[j]);) ++j;
    size_t k = j;
    while (k < text.size() &&
           (text[k] == '-' || text[k] == '+' || text[k] == '.' || text[k] == 'e' ||
            text[k] == 'E' || (text[k] >= '0' && text[k] <= '9'))) {
      ++k;
    }
    if (k > j) fn(key, j, k);
    i = k > j ? k : j;
  }
}

// The integer part of a number's text when it is plain decimal digits (an optional fraction
// after a '.'): true and its value, else false.
bool IntegerPart(std::string_view number, int64_t* value, size_t* digits) {
  size_t n = 0;
  int64_t v = 0;
  while (n < number.size() && number[n] >= '0' && number[n] <= '9' && n < 18) {
    v = v * 10 + (number[n] - '0');
    ++n;
  }
  if (n == 0) return false;
  if (n < number.size() && number[n] != '.') return false;  // exponent, sign or too long
  for (size_t i = n + 1; i < number.size(); ++i) {
    if (number[i] < '0' || number[i] > '9') return false;
  }
  *value = v;
  *digits = n;
  return true;
}

bool IsTime(std::string_view key) { return key == "ts"; }
bool IsId(std::string_view key) {
  return key == "id" || key == "External id" || key == "correlation" || key == "Python id" ||
         key == "Python parent id";
}

}  // namespace

uint64_t WriteTiledTrace(const std::string& in_path, int copies, const std::string& out_path) {
  std::ifstream in(in_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    std::fprintf(stderr, "tiled trace: cannot read %s\n", in_path.c_str());
    return 0;
  }
  // The array: the first "traceEvents" key, then its brackets matched outside strings.
  const size_t key = text.find("\"traceEvents\"");
  size_t open = key == std::string::npos ? key : text.find('[', key);
  size_t close = std::string::npos;
  for (size_t i = open, depth = 0; open != std::string::npos && i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = StringEnd(text, i);
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && --depth == 0) {
      close = i;
      break;
    }
    ++i;
  }
  if (close == std::string::npos) {
    std::fprintf(stderr, "tiled trace: %s has no complete traceEvents array\n", in_path.c_str());
    return 0;
  }
  const std::string_view events = std::string_view(text).substr(open + 1, close - open - 1);

  int64_t first = INT64_MAX, last = INT64_MIN, max_id = 0;
  ForEachNumberMember(events, [&](std::string_view k, size_t b, size_t e) {
    int64_t v = 0;
    size_t digits = 0;
    if (!IntegerPart(events.substr(b, e - b), &v, &digits)) return;
    if (IsTime(k)) {
      first = std::min(first, v);
      last = std::max(last, v);
    } else if (IsId(k)) {
      max_id = std::max(max_id, v);
    }
  });
  const int64_t span_us = first <= last ? last - first + 1000 : 0;

  std::string out;
  out.reserve(text.size() * static_cast<size_t>(std::max(copies, 1)) + 64);
  out.append(text, 0, open + 1);
  out.append(events);
  for (int copy = 1; copy < copies; ++copy) {
    out += ',';
    size_t from = 0;
    ForEachNumberMember(events, [&](std::string_view k, size_t b, size_t e) {
      const bool time = IsTime(k);
      if (!time && !IsId(k)) return;
      int64_t v = 0;
      size_t digits = 0;
      if (!IntegerPart(events.substr(b, e - b), &v, &digits)) return;
      out.append(events.substr(from, b - from));
      out += fmt::format("{}", v + copy * (time ? span_us : max_id + 1));
      out.append(events.substr(b + digits, e - b - digits));  // the fraction as written
      from = e;
    });
    out.append(events.substr(from));
  }
  out.append(text, close, std::string::npos);

  std::ofstream file(out_path, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) {
    std::fprintf(stderr, "tiled trace: cannot write %s\n", out_path.c_str());
    return 0;
  }
  return out.size();
}

}  // namespace opscope::bench
