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

#include <array>
#include <chrono>
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

bool LooksLikePerfetto(std::string_view head) {
  if (head.size() < 2 || head[0] != 0x0a) return false;
  try {
    pbf_reader trace(head.data(), head.size());
    if (!trace.next() || trace.tag() != 1 || !perfetto::IsBytes(trace)) return false;
    // The first packet, whole or as much of it as the head holds.
    data_view packet;
    bool whole = true;
    try {
      packet = trace.get_view();
    } catch (const protozero::end_of_buffer_exception&) {
      whole = false;
    }
    std::string_view bytes = whole ? perfetto::AsText(packet) : head.substr(1);
    if (!whole) {  // skip the length varint
      size_t i = 0;
      while (i < bytes.size() && (static_cast<uint8_t>(bytes[i]) & 0x80) != 0) ++i;
      bytes.remove_prefix(std::min(bytes.size(), i + 1));
      if (bytes.size() < 16) return false;
    }
    if (bytes.empty()) return false;
    pbf_reader fields(bytes.data(), bytes.size());
    bool known = false;
    try {
      while (fields.next()) {
        known |= KnownPacketField(fields.tag());
        fields.skip();
      }
    } catch (const protozero::end_of_buffer_exception&) {
      if (whole) return false;  // the packet's own fields overrun it
    }
    if (!known) return false;
    // A second packet, when the head holds the start of one.
    if (whole && trace.length() > 0) {
      return static_cast<uint8_t>(head[head.size() - trace.length()]) == 0x0a;
    }
    return true;
  } catch (const protozero::exception&) {
    return false;
  }
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
  const int threads = options.threads > 0 ? options.threads : internal::DefaultThreadsNow(0);
  decoder.Finish(threads);
  // The walk reads and decodes packets (ImportStats::parse_seconds); the finish matches slices,
  // chains flows and finalizes the model (finish_seconds).
  stats->parse_seconds = std::chrono::duration<double>(walked - start).count();
  stats->finish_seconds = std::chrono::duration<double>(Clock::now() - walked).count();
  return st;
}

}  // namespace opscope::import
