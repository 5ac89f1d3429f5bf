// Plain, in-memory and gzip byte sources.
#include "analysis/byte_source.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace opscope::analysis {
namespace {

// A raw (possibly compressed) byte stream with a small pushback for the magic-byte sniff.
class RawFile final : public ByteSource {
 public:
  explicit RawFile(std::FILE* f) : f_(f) {}
  ~RawFile() override { std::fclose(f_); }
  ImportStatus Read(char* dst, size_t capacity, size_t* n) override {
    *n = std::fread(dst, 1, capacity, f_);
    if (*n == 0 && std::ferror(f_)) {
      return ImportStatus::Error(
          "read error after byte " + std::to_string(consumed_) + ": " + std::strerror(errno),
          consumed_);
    }
    consumed_ += *n;
    return ImportStatus::Ok();
  }
  uint64_t input_bytes() const override { return consumed_; }

 private:
  std::FILE* f_;
  uint64_t consumed_ = 0;
};

class RawMemory final : public ByteSource {
 public:
  explicit RawMemory(std::string_view data) : data_(data) {}
  ImportStatus Read(char* dst, size_t capacity, size_t* n) override {
    *n = std::min(capacity, data_.size() - pos_);
    if (*n) std::memcpy(dst, data_.data() + pos_, *n);
    pos_ += *n;
    return ImportStatus::Ok();
  }
  uint64_t input_bytes() const override { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Inflates a gzip stream (several concatenated members are allowed) from a raw source.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> raw) : raw_(std::move(raw)), in_(kInChunk) {
    std::memset(&z_, 0, sizeof(z_));
    init_ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;
  }
  ~GzipSource() override { inflateEnd(&z_); }

  ImportStatus Read(char* dst, size_t capacity, size_t* n) override {
    *n = 0;
    if (!init_ok_) return ImportStatus::Error("gzip: cannot initialise zlib", 0);
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
    while (z_.avail_out > 0 && !done_) {
      if (z_.avail_in == 0) {
        size_t got = 0;
        ImportStatus st = raw_->Read(in_.data(), in_.size(), &got);
        if (!st.ok()) return st;
        if (got == 0) {
          if (member_started_) {
            return ImportStatus::Error("gzip stream ends early (truncated file?) after " +
                                           std::to_string(raw_->input_bytes()) +
                                           " compressed bytes, at uncompressed byte " +
                                           std::to_string(total_out_ + (capacity - z_.avail_out)) +
                                           ": expected the rest of the compressed data",
                                       total_out_ + (capacity - z_.avail_out));
          }
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      member_started_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        // Another member may follow (concatenated gzip files); trailing zero padding ends it.
        if (inflateReset(&z_) != Z_OK) done_ = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return ImportStatus::Error(std::string("gzip data is corrupt near compressed byte ") +
                                       std::to_string(raw_->input_bytes() - z_.avail_in) + ": " +
                                       (z_.msg ? z_.msg : "inflate failed") +
                                       "; expected a valid deflate stream",
                                   total_out_ + (capacity - z_.avail_out));
      }
    }
    *n = capacity - z_.avail_out;
    total_out_ += *n;
    return ImportStatus::Ok();
  }
  uint64_t input_bytes() const override { return raw_->input_bytes(); }

 private:
  static constexpr size_t kInChunk = 256 * 1024;
  std::unique_ptr<ByteSource> raw_;
  std::vector<char> in_;
  z_stream z_;
  bool init_ok_ = false;
  bool member_started_ = false;
  bool done_ = false;
  uint64_t total_out_ = 0;
};

// Gives back the sniffed bytes first, then the rest of the inner source.
class Prefixed final : public ByteSource {
 public:
  Prefixed(std::string prefix, std::unique_ptr<ByteSource> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  ImportStatus Read(char* dst, size_t capacity, size_t* n) override {
    if (pos_ < prefix_.size()) {
      *n = std::min(capacity, prefix_.size() - pos_);
      std::memcpy(dst, prefix_.data() + pos_, *n);
      pos_ += *n;
      return ImportStatus::Ok();
    }
    return inner_->Read(dst, capacity, n);
  }
  uint64_t input_bytes() const override { return inner_->input_bytes(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

ImportStatus Sniff(std::unique_ptr<ByteSource> raw, std::unique_ptr<ByteSource>* out) {
  char magic[2];
  size_t got = 0;
  while (got < 2) {
    size_t n = 0;
    ImportStatus st = raw->Read(magic + got, 2 - got, &n);
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
  return ImportStatus::Ok();
}

}  // namespace

bool IsGzipSource(const ByteSource* source) {
  return dynamic_cast<const GzipSource*>(source) != nullptr;
}

ImportStatus OpenFileSource(const std::string& path, std::unique_ptr<ByteSource>* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return ImportStatus::Error("cannot open " + path + ": " + std::strerror(errno), 0);
  }
  return Sniff(std::make_unique<RawFile>(f), out);
}

std::unique_ptr<ByteSource> OpenMemorySource(std::string_view data) {
  std::unique_ptr<ByteSource> out;
  (void)Sniff(std::make_unique<RawMemory>(data), &out);  // memory reads cannot fail
  return out;
}

}  // namespace opscope::analysis
