// Streaming JSON value scanner (see json_stream.h).
#include "analysis/json_stream.h"

#include <array>
#include <cstring>

namespace opscope::analysis {
namespace {

constexpr size_t kMaxValueBytes = size_t{1} << 30;  // one value (event) may not exceed 1 GiB

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

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool EndsScalar(char c) { return IsWs(c) || c == ',' || c == '}' || c == ']' || c == ':'; }

}  // namespace

JsonStream::JsonStream(ByteSource* source, int max_depth, size_t initial_buffer)
    : source_(source),
      max_depth_(max_depth < 1 ? 1 : max_depth),
      buf_(new char[initial_buffer + kPadding]),
      cap_(initial_buffer),
      stack_(new char[static_cast<size_t>(max_depth_) + 1]) {
  std::memset(buf_.get(), 0, cap_ + kPadding);
}

std::string JsonStream::Describe(int c) {
  if (c < 0) return "end of input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%02x", c & 0xff);
  return std::string("byte ") + hex;
}

ImportStatus JsonStream::Refill(size_t keep_from, size_t* got) {
  *got = 0;
  if (keep_from > 0) {
    const size_t keep = end_ - keep_from;
    if (keep) std::memmove(buf_.get(), buf_.get() + keep_from, keep);
    base_ += keep_from;
    pos_ = pos_ >= keep_from ? pos_ - keep_from : 0;
    end_ = keep;
  }
  if (eof_) return ImportStatus::Ok();
  if (end_ == cap_) {
    if (cap_ * 2 > kMaxValueBytes) {
      return ImportStatus::Error("byte " + std::to_string(base_) +
                                     ": one JSON value is larger than 1 GiB; expected events of "
                                     "reasonable size",
                                 base_);
    }
    std::unique_ptr<char[]> bigger(new char[cap_ * 2 + kPadding]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    std::memset(bigger.get() + end_, 0, cap_ * 2 + kPadding - end_);
    buf_ = std::move(bigger);
    cap_ *= 2;
  }
  size_t n = 0;
  ImportStatus st = source_->Read(buf_.get() + end_, cap_ - end_, &n);
  if (!st.ok()) return st;
  end_ += n;
  // Keep the padding after the data deterministic for simdjson.
  std::memset(buf_.get() + end_, 0, std::min(kPadding, cap_ + kPadding - end_));
  if (n == 0) eof_ = true;
  *got = n;
  return ImportStatus::Ok();
}

ImportStatus JsonStream::Peek(int* c) {
  for (;;) {
    const char* p = buf_.get();
    while (pos_ < end_ && IsWs(p[pos_])) ++pos_;
    if (pos_ < end_) {
      *c = static_cast<unsigned char>(p[pos_]);
      return ImportStatus::Ok();
    }
    size_t got = 0;
    ImportStatus st = Refill(pos_, &got);
    if (!st.ok()) return st;
    if (got == 0) {
      *c = -1;
      return ImportStatus::Ok();
    }
  }
}

ImportStatus JsonStream::ReadValue(std::string_view* span) {
  int first = 0;
  ImportStatus st = Peek(&first);
  if (!st.ok()) return st;
  value_offset_ = offset();
  if (first < 0) {
    return ImportStatus::Error(
        "byte " + std::to_string(offset()) + ": unexpected end of input, expected a value",
        offset());
  }
  const size_t start_rel = 0;
  (void)start_rel;
  size_t i = pos_ + 1;  // pos_ is the value's first byte
  auto refill = [&](bool* at_end) -> ImportStatus {
    size_t got = 0;
    const size_t start = pos_;
    ImportStatus r = Refill(pos_, &got);  // pos_ becomes 0
    i -= start;
    *at_end = got == 0;
    return r;
  };

  if (first == '{' || first == '[') {
    int depth = 1;
    stack_[0] = static_cast<char>(first);
    bool in_string = false;
    bool escape = false;
    for (;;) {
      const char* p = buf_.get();
      const size_t end = end_;
      while (i < end) {
        if (in_string) {
          if (escape) {
            escape = false;
            ++i;
            continue;
          }
          while (i < end && !kStringStop[static_cast<unsigned char>(p[i])]) ++i;
          if (i == end) break;
          if (p[i] == '\\') {
            escape = true;
          } else {
            in_string = false;
          }
          ++i;
          continue;
        }
        while (i < end && !kStructural[static_cast<unsigned char>(p[i])]) ++i;
        if (i == end) break;
        const char ch = p[i++];
        if (ch == '"') {
          in_string = true;
        } else if (ch == '{' || ch == '[') {
          if (depth >= max_depth_) {
            return ImportStatus::Error("byte " + std::to_string(base_ + i - 1) +
                                           ": JSON nested deeper than " +
                                           std::to_string(max_depth_) +
                                           " levels; expected a flatter event",
                                       base_ + i - 1);
          }
          stack_[depth++] = ch;
        } else {
          const char open = stack_[depth - 1];
          if ((ch == '}') != (open == '{')) {
            return ImportStatus::Error("byte " + std::to_string(base_ + i - 1) + ": expected '" +
                                           (open == '{' ? "}" : "]") + "', found '" + ch + "'",
                                       base_ + i - 1);
          }
          if (--depth == 0) {
            *span = std::string_view(p + pos_, i - pos_);
            pos_ = i;
            return ImportStatus::Ok();
          }
        }
      }
      bool at_end = false;
      st = refill(&at_end);
      if (!st.ok()) return st;
      if (at_end) {
        return ImportStatus::Error(
            "byte " + std::to_string(base_ + i) + ": unexpected end of input inside the " +
                (first == '{' ? "object" : "array") + " that starts at byte " +
                std::to_string(value_offset_) + "; expected " +
                (in_string ? "'\"' to close a string" :
                 (stack_[depth - 1] == '{' ? std::string("'}'") : std::string("']'"))) +
                " (truncated file?)",
            base_ + i);
      }
    }
  }

  if (first == '"') {
    bool escape = false;
    for (;;) {
      const char* p = buf_.get();
      while (i < end_) {
        if (escape) {
          escape = false;
          ++i;
          continue;
        }
        while (i < end_ && !kStringStop[static_cast<unsigned char>(p[i])]) ++i;
        if (i == end_) break;
        if (p[i++] == '\\') {
          escape = true;
        } else {
          *span = std::string_view(p + pos_, i - pos_);
          pos_ = i;
          return ImportStatus::Ok();
        }
      }
      bool at_end = false;
      st = refill(&at_end);
      if (!st.ok()) return st;
      if (at_end) {
        return ImportStatus::Error("byte " + std::to_string(base_ + i) +
                                       ": unexpected end of input inside the string that starts "
                                       "at byte " +
                                       std::to_string(value_offset_) + "; expected '\"'",
                                   base_ + i);
      }
    }
  }

  // A scalar: number, true, false, null (validated by whoever parses it).
  if (first == '}' || first == ']' || first == ',' || first == ':') {
    return ImportStatus::Error("byte " + std::to_string(offset()) + ": expected a value, found " +
                                   Describe(first),
                               offset());
  }
  for (;;) {
    const char* p = buf_.get();
    while (i < end_ && !EndsScalar(p[i])) ++i;
    if (i < end_) break;
    bool at_end = false;
    st = refill(&at_end);
    if (!st.ok()) return st;
    if (at_end) break;
  }
  if (i - pos_ > 64) {
    return ImportStatus::Error("byte " + std::to_string(offset()) +
                                   ": expected a number, string, object, array, true, false or "
                                   "null",
                               offset());
  }
  *span = std::string_view(buf_.get() + pos_, i - pos_);
  pos_ = i;
  return ImportStatus::Ok();
}

ImportStatus JsonStream::ReadRawString(std::string* out) {
  int c = 0;
  ImportStatus st = Peek(&c);
  if (!st.ok()) return st;
  if (c != '"') {
    return ImportStatus::Error("byte " + std::to_string(offset()) +
                                   ": expected '\"' to start a key, found " + Describe(c),
                               offset());
  }
  std::string_view span;
  st = ReadValue(&span);
  if (!st.ok()) return st;
  out->assign(span.substr(1, span.size() - 2));
  return ImportStatus::Ok();
}

}  // namespace opscope::analysis
