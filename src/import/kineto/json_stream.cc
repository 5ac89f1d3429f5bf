// Streaming JSON value scanner (see json_stream.h).
#include "import/kineto/json_stream.h"

#include <algorithm>
#include <cstring>

namespace opscope::import {
namespace {

constexpr size_t kMaxValueBytes = size_t{1} << 30;  // one value (event) may not exceed 1 GiB

using internal::ContainerScan;
using internal::EndsJsonScalar;
using internal::IsJsonSpace;

}  // namespace

JsonStream::JsonStream(ByteSource* source, int max_depth, size_t initial_buffer,
                       internal::JsonScanKernel kernel)
    : source_(source),
      kernel_(internal::ResolveJsonScanKernel(kernel)),
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
    while (pos_ < end_ && IsJsonSpace(buf_[pos_])) ++pos_;
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
    const ContainerScan r =
        internal::ScanContainer(kernel_, p, i, end, stack_.get(), max_depth_, 1);
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
    const size_t string_end = internal::JsonStringEnd(p, i, end);
    if (string_end != internal::kJsonNoEnd) {
      *end_out = string_end;
      return Scan::kComplete;
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
  while (i < end && !EndsJsonScalar(p[i])) ++i;
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

Status JsonStream::StartBatch(uint64_t first_index, Batch* batch, bool* end) {
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
  return Status::Ok();
}

Status JsonStream::RefillBeforeElement(std::string_view what, uint64_t index) {
  size_t got = 0;
  Status st = Refill(pos_, &got);
  if (!st.ok() || got > 0) return st;
  return Status::InvalidInput(
      "byte " + std::to_string(offset()) + ": unexpected end of input, expected " +
          (after_element_
               ? "',' or ']' after " + std::string(what) + " " + std::to_string(index - 1)
               : std::string("a value")) +
          " (truncated file?)",
      offset());
}

Status JsonStream::ReadSeparator(std::string_view what, uint64_t index, bool* array_end) {
  const char c = buf_[pos_];
  if (c != ',' && c != ']') {
    return Status::InvalidInput(
        "byte " + std::to_string(offset()) + ": expected ',' or ']' after " + std::string(what) +
            " " + std::to_string(index - 1) + ", found " + Describe(static_cast<unsigned char>(c)),
        offset());
  }
  ++pos_;
  after_element_ = false;
  *array_end = c == ']';
  return Status::Ok();
}

Status JsonStream::RefillInsideElement(std::string_view what, uint64_t index) {
  const uint64_t value_offset = offset();
  size_t got = 0;
  Status st = Refill(pos_, &got);
  if (!st.ok() || got > 0) return st;
  size_t value_end = 0;
  const char* missing = "";
  Status error;
  // A number or literal may end with the input.
  if (ScanValue(pos_, &value_end, &missing, &error) == Scan::kComplete) return Status::Ok();
  return Status::InvalidInput(
      "byte " + std::to_string(base_ + end_) + ": unexpected end of input inside " +
          std::string(what) + " " + std::to_string(index) + ", which starts at byte " +
          std::to_string(value_offset) + "; expected " + missing + " (truncated file?)",
      base_ + end_);
}

void JsonStream::WrapBatch(size_t first_start, size_t last_end, Batch* batch) {
  // The byte before the first element was consumed (the headroom byte when the element starts
  // the buffer); the byte after the last one is saved and restored by RestoreSentinel.
  char* const first = buf_ + first_start;
  first[-1] = '[';
  sentinel_ = last_end;
  sentinel_byte_ = buf_[last_end];
  buf_[last_end] = ']';
  batch->array = std::string_view(first - 1, last_end - first_start + 2);
}

Status JsonStream::ReadElements(size_t max_bytes, std::string_view what, uint64_t first_index,
                                Batch* batch, bool* end) {
  if (Status st = StartBatch(first_index, batch, end); !st.ok()) return st;
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
    while (pos_ < end_ && IsJsonSpace(buf_[pos_])) ++pos_;
    if (pos_ == end_) {
      if (!batch->elements.empty()) break;
      if (Status st = RefillBeforeElement(what, index()); !st.ok()) return st;
      continue;
    }
    if (after_element_) {
      if (Status st = ReadSeparator(what, index(), end); !st.ok()) return fail(std::move(st));
      if (*end) break;
      continue;
    }
    if (buf_[pos_] == ']' && index() == 0) {  // an empty array
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
      if (Status st = RefillInsideElement(what, index()); !st.ok()) return st;
      continue;
    }
    if (batch->elements.empty()) first_start = pos_;
    batch->elements.emplace_back(buf_ + pos_, value_end - pos_);
    batch->offsets.push_back(base_ + pos_);
    last_end = value_end;
    pos_ = value_end;
    after_element_ = true;
  }
  if (!batch->elements.empty()) WrapBatch(first_start, last_end, batch);
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

}  // namespace opscope::import
