// One TrackEvent to the event assembler: its track (by uuid, the sequence's default, or the legacy
// thread / process / async track its legacy fields name), its time (the packet's, or the legacy
// microsecond fields on CLOCK_MONOTONIC), its name and categories (inline or interned), its type
// (TYPE_SLICE_BEGIN / _END / _INSTANT / _COUNTER, or a legacy phase: B E X I i R b e n S T p F s t
// f), its debug annotations as args, its flows, extra counter values and thread time / instruction
// counters. docs/formats.md lists what is left (TYPE_STATE, typed Chrome protos, callstacks).
//
// Not thread-safe; one per reader.
#ifndef OPSCOPE_IMPORT_PERFETTO_TRACK_EVENT_READER_H_
#define OPSCOPE_IMPORT_PERFETTO_TRACK_EVENT_READER_H_

#include <cstdint>
#include <optional>
#include <protozero/pbf_reader.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "import/import_log.h"
#include "import/perfetto/clock_converter.h"
#include "import/perfetto/debug_annotations.h"
#include "import/perfetto/event_assembler.h"
#include "import/perfetto/sequence_state.h"
#include "import/perfetto/track_table.h"
#include "opscope/import.h"

namespace opscope::import::perfetto {

class TrackEventReader {
 public:
  TrackEventReader(Trace* trace, TrackTable* tracks, EventAssembler* assembler,
                   ClockConverter* clocks, ImportLog* log, const ImportOptions& options);

  // Reads one TrackEvent of sequence `sequence_id`; `packet_ts_ns` is the packet's timestamp on
  // the primary clock (nullopt when it has none or it was invalid). Returns "" or why the event is
  // skipped. Throws protozero::exception on bytes that are not a TrackEvent.
  std::string Read(protozero::data_view event, uint32_t sequence_id, SequenceState* sequence,
                   std::optional<int64_t> packet_ts_ns);

  // Events before this primary-clock time are dropped (TrackEventRangeOfInterest).
  void set_range_start(int64_t ts_ns) { range_start_ = ts_ns; }

  // The event's fields as read; vectors reused from event to event.
  struct Fields {
    uint32_t type = 0;  // TrackEvent.Type; 0: legacy (its phase says)
    std::optional<uint64_t> track_uuid;
    std::optional<uint64_t> name_iid;
    std::optional<std::string_view> name;
    std::vector<uint64_t> category_iids;
    std::vector<std::string_view> categories;
    std::optional<int64_t> counter_value;
    std::optional<double> double_counter_value;
    bool has_extra_uuids = false, has_extra_double_uuids = false;
    std::vector<uint64_t> extra_uuids, extra_double_uuids;
    std::vector<int64_t> extra_values;
    std::vector<double> extra_double_values;
    std::vector<uint64_t> flow_ids, terminating_flow_ids;
    std::optional<uint64_t> correlation_id;
    std::vector<protozero::data_view> annotations;
    std::optional<int64_t> ts_delta_us, ts_absolute_us;
    std::optional<int64_t> thread_time_delta_us, thread_time_absolute_us;
    std::optional<int64_t> instructions_delta, instructions_absolute;
    // LegacyEvent
    bool has_legacy = false;
    std::optional<uint64_t> legacy_name_iid;
    int32_t phase = 0;
    std::optional<int64_t> duration_us;
    std::optional<uint64_t> unscoped_id, local_id, global_id, bind_id;
    std::string_view id_scope;
    bool bind_to_enclosing = false;
    uint32_t flow_direction = 0;
    uint32_t instant_scope = 0;
    std::optional<int32_t> pid_override, tid_override;
    // Set when the general reader ran (it may set any member): Clear then resets them all, else
    // only those ReadCommonFields sets (most events' only fields).
    bool rare = false;
    void Clear();
  };

 private:
  static void ReadFields(protozero::data_view event, Fields* f);
  std::string EventTime(const Fields& f, uint32_t sequence_id, SequenceState* seq,
                        std::optional<int64_t> packet_ts, int64_t* ts_ns);
  uint32_t TrackOf(const Fields& f, SequenceState* seq, bool legacy, std::string_view name);
  std::string NameAndCategory(const Fields& f, const SequenceState& seq, Slice* s);
  std::string BuildArgs(const Fields& f, const SequenceState& seq, Slice* s, std::string* text);
  void CollectFlows(const Fields& f, const Slice& s);
  void AddCounters(const Fields& f, uint32_t slot, uint32_t sequence_id, SequenceState* seq,
                   int64_t ts_ns);
  void AddThreadTime(const Fields& f, uint32_t slot, SequenceState* seq, int64_t ts_ns);
  std::string Dispatch(const Fields& f, uint32_t slot, SequenceState* seq, Slice* s);
  std::string DispatchLegacy(const Fields& f, uint32_t slot, SequenceState* seq, Slice* s);
  void AddInstantOrZeroSlice(const Fields& f, Slice* s, char scope);
  void CounterSample(uint32_t slot, SequenceState* seq, int64_t ts_ns, double value);
  StringId Name(std::string_view bytes);

  Trace* trace_;
  TrackTable* tracks_;
  EventAssembler* assembler_;
  ClockConverter* clocks_;
  ImportLog* log_;
  const ImportOptions& options_;
  ArgsBuilder args_;
  std::optional<int64_t> range_start_;
  Fields fields_;
  std::vector<FlowRef> flows_;  // scratch
  bool warned_state_ = false;
  bool warned_phase_[128] = {};
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_TRACK_EVENT_READER_H_
