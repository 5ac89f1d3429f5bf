// Where an imported event goes: its (pid, tid) resolved to the trace's process and track.
#ifndef OPSCOPE_IMPORT_KINETO_TRACK_MAP_H_
#define OPSCOPE_IMPORT_KINETO_TRACK_MAP_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/kineto/event_parser.h"
#include "opscope/trace.h"

namespace opscope::import {

// Processes and tracks are created on first sight. A pid or tid given as a string ("stream 7")
// keeps its text as the name and gets a synthetic id from 2^48 up (a numeric string is its
// number); counter series get tracks of their own with ids from 2^49 up. `trace` must outlive
// the map. Not thread-safe.
class TrackMap {
 public:
  explicit TrackMap(Trace* trace) : trace_(trace) {}

  // The track of the event's (pid, tid); a new track gets `kind`.
  uint32_t TrackOf(const EventFields& f, TrackKind kind) {
    int64_t pid = f.pid, tid = f.tid;
    if (!f.pid_text.empty()) pid = SyntheticId(f.pid_text);
    if (!f.tid_text.empty()) tid = SyntheticId(f.tid_text);
    // Events alternate among a few threads and streams: a small direct-mapped cache of
    // (pid, tid) -> track answers most of them without the trace's hash maps.
    const uint64_t h = (static_cast<uint64_t>(pid) * 0x9E3779B97F4A7C15ull) ^
                       (static_cast<uint64_t>(tid) * 0xbf58476d1ce4e5b9ull);
    CacheEntry& e = cache_[h >> (64 - kCacheBits)];
    if (e.track != kNone && e.pid == pid && e.tid == tid) return e.track;
    const uint32_t process = trace_->FindOrAddProcess(pid, f.pid_text);
    const uint32_t track = trace_->FindOrAddTrack(process, tid, f.tid_text, kind);
    e = {pid, tid, track};
    return track;
  }
  // The process of the event's pid.
  uint32_t ProcessOf(const EventFields& f) {
    const int64_t pid = f.pid_text.empty() ? f.pid : SyntheticId(f.pid_text);
    return trace_->FindOrAddProcess(pid, f.pid_text);
  }
  // The counter track of `series` (interned as `series_id`) in `process`.
  uint32_t CounterTrack(uint32_t process, StringId series_id, std::string_view series);
  // Makes `track` a device stream and its process a device (device activity was seen on it).
  void MarkDevice(uint32_t track);

 private:
  int64_t SyntheticId(std::string_view text);

  static constexpr int kCacheBits = 6;
  struct CacheEntry {
    int64_t pid = 0, tid = 0;
    uint32_t track = kNone;
  };
  Trace* trace_;
  std::array<CacheEntry, size_t{1} << kCacheBits> cache_{};
  std::unordered_map<std::string, int64_t> synthetic_ids_;
  std::unordered_map<uint64_t, uint32_t> counter_tracks_;  // (process << 32 | series) -> track
  std::vector<bool> device_marked_;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_TRACK_MAP_H_
