// Clock domains to the primary clock (clock_converter.h).
#include "import/perfetto/clock_converter.h"

#include <algorithm>
#include <limits>

#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

namespace pc = opscope::perfetto::clock;

bool SequenceScoped(uint32_t clock_id) {
  return clock_id >= pc::kFirstSequenceClock && clock_id <= pc::kLastSequenceClock;
}

// value * multiplier as int64 ns; false on overflow.
bool ScaleToNs(uint64_t value, uint64_t multiplier, int64_t* out) {
  uint64_t ns = 0;
  if (__builtin_mul_overflow(value, multiplier, &ns) ||
      ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  *out = static_cast<int64_t>(ns);
  return true;
}

}  // namespace

uint64_t ClockConverter::Key(uint32_t sequence, uint32_t clock_id) {
  return SequenceScoped(clock_id) ? (uint64_t{sequence} << 32) | clock_id : clock_id;
}

const ClockConverter::Clock* ClockConverter::Find(uint64_t key) const {
  if (key == cached_key_) return cached_;  // packets of one sequence come in runs
  auto it = clocks_.find(key);
  cached_key_ = key;
  cached_ = it == clocks_.end() ? nullptr : &it->second;
  return cached_;
}

ClockConverter::Clock* ClockConverter::Find(uint64_t key) {
  return const_cast<Clock*>(static_cast<const ClockConverter*>(this)->Find(key));
}

std::string ClockConverter::AddSnapshot(uint32_t sequence, const std::vector<Reading>& readings,
                                        uint32_t primary_clock) {
  if (primary_clock != 0 && !primary_fixed_) {
    if (!clocks_.empty() && primary_clock != primary_) {
      return "a later snapshot names another primary clock (" + std::to_string(primary_clock) +
             "); the first one's is kept";
    }
    primary_ = primary_clock;
    primary_fixed_ = true;
  }
  cached_key_ = ~uint64_t{0};  // the map may grow
  // Each reading in ns; the primary clock's must be there for the snapshot to relate anything.
  std::vector<std::pair<Clock*, int64_t>> ns;
  std::optional<int64_t> primary_ns;
  for (const Reading& r : readings) {
    Clock& clock = clocks_[Key(sequence, r.clock_id)];
    if (r.unit_multiplier_ns != 0) clock.multiplier = r.unit_multiplier_ns;
    if (r.is_incremental) {
      clock.incremental = true;
      clock.value = r.timestamp;
    }
    int64_t v = 0;
    if (!ScaleToNs(r.timestamp, clock.multiplier, &v)) {
      return "clock " + std::to_string(r.clock_id) + "'s reading overflows 64-bit nanoseconds";
    }
    if (r.clock_id == primary_) {
      primary_ns = v;
    } else {
      ns.emplace_back(&clock, v);
      if (r.clock_id == pc::kRealtime) ns.back().first = &clock;
    }
  }
  if (!primary_ns) return "";  // relates no clock to the primary one (kept for multipliers)
  for (const Reading& r : readings) {
    if (r.clock_id == pc::kRealtime && !realtime_offset_) {
      int64_t v = 0;
      if (ScaleToNs(r.timestamp, clocks_[Key(sequence, r.clock_id)].multiplier, &v)) {
        realtime_offset_ = v - *primary_ns;
      }
    }
  }
  for (const auto& [clock, v] : ns) {
    const std::pair<int64_t, int64_t> pair(v, *primary_ns);
    clock->pairs.insert(std::upper_bound(clock->pairs.begin(), clock->pairs.end(), pair), pair);
  }
  return "";
}

bool ClockConverter::ToPrimary(uint32_t sequence, uint32_t clock_id, uint64_t value,
                               int64_t* out_ns) {
  Clock* clock = Find(Key(sequence, clock_id));
  uint64_t multiplier = 1;
  if (clock != nullptr) {
    multiplier = clock->multiplier;
    if (clock->incremental) {
      if (__builtin_add_overflow(clock->value, value, &clock->value)) return false;
      value = clock->value;
    }
  }
  int64_t ns = 0;
  if (!ScaleToNs(value, multiplier, &ns)) return false;
  return NsToPrimary(sequence, clock_id, ns, out_ns);
}

bool ClockConverter::NsToPrimary(uint32_t sequence, uint32_t clock_id, int64_t ns,
                                 int64_t* out_ns) const {
  const uint64_t key = Key(sequence, clock_id);
  int64_t result = ns;
  const Clock* clock = key == primary_ ? nullptr : Find(key);
  if (clock != nullptr && !clock->pairs.empty()) {
    const auto& list = clock->pairs;
    auto at =
        std::upper_bound(list.begin(), list.end(),
                         std::pair<int64_t, int64_t>(ns, std::numeric_limits<int64_t>::max()));
    const auto& pair = at == list.begin() ? list.front() : *(at - 1);
    int64_t delta = 0;
    if (__builtin_sub_overflow(ns, pair.first, &delta) ||
        __builtin_add_overflow(pair.second, delta, &result)) {
      return false;
    }
  }
  if (result < 0) return false;
  *out_ns = result;
  return true;
}

}  // namespace opscope::import::perfetto
