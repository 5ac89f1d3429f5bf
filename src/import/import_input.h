// What a reader is given: one profile, as a stream of bytes, as bytes in memory, or as a path.
//
// The import entry point opens the input once, reads its first bytes to detect the format (gzip
// inflated), and hands the reader an ImportInput positioned at the first byte. A streaming reader
// (Kineto JSON) takes stream(); a reader that needs the whole input (a protobuf, a Parquet footer
// at the end) takes ReadAll(), which maps a plain file instead of copying it; a reader that needs a
// file on disk (SQLite) or a folder (a Neuron Explorer output directory) takes path().
//
// Not thread-safe; the input must outlive what the reader returns from it (views into ReadAll()).
#ifndef OPSCOPE_IMPORT_IMPORT_INPUT_H_
#define OPSCOPE_IMPORT_IMPORT_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "import/byte_source.h"
#include "opscope/status.h"

namespace opscope::import {

class ImportInput {
 public:
  // Bytes read ahead for format detection (inflated when the input is gzip): enough for a JSON
  // document's top-level keys before traceEvents (Kineto writes deviceProperties first).
  static constexpr size_t kHeadBytes = size_t{1} << 20;

  // A file or named pipe at `path` (gzip detected by content). kNotFound / kIoError name the path.
  // `pipe_writer_wait_ms` as ImportOptions has it.
  static Status OpenFile(const std::string& path, std::unique_ptr<ImportInput>* out,
                         int pipe_writer_wait_ms = 5000);
  // A folder (one profile made of several files).
  static std::unique_ptr<ImportInput> OpenDirectory(const std::string& path);
  // Bytes in memory (plain or gzip); `data` must outlive the input.
  static std::unique_ptr<ImportInput> OpenMemory(std::string_view data);

  ImportInput(const ImportInput&) = delete;
  ImportInput& operator=(const ImportInput&) = delete;
  ~ImportInput();

  // The path given, or empty for memory input.
  const std::string& path() const { return path_; }
  bool is_directory() const { return directory_; }
  // True when the bytes are inflated from gzip.
  bool gzip() const { return gzip_; }
  // A regular file, not a pipe (a reader that needs to seek may open path() itself).
  bool regular_file() const { return regular_; }
  // The first bytes of the (inflated) content, up to kHeadBytes; empty for a folder.
  std::string_view head() const { return head_; }
  // The input's size as stored (compressed bytes for gzip), 0 when unknown (a pipe).
  uint64_t stored_bytes() const { return stored_bytes_; }
  // A lower bound on the content's (inflated) size: the stored size, or for gzip the larger of it
  // and the last member's ISIZE trailer (its uncompressed size mod 2^32: never more than the
  // content of a well-formed stream; a cut one's last bytes are not a trailer); 0 when unknown.
  // For choices that only make an import faster on large inputs (when to start threads).
  uint64_t content_bytes_at_least() const { return content_bytes_at_least_; }

  // The whole (inflated) content as a stream from its first byte. Call once, and not together with
  // ReadAll.
  std::unique_ptr<ByteSource> TakeStream();
  // The whole (inflated) content in memory: a plain regular file is mapped, anything else is read
  // (up to `max_bytes`; more is kInvalidInput naming the limit). The view stays valid while the
  // input lives. Errors name the path.
  Status ReadAll(std::string_view* bytes, uint64_t max_bytes = uint64_t{1} << 40);

 private:
  ImportInput() = default;

  std::string path_;
  bool directory_ = false;
  bool gzip_ = false;
  bool regular_ = false;
  uint64_t stored_bytes_ = 0;
  uint64_t content_bytes_at_least_ = 0;
  std::string head_;
  Status head_status_;                  // an error met while reading the head, after head_'s bytes
  std::string_view memory_;             // OpenMemory's bytes, uninflated
  std::unique_ptr<ByteSource> source_;  // positioned after head_
  std::string owned_;                   // ReadAll's copy
  void* mapping_ = nullptr;             // ReadAll's mapping of a plain file
  size_t mapping_bytes_ = 0;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_IMPORT_INPUT_H_
