// Plain, in-memory and gzip byte sources.
#include "import/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace opscope::import {
namespace {

// A raw (possibly compressed) byte stream with a small pushback for the magic-byte sniff.
class RawFile final : public ByteSource {
 public:
  explicit RawFile(std::FILE* f) : f_(f) {}
  ~RawFile() override { std::fclose(f_); }
  Status Read(char* dst, size_t capacity, size_t* n) override {
    *n = std::fread(dst, 1, capacity, f_);
    if (*n == 0 && std::ferror(f_)) {
      return Status::IoError("read error after byte " + std::to_string(consumed_) + ": " +
                             std::strerror(errno));
    }
    consumed_ += *n;
    return Status::Ok();
  }
  uint64_t input_bytes() const override { return consumed_; }

 private:
  std::FILE* f_;
  uint64_t consumed_ = 0;
};

class RawMemory final : public ByteSource {
 public:
  explicit RawMemory(std::string_view data) : data_(data) {}
  Status Read(char* dst, size_t capacity, size_t* n) override {
    *n = std::min(capacity, data_.size() - pos_);
    if (*n) std::memcpy(dst, data_.data() + pos_, *n);
    pos_ += *n;
    return Status::Ok();
  }
  uint64_t input_bytes() const override { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Inflates a gzip stream (several concatenated members are allowed) from a raw source, with
// Intel ISA-L's inflate (about 3x zlib's speed on trace JSON).
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> raw) : raw_(std::move(raw)), in_(kInChunk) {
    StartMember();
  }

  Status Read(char* dst, size_t capacity, size_t* n) override {
    *n = 0;
    uint8_t* out = reinterpret_cast<uint8_t*>(dst);
    size_t room = std::min<size_t>(capacity, 1u << 30);
    while (room > 0 && !done_) {
      if (s_.avail_in == 0) {
        size_t got = 0;
        Status st = raw_->Read(in_.data(), in_.size(), &got);
        if (!st.ok()) return st;
        if (got == 0) {
          if (member_started_) {
            return Status::InvalidInput("gzip stream ends early (truncated file?) after " +
                                            std::to_string(raw_->input_bytes()) +
                                            " compressed bytes, at uncompressed byte " +
                                            std::to_string(total_out_ + *n) +
                                            ": expected the rest of the compressed data",
                                        total_out_ + *n);
          }
          done_ = true;
          break;
        }
        s_.next_in = reinterpret_cast<uint8_t*>(in_.data());
        s_.avail_in = static_cast<uint32_t>(got);
      }
      member_started_ = true;
      s_.next_out = out;
      s_.avail_out = static_cast<uint32_t>(room);
      const int rc = isal_inflate(&s_);
      const size_t produced = room - s_.avail_out;
      out += produced;
      room -= produced;
      *n += produced;
      if (rc != ISAL_DECOMP_OK) {
        return Status::InvalidInput("gzip data is corrupt near compressed byte " +
                                        std::to_string(raw_->input_bytes() - s_.avail_in) + ": " +
                                        Describe(rc) + "; expected a valid deflate stream",
                                    total_out_ + *n);
      }
      if (s_.block_state == ISAL_BLOCK_FINISH) {
        // Another member may follow (concatenated gzip files).
        uint8_t* next_in = s_.next_in;
        const uint32_t avail_in = s_.avail_in;
        StartMember();
        s_.next_in = next_in;
        s_.avail_in = avail_in;
      }
    }
    total_out_ += *n;
    return Status::Ok();
  }
  uint64_t input_bytes() const override { return raw_->input_bytes(); }

 private:
  static constexpr size_t kInChunk = 64 * 1024;

  void StartMember() {
    isal_inflate_init(&s_);
    s_.crc_flag = ISAL_GZIP;  // parse the gzip header and verify the CRC
    member_started_ = false;
  }

  static std::string Describe(int rc) {
    switch (rc) {
      case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
      case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK:
        return "invalid back-reference distance";
      case ISAL_INVALID_WRAPPER:
        return "invalid gzip header";
      case ISAL_UNSUPPORTED_METHOD:
        return "compression method is not deflate";
      case ISAL_INCORRECT_CHECKSUM:
        return "CRC mismatch";
      case ISAL_NEED_DICT:
        return "stream needs a preset dictionary";
      default:
        return "inflate failed (code " + std::to_string(rc) + ")";
    }
  }

