// Page decompression (Compression.md): UNCOMPRESSED, SNAPPY (libsnappy), GZIP (zlib, several
// members allowed), BROTLI (libbrotli), ZSTD (libzstd, several frames allowed), LZ4_RAW (liblz4
// block format) and the deprecated LZ4, which is Hadoop's framing of LZ4 blocks from parquet-mr,
// or a bare LZ4 block from the writers that took the name literally (tried in that order).
// LZO is refused.
//
// Each call decompresses one page into exactly the size its header states: a stream that
// produces fewer or more bytes is malformed. Thread-safe (no shared state).
#ifndef OPSCOPE_IMPORT_PARQUET_CODEC_H_
#define OPSCOPE_IMPORT_PARQUET_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "import/parquet/schema.h"

namespace opscope::parquet {

// Decompresses [src, src + src_size) with `codec` into [dst, dst + dst_size), which it must
// fill exactly. "" or the reason (naming the codec).
std::string Decompress(Codec codec, const uint8_t* src, size_t src_size, uint8_t* dst,
                       size_t dst_size);

// True for the codecs Decompress reads.
bool IsSupportedCodec(int32_t codec);

}  // namespace opscope::parquet

#endif  // OPSCOPE_IMPORT_PARQUET_CODEC_H_
