// A streaming reader over one large JSON text: it never holds more than the value being read.
//
// Kineto traces are one object whose "traceEvents" array holds millions of small objects. This
// reader walks the outer structure with the shared scanner (trace/json_scan.h) and hands out each
// complete value (an event, or a top-level value) as one contiguous span, followed in memory by at
// least kPadding readable bytes so simdjson can parse it in place. The span stays valid until the
// next call.
//
// For the one large array, ReadElements hands out many elements at once as a single JSON array
// text, so a parser can take the whole batch in one pass instead of one call per element.
//
// Errors name the byte offset in the uncompressed stream and what was expected. Not thread-safe.
#ifndef OPSCOPE_IMPORT_KINETO_JSON_STREAM_H_
#define OPSCOPE_IMPORT_KINETO_JSON_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_scan.h"
#include "import/byte_source.h"
#include "opscope/status.h"

namespace opscope::import {

class JsonStream {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING

  // `source` must outlive the stream. `max_depth` bounds the nesting of one value. `kernel`: the
  // scanner's instruction set (trace/json_scan.h); tests pick each one.
  JsonStream(ByteSource* source, int max_depth, size_t initial_buffer = 1 << 20,
             internal::JsonScanKernel kernel = internal::JsonScanKernel::kAuto);

  // Skips whitespace and sets *c to the next byte, or -1 at the end of input.
  Status Peek(int* c);
  // Consumes the byte Peek() returned.
  void Skip() { ++pos_; }
  // Reads one complete JSON value starting at the next non-whitespace byte. *span covers the
  // value's text; the bytes after it are readable padding.
  Status ReadValue(std::string_view* span);
  // Reads a JSON string and returns its raw text between the quotes (escapes not resolved).
  Status ReadRawString(std::string* out);

  // Elements of an array, read in batches.
  struct Batch {
    // The batch as one JSON array: '[', the elements with the separators between them as they
    // appear in the input, ']'. The brackets are written into the stream's buffer; kPadding
    // readable bytes follow. Valid until the next call on the stream.
    std::string_view array;
    std::vector<std::string_view> elements;  // each element's text, inside `array`
    std::vector<uint64_t> offsets;           // stream offset of each element's first byte
  };
  // Reads the next elements of an array whose '[' has been consumed: as many complete elements as
  // the buffer holds, up to about `max_bytes` of text, and at least one unless the array ends.
  // Sets *end once the closing ']' is consumed. `first_index` is the number of elements of this
  // array read so far and `what` names them ("traceEvents entry"), for messages. When an error
  // follows complete elements, those elements are returned first and the error by the next call.
  Status ReadElements(size_t max_bytes, std::string_view what, uint64_t first_index, Batch* batch,
                      bool* end);

  // Offset in the stream of the next unread byte.
  uint64_t offset() const { return base_ + pos_; }
  // Offset of the first byte of the last value ReadValue returned.
  uint64_t value_offset() const { return value_offset_; }
  uint64_t bytes_read() const { return base_ + end_; }

 private:
  enum class Scan { kComplete, kIncomplete, kError };
  // Scans the value whose first byte is buf_[start] within the bytes read so far. kComplete: *end
  // is one past it. kIncomplete: the input read so far ends inside it; *missing says what would
  // close it. kError: *error says what is wrong.
  Scan ScanValue(size_t start, size_t* end, const char** missing, Status* error);
  // Moves [keep_from, end_) to the front and reads more; grows the buffer when it is full.
  // *got = bytes added (0 at end of input).
  Status Refill(size_t keep_from, size_t* got);
  // ReadElements' steps. StartBatch clears the batch and returns an error kept from the last call.
  Status StartBatch(uint64_t first_index, Batch* batch, bool* end);
  // Reads more input where the next element (or separator) is expected; fails at the end.
  Status RefillBeforeElement(std::string_view what, uint64_t index);
  // Consumes the ',' or ']' after element index - 1; *array_end says which.
  Status ReadSeparator(std::string_view what, uint64_t index, bool* array_end);
  // Reads more input while element `index` is incomplete; fails when the input ends inside it.
  Status RefillInsideElement(std::string_view what, uint64_t index);
  // Makes batch->array the elements [first_start, last_end) of buf_ wrapped in brackets.
  void WrapBatch(size_t first_start, size_t last_end, Batch* batch);
  // Puts back the byte a batch's closing ']' overwrote.
  void RestoreSentinel() {
    if (sentinel_ != kNoSentinel) {
      buf_[sentinel_] = sentinel_byte_;
      sentinel_ = kNoSentinel;
    }
  }
  static std::string Describe(int c);

  static constexpr size_t kNoSentinel = ~size_t{0};
  ByteSource* source_;
  internal::JsonScanKernel kernel_;  // resolved
  int max_depth_;
  // One byte of headroom (a batch's '['), buf_, then kPadding + 1 bytes (a batch's ']' may sit
  // at buf_[cap_]).
  std::unique_ptr<char[]> storage_;
  char* buf_ = nullptr;
  size_t cap_;         // usable bytes
  size_t pos_ = 0;     // next unread byte
  size_t end_ = 0;     // filled bytes
  uint64_t base_ = 0;  // stream offset of buf_[0]
  uint64_t value_offset_ = 0;
  bool eof_ = false;
  std::unique_ptr<char[]> stack_;  // open brackets of the value being scanned
  size_t sentinel_ = kNoSentinel;  // where a batch's ']' was written
  char sentinel_byte_ = 0;
  bool after_element_ = false;  // ReadElements: an element was read, a ',' or ']' comes next
  Status pending_error_ = Status::Ok();  // ReadElements: reported by the next call
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_JSON_STREAM_H_
