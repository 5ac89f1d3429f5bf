// Status: the outcome of an operation that can fail on bad input or a refusing environment.
//
//   opscope::Status st = opscope::ImportTrace("rank-0.pt.trace.json.gz", &trace);
//   if (!st.ok()) {
//     std::cerr << st.message() << "\n";   // what was expected and where
//     if (st.code() == opscope::Status::Code::kInvalidInput) Highlight(st.file(), st.offset());
//   }
//
// One error style per layer (docs/architecture.md, "Errors"):
//   - Status for everything recoverable that comes from outside the program: trace import (file,
//     gzip, JSON), trace export (Chrome trace writing), the Explorer's files and server, and the
//     C++ toolchain and kernel cache behind compile(). These never throw.
//   - Exceptions only where the API is torch-like and PyTorch raises: tensor checks (TensorError),
//     the profiler session API (ProfilerError), and compile() as the user calls it (CaptureError,
//     GraphError).
//
// A Status is a pointer: an ok one holds nothing and costs a null check; an error holds its code,
// message, and for input errors the file and byte offset. message() is complete on its own (it
// already names the file, byte offset and event index where they are known); file() and offset()
// repeat them for programs.
//
// Thread safety: a Status is a value; distinct objects may be used from any thread.
#ifndef OPSCOPE_STATUS_H_
#define OPSCOPE_STATUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace opscope {

class Status {
 public:
  enum class Code : uint8_t {
    kOk = 0,
    kInvalidInput,     // the data read is malformed (corrupt trace, bad JSON, cut gzip stream)
    kInvalidArgument,  // a value the caller gave is unusable (bad port, bad shape text)
    kNotFound,         // a named file or directory does not exist or holds nothing usable
    kIoError,          // the system refused a read, write, rename or bind
    kUnavailable,      // an outside tool or resource cannot be used (no C++ compiler)
  };

  Status() noexcept = default;  // ok
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() noexcept { return Status(); }
  // `offset`: byte offset of the error in the uncompressed input.
  static Status InvalidInput(std::string message, uint64_t offset, std::string file = {});
  static Status InvalidArgument(std::string message);
  static Status NotFound(std::string message, std::string file = {});
  static Status IoError(std::string message, std::string file = {});
  static Status Unavailable(std::string message);

  bool ok() const noexcept { return rep_ == nullptr; }
  Code code() const noexcept { return rep_ ? rep_->code : Code::kOk; }
  // What failed, what was expected and where; "" when ok.
  const std::string& message() const noexcept;
  // The file the error is about; "" when none is known.
  const std::string& file() const noexcept;
  // Byte offset of an input error in the uncompressed input; 0 for other errors.
  uint64_t offset() const noexcept { return rep_ ? rep_->offset : 0; }

  // "OK", or the code's name and the message ("invalid input: byte 12: expected ...").
  std::string ToString() const;
  // This error as said of `path`: file() = path and the message prefixed by "PATH: ". Ok stays ok.
  Status InFile(std::string_view path) &&;

 private:
  struct Rep {
    Code code;
    uint64_t offset;
    std::string message;
    std::string file;
  };
  Status(Code code, std::string message, uint64_t offset, std::string file);

  std::unique_ptr<Rep> rep_;  // null when ok
};

std::string_view ToString(Status::Code code);

}  // namespace opscope

#endif  // OPSCOPE_STATUS_H_
