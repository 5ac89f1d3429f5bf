// One TracePacket at a time: its sequence's state (flags, interned data, defaults, the legacy
// thread descriptor), its timestamp on the primary clock, and what it carries (clock snapshots,
// track descriptors, track events, opscope's metadata entry, the range of interest). Packets of
// other data sources (ftrace, heap profiles, ...) are passed over. Compressed packets are handed
// back to the caller, which inflates them and decodes the packets inside.
//
// Not thread-safe; one per import.
#ifndef OPSCOPE_IMPORT_PERFETTO_PACKET_DECODER_H_
#define OPSCOPE_IMPORT_PERFETTO_PACKET_DECODER_H_

#include <cstdint>
#include <optional>
#include <protozero/pbf_reader.hpp>
#include <string>
#include <unordered_map>

#include "import/import_log.h"
#include "import/perfetto/clock_converter.h"
#include "import/perfetto/event_assembler.h"
#include "import/perfetto/opscope_blob.h"
#include "import/perfetto/sequence_state.h"
#include "import/perfetto/track_event_reader.h"
#include "import/perfetto/track_table.h"
#include "opscope/import.h"

namespace opscope::import::perfetto {

class PacketDecoder {
 public:
  // The content of a compressed_packets field: a Trace message compressed with zlib or zstd.
  struct Compressed {
    protozero::data_view bytes;
    bool zstd = false;
  };

  PacketDecoder(Trace* trace, ImportLog* log, const ImportOptions& options);

  // Decodes one packet. A packet of compressed packets sets `compressed` and nothing else. Returns
  // "" or why the packet (or its event) is skipped. Throws protozero::exception on bytes that are
  // not a TracePacket.
  std::string Decode(protozero::data_view packet, std::optional<Compressed>* compressed);

  // Capacity for a trace of `input_bytes`.
  void Reserve(uint64_t input_bytes) { assembler_.Reserve(input_bytes); }

  // Everything read into the model, metadata included, then Trace::Finalize(threads).
  void Finish(int threads);

 private:
  void OnInternedData(protozero::data_view data, SequenceState* seq);
  void OnDefaults(protozero::data_view data, SequenceState* seq);
  void OnThreadDescriptor(protozero::data_view data, SequenceState* seq);
  void OnStreamingProfile(protozero::data_view data, SequenceState* seq);
  std::string OnTrackDescriptor(protozero::data_view data);
  void OnClockSnapshot(protozero::data_view data, uint32_t sequence_id);
  void OnChromeEvents(protozero::data_view data);
  StringId Text(std::string_view bytes);

  Trace* trace_;
  ImportLog* log_;
  ClockConverter clocks_;
  TrackTable tracks_;
  EventAssembler assembler_;
  TrackEventReader events_;
  std::unordered_map<uint32_t, SequenceState> sequences_;
  SequenceState* last_sequence_ = nullptr;  // the sequence of the previous packet
  uint32_t last_sequence_id_ = 0;
  std::optional<OpscopeBlob> blob_;
  bool events_seen_ = false;
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_PACKET_DECODER_H_
