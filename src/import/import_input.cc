// Opening an import's input once: the head read ahead for detection, then a stream or the whole.
#include "import/import_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace opscope::import {
namespace {

// Reads from `source` until `out` holds `limit` bytes or the source ends.
Status ReadUpTo(ByteSource* source, size_t limit, std::string* out) {
  const size_t start = out->size();
  out->resize(start + limit);
  size_t have = start;
  while (have < start + limit) {
    size_t n = 0;
    Status st = source->Read(out->data() + have, start + limit - have, &n);
    if (!st.ok()) {
      out->resize(have);
      return st;
    }
    if (n == 0) break;
    have += n;
  }
  out->resize(have);
  return Status::Ok();
}

// A gzip stream's last member ends with ISIZE: its uncompressed size mod 2^32, little-endian.
uint64_t GzipTrailerSize(std::string_view last4) {
  if (last4.size() != 4) return 0;
  uint64_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(last4[static_cast<size_t>(i)]);
  return v;
}

}  // namespace

ImportInput::~ImportInput() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

Status ImportInput::OpenFile(const std::string& path, std::unique_ptr<ImportInput>* out,
                             int pipe_writer_wait_ms) {
  std::unique_ptr<ByteSource> source;
  Status st = OpenFileSource(path, &source, pipe_writer_wait_ms);
  if (!st.ok()) return st;
  std::unique_ptr<ImportInput> in(new ImportInput());
  in->path_ = path;
  in->gzip_ = IsGzipSource(source.get());
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
    in->regular_ = true;
    in->stored_bytes_ = static_cast<uint64_t>(info.st_size);
    in->content_bytes_at_least_ = in->stored_bytes_;
    if (in->gzip_ && info.st_size >= 4) {
      char last4[4];
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        if (::pread(fd, last4, 4, info.st_size - 4) == 4) {
          in->content_bytes_at_least_ =
              std::max(in->content_bytes_at_least_, GzipTrailerSize(std::string_view(last4, 4)));
        }
        ::close(fd);
      }
    }
  }
  // An error inside the head is reported where a reader reaches it (a gzip error names its byte);
  // with nothing read at all it is the open's error.
  in->head_status_ = ReadUpTo(source.get(), kHeadBytes, &in->head_);
  if (!in->head_status_.ok() && in->head_.empty()) return std::move(in->head_status_).InFile(path);
  in->source_ = std::move(source);
  *out = std::move(in);
  return Status::Ok();
}

std::unique_ptr<ImportInput> ImportInput::OpenDirectory(const std::string& path) {
  std::unique_ptr<ImportInput> in(new ImportInput());
  in->path_ = path;
  in->directory_ = true;
  return in;
}

std::unique_ptr<ImportInput> ImportInput::OpenMemory(std::string_view data) {
  std::unique_ptr<ImportInput> in(new ImportInput());
  in->memory_ = data;
  in->stored_bytes_ = data.size();
  in->source_ = OpenMemorySource(data);
  in->gzip_ = IsGzipSource(in->source_.get());
  in->content_bytes_at_least_ = data.size();
  if (in->gzip_ && data.size() >= 4) {
    in->content_bytes_at_least_ =
        std::max<uint64_t>(data.size(), GzipTrailerSize(data.substr(data.size() - 4)));
  }
  in->head_status_ = ReadUpTo(in->source_.get(), kHeadBytes, &in->head_);
  return in;
}

std::unique_ptr<ByteSource> ImportInput::TakeStream() {
  if (!source_) return nullptr;
  if (!head_status_.ok()) source_ = FailingSource(head_status_);
  return Prepend(std::move(head_), std::move(source_));
}

Status ImportInput::ReadAll(std::string_view* bytes, uint64_t max_bytes) {
  if (!gzip_ && !memory_.empty()) {
    *bytes = memory_;
    return Status::Ok();
  }
  if (!gzip_ && regular_ && !path_.empty()) {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return Status::IoError("cannot open " + path_ + ": " + std::strerror(errno), path_);
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0 || info.st_size == 0) {
      ::close(fd);
      *bytes = {};
      return Status::Ok();
    }
    void* map = ::mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ,
                       MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
      return Status::IoError("cannot map " + path_ + ": " + std::strerror(errno), path_);
    }
    ::madvise(map, static_cast<size_t>(info.st_size), MADV_SEQUENTIAL);
    mapping_ = map;
    mapping_bytes_ = static_cast<size_t>(info.st_size);
    *bytes = std::string_view(static_cast<const char*>(map), mapping_bytes_);
    return Status::Ok();
  }
  if (!source_) return Status::InvalidInput("the input was already read as a stream", 0, path_);
  if (!head_status_.ok()) return path_.empty() ? head_status_ : Status(head_status_).InFile(path_);
  owned_ = std::move(head_);
  constexpr size_t kStep = size_t{8} << 20;
  for (;;) {
    const size_t before = owned_.size();
    Status st = ReadUpTo(source_.get(), kStep, &owned_);
    if (!st.ok()) return path_.empty() ? st : std::move(st).InFile(path_);
    if (owned_.size() > max_bytes) {
      Status too_big =
          Status::InvalidInput("the input holds more than " + std::to_string(max_bytes) +
                                   " bytes, the most this reader takes in memory",
                               max_bytes);
      return path_.empty() ? too_big : std::move(too_big).InFile(path_);
    }
    if (owned_.size() - before < kStep) break;
  }
  source_.reset();
  *bytes = owned_;
  return Status::Ok();
}

}  // namespace opscope::import