  std::unique_ptr<ByteSource> raw_;
  std::vector<char> in_;
  inflate_state s_;
  bool member_started_ = false;
  bool done_ = false;
  uint64_t total_out_ = 0;
};

// Gives back the sniffed bytes first, then the rest of the inner source.
class Prefixed final : public ByteSource {
 public:
  Prefixed(std::string prefix, std::unique_ptr<ByteSource> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  Status Read(char* dst, size_t capacity, size_t* n) override {
    if (pos_ < prefix_.size()) {
      *n = std::min(capacity, prefix_.size() - pos_);
      std::memcpy(dst, prefix_.data() + pos_, *n);
      pos_ += *n;
      return Status::Ok();
    }
    return inner_->Read(dst, capacity, n);
  }
  uint64_t input_bytes() const override { return inner_->input_bytes(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

Status Sniff(std::unique_ptr<ByteSource> raw, std::unique_ptr<ByteSource>* out) {
  char magic[2];
  size_t got = 0;
  while (got < 2) {
    size_t n = 0;
    Status st = raw->Read(magic + got, 2 - got, &n);
    if (!st.ok()) return st;
    if (n == 0) break;
    got += n;
  }
  auto prefixed = std::make_unique<Prefixed>(std::string(magic, got), std::move(raw));
  if (got == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
    *out = std::make_unique<GzipSource>(std::move(prefixed));
  } else {
    *out = std::move(prefixed);
  }
  return Status::Ok();
}

class Failing final : public ByteSource {
 public:
  explicit Failing(Status error) : error_(std::move(error)) {}
  Status Read(char*, size_t, size_t* n) override {
    *n = 0;
    return error_;
  }
  uint64_t input_bytes() const override { return 0; }

 private:
  Status error_;
};

}  // namespace

std::unique_ptr<ByteSource> FailingSource(Status error) {
  return std::make_unique<Failing>(std::move(error));
}

std::unique_ptr<ByteSource> Prepend(std::string prefix, std::unique_ptr<ByteSource> inner) {
  return std::make_unique<Prefixed>(std::move(prefix), std::move(inner));
}

bool IsGzipSource(const ByteSource* source) {
  return dynamic_cast<const GzipSource*>(source) != nullptr;
}

namespace {

// Opens the named pipe `path` once a writer has sent something or closed it; nullptr with errno
// set (ETIMEDOUT when no writer came).
// `wait_ms` <= 0 waits without limit. (`<(zcat trace.json.gz)` writes within milliseconds; a pipe
// nobody writes to would block forever.)
std::FILE* OpenPipe(const std::string& path, int wait_ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  pollfd p{fd, POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&p, 1, wait_ms > 0 ? wait_ms : -1);
  } while (ready < 0 && errno == EINTR);
  const int flags = ::fcntl(fd, F_GETFL);
  std::FILE* f = ready > 0 && flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0
                     ? ::fdopen(fd, "rb")
                     : nullptr;
  if (f == nullptr) {
    const int error = ready == 0 ? ETIMEDOUT : errno;
    ::close(fd);
    errno = error;
  }
  return f;
}

}  // namespace

Status OpenFileSource(const std::string& path, std::unique_ptr<ByteSource>* out,
                      int pipe_writer_wait_ms) {
  struct stat named {};
  const bool pipe = ::stat(path.c_str(), &named) == 0 && S_ISFIFO(named.st_mode);
  std::FILE* f = pipe ? OpenPipe(path, pipe_writer_wait_ms) : std::fopen(path.c_str(), "rb");
  if (!f && pipe && errno == ETIMEDOUT) {
    return Status::IoError("cannot open " + path +
                               ": a named pipe that no program wrote to within " +
                               fmt::format("{:g} s", pipe_writer_wait_ms / 1000.0),
                           path);
  }
  if (!f) {
    const int error = errno;
    std::string message = "cannot open " + path + ": " + std::strerror(error);
    return error == ENOENT ? Status::NotFound(std::move(message), path)
                           : Status::IoError(std::move(message), path);
  }
  struct stat st {};
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return Status::IoError("cannot open " + path + ": it is a directory, not a file", path);
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
    std::fclose(f);  // a device's bytes are no trace, and some (/dev/zero) never end
    return Status::IoError("cannot open " + path + ": it is a device, not a trace file", path);
  }
  return Sniff(std::make_unique<RawFile>(f), out).InFile(path);
}

std::unique_ptr<ByteSource> OpenMemorySource(std::string_view data) {
  std::unique_ptr<ByteSource> out;
  (void)Sniff(std::make_unique<RawMemory>(data), &out);  // memory reads cannot fail
  return out;
}

}  // namespace opscope::import
