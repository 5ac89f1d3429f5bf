// Byte sources for the importer: a plain file, bytes in memory, or either one gzip-compressed.
//
// A source hands out the uncompressed stream in pieces; Read() fills up to `capacity` bytes and
// reports 0 at the end. Errors come back as a Status: kIoError for an unreadable file,
// kInvalidInput (offset = uncompressed byte) for a corrupt or cut gzip stream, with a message
// naming the compressed and uncompressed offsets. Not thread-safe.
#ifndef OPSCOPE_IMPORT_BYTE_SOURCE_H_
#define OPSCOPE_IMPORT_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope::import {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `capacity` bytes into `dst`; *n = 0 means end of stream.
  virtual Status Read(char* dst, size_t capacity, size_t* n) = 0;
  // Bytes consumed from the underlying storage so far (compressed bytes for gzip).
  virtual uint64_t input_bytes() const = 0;
};

// Opens `path`; gzip is detected from the magic bytes, not the name. kNotFound when the file does
// not exist, else kIoError when it cannot be opened, is a directory or cannot be read; every
// error names the path.
// A named pipe must get a writer's first bytes (or its close) within `pipe_writer_wait_ms` (0:
// no limit).
Status OpenFileSource(const std::string& path, std::unique_ptr<ByteSource>* out,
                      int pipe_writer_wait_ms = 5000);
// True when `source` (from OpenFileSource / OpenMemorySource) inflates gzip.
bool IsGzipSource(const ByteSource* source);
// `data` must outlive the source. gzip is detected from the magic bytes.
std::unique_ptr<ByteSource> OpenMemorySource(std::string_view data);
// A source whose every Read returns `error` (an error met while reading ahead, given back where
// the reader reaches it).
std::unique_ptr<ByteSource> FailingSource(Status error);
// Gives `prefix` first, then what `inner` gives (bytes read ahead to detect a format, handed
// back). input_bytes() is the inner source's.
std::unique_ptr<ByteSource> Prepend(std::string prefix, std::unique_ptr<ByteSource> inner);

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_BYTE_SOURCE_H_
