// The Perfetto reader's pipeline:
//
//   bytes (ImportInput::ReadAll: a plain file mapped, gzip inflated)
//     -> PacketWalker: the Trace message's packets, in file order, with their index and offset;
//        compressed_packets (zlib or zstd) inflated and walked in place
//     -> PacketDecoder: sequence state, clocks, track descriptors, track events
//     -> EventAssembler: slices matched per track, flows chained, tracks materialized
//     -> Trace::Finalize: nesting, device links
#include "import/perfetto/perfetto_reader.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <protozero/varint.hpp>
#include <string>

#include "base/cores.h"
#include "import/import_log.h"
#include "import/perfetto/packet_decoder.h"
#include "import/perfetto/proto_read.h"
#include "trace/perfetto_protos.h"

namespace opscope::import {
namespace {

using perfetto::PacketDecoder;
using protozero::data_view;
using protozero::pbf_reader;

// A compressed packet inflating past this is refused (Perfetto writes them in chunks of a few
// hundred KiB): a bound on what a corrupt or hostile file can make the reader allocate.
constexpr size_t kMaxInflatedBytes = size_t{1} << 30;
constexpr int kMaxCompressionDepth = 2;  // compressed packets inside compressed packets

// Field numbers a TracePacket has (detection asks for one of them).
bool KnownPacketField(uint32_t tag) {
  namespace pp = opscope::perfetto::packet;
  static constexpr std::array<uint32_t, 22> kTags = {pp::kTimestamp,
                                                     pp::kTimestampClockId,
                                                     pp::kTrackEvent,
                                                     pp::kTrackDescriptor,
                                                     pp::kChromeEvents,
                                                     pp::kClockSnapshot,
                                                     pp::kProcessDescriptor,
                                                     pp::kThreadDescriptor,
                                                     pp::kCompressedPackets,
                                                     pp::kZstdCompressedPackets,
                                                     pp::kTrustedUid,
                                                     pp::kTrustedPacketSequenceId,
                                                     pp::kInternedData,
                                                     pp::kSequenceFlags,
                                                     pp::kIncrementalStateCleared,
                                                     pp::kTracePacketDefaults,
                                                     pp::kPreviousPacketDropped,
                                                     pp::kFirstPacketOnSequence,
                                                     1 /*ftrace_events*/,
                                                     2 /*process_tree*/,
                                                     33 /*trace_config*/,
                                                     36 /*synchronization_marker*/};
  for (uint32_t t : kTags) {
    if (t == tag) return true;
  }
  return false;
}

// "" or why the content could not be inflated.
std::string InflateZlib(data_view in, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return "zlib could not start";  // zlib or gzip header
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  out->resize(std::max<size_t>(in.size() * 4, 4096));
  size_t have = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (have == out->size()) {
      if (out->size() >= kMaxInflatedBytes) break;
      out->resize(std::min(out->size() * 2, kMaxInflatedBytes));
    }
    z.next_out = reinterpret_cast<Bytef*>(out->data() + have);
    z.avail_out = static_cast<uInt>(out->size() - have);
    rc = inflate(&z, Z_NO_FLUSH);
    have = out->size() - z.avail_out;
  }
  inflateEnd(&z);
  out->resize(have);
  if (rc == Z_STREAM_END) return "";
  if (have >= kMaxInflatedBytes) return "it inflates past 1 GiB";
  return std::string("zlib: ") + (z.msg != nullptr ? z.msg : "truncated or corrupt stream");
}

std::string InflateZstd(data_view in, std::string* out) {
  ZSTD_DStream* z = ZSTD_createDStream();
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out->resize(std::max<size_t>(in.size() * 4, 4096));
  size_t have = 0, rc = 1;
  while (rc != 0) {
    if (have == out->size()) {
      if (out->size() >= kMaxInflatedBytes) break;
      out->resize(std::min(out->size() * 2, kMaxInflatedBytes));
    }
    ZSTD_outBuffer output{out->data(), out->size(), have};
    rc = ZSTD_decompressStream(z, &output, &input);
    have = output.pos;
    if (ZSTD_isError(rc)) break;
    if (input.pos == input.size && output.pos < output.size && rc != 0) break;  // truncated
  }
  ZSTD_freeDStream(z);
  out->resize(have);
  if (rc == 0) return "";
  if (ZSTD_isError(rc)) return std::string("zstd: ") + ZSTD_getErrorName(rc);
  return have >= kMaxInflatedBytes ? "it inflates past 1 GiB" : "zstd: truncated stream";
}

// Walks a Trace message's packets through the decoder.
class PacketWalker {
 public:
  PacketWalker(PacketDecoder* decoder, ImportLog* log, const ImportOptions& options,
               uint64_t total_bytes)
      : decoder_(decoder), log_(log), options_(options), total_bytes_(total_bytes) {}

