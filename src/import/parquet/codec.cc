// Page decompression through each codec's own library.
#include "import/parquet/codec.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <climits>
#include <cstring>

namespace opscope::parquet {
namespace {

std::string SizeMismatch(std::string_view codec, size_t got, size_t want) {
  return std::string(codec) + " page decompressed to " + std::to_string(got) +
         " bytes, its header says " + std::to_string(want);
}

std::string Snappy(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  size_t n = 0;
  const char* in = reinterpret_cast<const char*>(src);
  if (!snappy::GetUncompressedLength(in, src_size, &n)) return "malformed SNAPPY page";
  if (n != dst_size) return SizeMismatch("SNAPPY", n, dst_size);
  if (!snappy::RawUncompress(in, src_size, reinterpret_cast<char*>(dst))) {
    return "malformed SNAPPY page";
  }
  return "";
}

// GZIP, allowing several members one after another (Compression.md); zlib's automatic header
// detection also reads the zlib-wrapped deflate some writers produce under this name.
std::string Gzip(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  if (src_size > UINT_MAX || dst_size > UINT_MAX) return "GZIP page over 4 GiB";
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return "zlib could not start";
  z.next_in = const_cast<Bytef*>(src);
  z.avail_in = static_cast<uInt>(src_size);
  z.next_out = dst;
  z.avail_out = static_cast<uInt>(dst_size);
  std::string why;
  while (true) {
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Another member follows unless the input or the page is used up.
      if (z.avail_in == 0 || z.avail_out == 0) break;
      if (inflateReset(&z) != Z_OK) {
        why = "malformed GZIP page";
        break;
      }
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && z.avail_out == 0) {
      why =
          "GZIP page decompresses to more than its header's " + std::to_string(dst_size) + " bytes";
    } else if (rc == Z_BUF_ERROR) {
      why = "GZIP page cut short";
    } else {
      why = std::string("malformed GZIP page: ") + (z.msg ? z.msg : "zlib error");
    }
    break;
  }
  const size_t produced = dst_size - z.avail_out;
  inflateEnd(&z);
  if (!why.empty()) return why;
  return produced == dst_size ? "" : SizeMismatch("GZIP", produced, dst_size);
}

std::string Zstd(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  uint8_t none = 0;
  const size_t n = ZSTD_decompress(dst_size ? dst : &none, dst_size, src, src_size);
  if (ZSTD_isError(n)) return std::string("malformed ZSTD page: ") + ZSTD_getErrorName(n);
  return n == dst_size ? "" : SizeMismatch("ZSTD", n, dst_size);
}

std::string Brotli(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  uint8_t none = 0;
  size_t n = dst_size;
  if (BrotliDecoderDecompress(src_size, src, &n, dst_size ? dst : &none) !=
      BROTLI_DECODER_RESULT_SUCCESS) {
    return "malformed BROTLI page (or it decompresses to more than its header's " +
           std::to_string(dst_size) + " bytes)";
  }
  return n == dst_size ? "" : SizeMismatch("BROTLI", n, dst_size);
}

// An LZ4 block; -1 when malformed.
int64_t Lz4Block(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  if (src_size > INT_MAX || dst_size > INT_MAX) return -1;
  uint8_t none = 0;
  return LZ4_decompress_safe(reinterpret_cast<const char*>(src),
                             reinterpret_cast<char*>(dst_size ? dst : &none),
                             static_cast<int>(src_size), static_cast<int>(dst_size));
}

uint32_t BigEndian32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Hadoop's framing as parquet-mr writes it: blocks of [uncompressed size, compressed size, LZ4
// block], both sizes 4-byte big-endian. False when the input is not framed that way.
bool Lz4Hadoop(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  size_t out = 0;
  while (src_size >= 8) {
    const uint32_t raw = BigEndian32(src);
    const uint32_t packed = BigEndian32(src + 4);
    src += 8;
    src_size -= 8;
    if (packed > src_size || raw > dst_size - out) return false;
    if (Lz4Block(src, packed, dst + out, raw) != raw) return false;
    src += packed;
    src_size -= packed;
    out += raw;
  }
  return src_size == 0 && out == dst_size;
}

std::string Lz4Raw(const uint8_t* src, size_t src_size, uint8_t* dst, size_t dst_size) {
  const int64_t n = Lz4Block(src, src_size, dst, dst_size);
  if (n < 0) return "malformed LZ4_RAW page";
  return static_cast<size_t>(n) == dst_size
             ? ""
             : SizeMismatch("LZ4_RAW", static_cast<size_t>(n), dst_size);
}

}  // namespace

bool IsSupportedCodec(int32_t codec) {
  return codec >= 0 && codec <= static_cast<int32_t>(Codec::kLz4Raw) &&
         codec != static_cast<int32_t>(Codec::kLzo);
}

std::string Decompress(Codec codec, const uint8_t* src, size_t src_size, uint8_t* dst,
                       size_t dst_size) {
  switch (codec) {
    case Codec::kUncompressed:
      if (src_size != dst_size) return SizeMismatch("UNCOMPRESSED", src_size, dst_size);
      if (src_size) std::memcpy(dst, src, src_size);
      return "";
    case Codec::kSnappy:
      return Snappy(src, src_size, dst, dst_size);
    case Codec::kGzip:
      return Gzip(src, src_size, dst, dst_size);
    case Codec::kBrotli:
      return Brotli(src, src_size, dst, dst_size);
    case Codec::kZstd:
      return Zstd(src, src_size, dst, dst_size);
    case Codec::kLz4Raw:
      return Lz4Raw(src, src_size, dst, dst_size);
    case Codec::kLz4:
      if (Lz4Hadoop(src, src_size, dst, dst_size)) return "";
      if (Lz4Block(src, src_size, dst, dst_size) == static_cast<int64_t>(dst_size)) return "";
      return "malformed LZ4 page (neither Hadoop-framed LZ4 nor an LZ4 block)";
    case Codec::kLzo:
      break;
  }
  return "unsupported codec " + std::string(ToString(codec));
}

}  // namespace opscope::parquet
