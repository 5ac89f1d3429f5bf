// A streaming reader over one large JSON text: it never holds more than the value being read.
//
// Kineto traces are one object whose "traceEvents" array holds millions of small objects. This
// reader walks the outer structure byte by byte and hands out each complete value (an event, or
// a top-level value) as one contiguous span, followed in memory by at least kPadding readable
// bytes so simdjson can parse it in place. The span stays valid until the next call.
//
// Errors name the byte offset in the uncompressed stream and what was expected. Not thread-safe.
#ifndef OPSCOPE_ANALYSIS_JSON_STREAM_H_
#define OPSCOPE_ANALYSIS_JSON_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "analysis/byte_source.h"
#include "opscope/analysis.h"

namespace opscope::analysis {

class JsonStream {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING

  // `source` must outlive the stream. `max_depth` bounds the nesting of one value.
  JsonStream(ByteSource* source, int max_depth, size_t initial_buffer = 1 << 20);

  // Skips whitespace and sets *c to the next byte, or -1 at the end of input.
  ImportStatus Peek(int* c);
  // Consumes the byte Peek() returned.
  void Skip() { ++pos_; }
  // Reads one complete JSON value starting at the next non-whitespace byte. *span covers the
  // value's text; the bytes after it are readable padding.
  ImportStatus ReadValue(std::string_view* span);
  // Reads a JSON string and returns its raw text between the quotes (escapes not resolved).
  ImportStatus ReadRawString(std::string* out);

  // Offset in the stream of the next unread byte.
  uint64_t offset() const { return base_ + pos_; }
  // Offset of the first byte of the last value ReadValue returned.
  uint64_t value_offset() const { return value_offset_; }
  uint64_t bytes_read() const { return base_ + end_; }

 private:
  // Moves [keep_from, end_) to the front and reads more; grows the buffer when it is full.
  // *got = bytes added (0 at end of input).
  ImportStatus Refill(size_t keep_from, size_t* got);
  static std::string Describe(int c);

  ByteSource* source_;
  int max_depth_;
  std::unique_ptr<char[]> buf_;
  size_t cap_;         // usable bytes (the allocation holds cap_ + kPadding)
  size_t pos_ = 0;     // next unread byte
  size_t end_ = 0;     // filled bytes
  uint64_t base_ = 0;  // stream offset of buf_[0]
  uint64_t value_offset_ = 0;
  bool eof_ = false;
  std::unique_ptr<char[]> stack_;  // open brackets of the value being scanned
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_JSON_STREAM_H_
