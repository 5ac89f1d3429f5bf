// Perfetto's clock domains: ClockSnapshot packets relate clocks (BOOTTIME, MONOTONIC, REALTIME,
// sequence-scoped clocks 64..127, incremental or not, in their units) to the trace's primary clock
// (the snapshot's primary_trace_clock, else BOOTTIME); every timestamp is converted to the primary
// clock's nanoseconds, and the REALTIME offset, when a snapshot gives it, places the trace on the
// wall clock.
//
// A timestamp converts through the latest snapshot (by that clock's reading) at or before it that
// holds both its clock and the primary one, else the earliest; a clock no snapshot relates is taken
// as the primary clock itself (a trace with no snapshots is all BOOTTIME). Snapshots are used from
// the point in the file where they appear, as Perfetto's writers put them first. Not thread-safe.
#ifndef OPSCOPE_IMPORT_PERFETTO_CLOCK_CONVERTER_H_
#define OPSCOPE_IMPORT_PERFETTO_CLOCK_CONVERTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace opscope::import::perfetto {

class ClockConverter {
 public:
  // One clock's reading in a snapshot.
  struct Reading {
    uint32_t clock_id = 0;
    uint64_t timestamp = 0;  // in the clock's unit
    bool is_incremental = false;
    uint64_t unit_multiplier_ns = 0;  // 0: not given (1)
  };

  // Records a snapshot of packet sequence `sequence`; `primary_clock` is its primary_trace_clock (0
  // when absent). Returns "" or why the snapshot is unusable (it is then ignored).
  std::string AddSnapshot(uint32_t sequence, const std::vector<Reading>& readings,
                          uint32_t primary_clock);

  // The timestamp `value` of clock `clock_id`, as a packet of `sequence` gives it (a delta for an
  // incremental clock, which this advances), in primary-clock nanoseconds. False when it overflows
  // or lands before the primary clock's zero.
  bool ToPrimary(uint32_t sequence, uint32_t clock_id, uint64_t value, int64_t* out_ns);
  // The same for a nanosecond timestamp already in clock `clock_id` (TrackEvent's legacy
  // microsecond fields, in MONOTONIC).
  bool NsToPrimary(uint32_t sequence, uint32_t clock_id, int64_t ns, int64_t* out_ns) const;

  uint32_t primary_clock() const { return primary_; }
  // REALTIME minus the primary clock, when a snapshot holds both.
  std::optional<int64_t> realtime_offset() const { return realtime_offset_; }

 private:
  static uint64_t Key(uint32_t sequence, uint32_t clock_id);
  // What is known of one clock (a builtin one, or a sequence's own).
  struct Clock {
    uint64_t multiplier = 1;  // ns per unit
    bool incremental = false;
    uint64_t value = 0;  // an incremental clock's running value, in its unit
    // (this clock's reading in ns, the primary clock's reading in ns) of each snapshot holding
    // both, sorted by the first.
    std::vector<std::pair<int64_t, int64_t>> pairs;
  };
  Clock* Find(uint64_t key);
  const Clock* Find(uint64_t key) const;

  uint32_t primary_ = 6;  // BOOTTIME until a snapshot says otherwise
  bool primary_fixed_ = false;
  std::optional<int64_t> realtime_offset_;
  std::unordered_map<uint64_t, Clock> clocks_;  // nodes never move: the cache below stays valid
  mutable uint64_t cached_key_ = ~uint64_t{0};
  mutable const Clock* cached_ = nullptr;
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_CLOCK_CONVERTER_H_