  // `where` names the enclosing compressed packet for packets inside one ("" at the top level).
  Status Walk(std::string_view data, int depth, const std::string& where) {
    pbf_reader trace(data.data(), data.size());
    size_t end_of_last = 0;  // the byte after the last whole field
    try {
      while (trace.next()) {
        if (trace.tag() != opscope::perfetto::trace::kPacket || !perfetto::IsBytes(trace)) {
          trace.skip();
          end_of_last = data.size() - trace.length();
          continue;
        }
        const data_view packet = trace.get_view();
        const auto offset = static_cast<uint64_t>(packet.data() - data.data());
        end_of_last = offset + packet.size();
        Packet(packet, offset, depth, where);
        if (depth == 0 && options_.progress && end_of_last - last_progress_ > (size_t{8} << 20)) {
          last_progress_ = end_of_last;
          options_.progress(end_of_last, total_bytes_);
        }
      }
    } catch (const protozero::end_of_buffer_exception&) {
      log_->Warn(where + "the trace ends inside packet " + std::to_string(index_) + " (byte " +
                     std::to_string(end_of_last) + "): the file is truncated; the " +
                     std::to_string(index_) + " packets before it are kept",
                 false);
    } catch (const protozero::exception& e) {
      return Status::InvalidInput(where + "packet " + std::to_string(index_) + " at byte " +
                                      std::to_string(end_of_last) +
                                      ": not a field of a Perfetto Trace (" + e.what() + "); the " +
                                      std::to_string(index_) + " packets before it are kept",
                                  end_of_last);
    }
    return Status::Ok();
  }

 private:
  void Packet(data_view packet, uint64_t offset, int depth, const std::string& where) {
    const uint64_t index = index_++;
    ++log_->stats().events;
    std::optional<PacketDecoder::Compressed> compressed;
    std::string why;
    try {
      why = decoder_->Decode(packet, &compressed);
    } catch (const protozero::exception& e) {
      why = std::string("it does not decode as a TracePacket (") + e.what() + ")";
    }
    if (!why.empty()) {
      log_->Warn(where + "packet " + std::to_string(index) + " at byte " + std::to_string(offset) +
                     ": " + why + "; skipped",
                 true);
      return;
    }
    if (!compressed) return;
    std::string inner;
    const std::string error = depth >= kMaxCompressionDepth ? "compressed packets nest too deep"
                              : compressed->zstd            ? InflateZstd(compressed->bytes, &inner)
                                                 : InflateZlib(compressed->bytes, &inner);
    const std::string inside = where + "inside compressed packet " + std::to_string(index) +
                               " (byte " + std::to_string(offset) + "): ";
    if (!error.empty()) {
      log_->Warn(inside + error + "; what it held is skipped", true);
      if (inner.empty()) return;
    }
    const Status st = Walk(inner, depth + 1, inside);
    if (!st.ok()) log_->Warn(st.message(), true);
  }

  PacketDecoder* decoder_;
  ImportLog* log_;
  const ImportOptions& options_;
  uint64_t total_bytes_;
  uint64_t index_ = 0;
  size_t last_progress_ = 0;
};

}  // namespace

namespace {

// Whether [p, end) is a TracePacket that declares `declared` bytes (all of it, or with `cut` its
// start up to the head's end): every field's tag and wire type valid, every field inside the
// packet, and one field a TracePacket has. With `cut`, a field the head's end cuts counts as well
// formed. Varints are protozero's.
bool PlausiblePacket(const char* p, const char* end, uint64_t declared, bool cut) {
  const char* const start = p;
  bool known = false;
  try {
    while (p < end) {
      const uint64_t key = protozero::decode_varint(&p, end);
      const auto field = static_cast<uint32_t>(key >> 3);
      if (field == 0 || field > (uint32_t{1} << 29)) return false;
      known |= KnownPacketField(field);
      switch (key & 7) {
        case 0:
          protozero::decode_varint(&p, end);
          break;
        case 1:
        case 5: {
          const ptrdiff_t size = (key & 7) == 1 ? 8 : 4;
          if (!cut && end - p < size) return false;
          p += std::min(size, end - p);
          break;
        }
        case 2: {
          const uint64_t length = protozero::decode_varint(&p, end);
          if (length > declared - static_cast<uint64_t>(p - start)) return false;
          if (!cut && length > static_cast<uint64_t>(end - p)) return false;
          p += std::min<uint64_t>(length, static_cast<uint64_t>(end - p));
          break;
        }
        default:
          return false;  // groups and undefined wire types: not a TracePacket
      }
    }
  } catch (const protozero::end_of_buffer_exception&) {
    if (!cut) return false;  // a varint overrunning the packet; else cut by the head's end
  } catch (const protozero::exception&) {
    return false;
  }
  return known;
}

}  // namespace

bool LooksLikePerfetto(std::string_view head) {
  if (head.size() < 2 || head[0] != 0x0a) return false;
  const char* p = head.data() + 1;
  const char* const end = head.data() + head.size();
  uint64_t declared = 0;
  try {
    declared = protozero::decode_varint(&p, end);
  } catch (const protozero::exception&) {
    return false;
  }
  if (declared == 0 || declared > kMaxInflatedBytes) return false;
  const uint64_t available = static_cast<uint64_t>(end - p);
  if (declared <=
      available) {  // whole: its fields fill it exactly, and a packet or the end follows
    if (!PlausiblePacket(p, p + declared, declared, false)) return false;
    const char* next = p + declared;
    return next == end || static_cast<uint8_t>(*next) == 0x0a;
  }
  // A first packet longer than the bytes looked at: as much of it as there is must be well formed,
  // and enough of it to tell (a few random bytes could pass).
  return available >= 4096 && PlausiblePacket(p, end, declared, true);
}

Status ReadPerfetto(ImportInput* in, Trace* out, ImportStats* stats, const ImportOptions& options) {
  std::string_view bytes;
  Status st = in->ReadAll(&bytes);
  stats->input_bytes = in->stored_bytes() != 0 ? in->stored_bytes() : bytes.size();
  ImportLog log(stats, options.max_warning_messages);
  perfetto::PacketDecoder decoder(out, &log, options);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  if (st.ok()) {
    decoder.Reserve(bytes.size());
    PacketWalker walker(&decoder, &log, options, bytes.size());
    st = walker.Walk(bytes, 0, "");
  }
  const auto walked = Clock::now();
  // Below a few MiB the finish takes a few milliseconds on one thread: less than deciding on more.
  constexpr size_t kThreadsFromBytes = size_t{4} << 20;
  const int threads = options.threads > 0                ? options.threads
                      : bytes.size() < kThreadsFromBytes ? 1
                                                         : internal::DefaultThreadsNow(0);
  decoder.Finish(threads);
  // The walk reads and decodes packets (ImportStats::parse_seconds); the finish matches slices,
  // chains flows and finalizes the model (finish_seconds).
  stats->parse_seconds = std::chrono::duration<double>(walked - start).count();
  stats->finish_seconds = std::chrono::duration<double>(Clock::now() - walked).count();
  return st;
}

}  // namespace opscope::import
