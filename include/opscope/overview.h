// A whole trace at a glance: each track's activity downsampled to a fixed number of equal time
// columns, for an overview chart of any width (the HTML report's, a notebook's).
//
//   opscope::TraceOverview ov = opscope::ComputeTraceOverview(trace, {.columns = 1000});
//   for (const opscope::TrackOverview& t : ov.tracks)
//     draw(t.name, t.busy_permille);   // column c covers [ov.start_ns + c * ov.column_ns(), ...)
//
// Downsampling keeps what a pixel must show: a column holds the share of its time the track was
// busy (the union of its top-level slices), rounded up so that a single short kernel in a long
// column still shows, and the name of the slice that covers most of it. A chart narrower than
// the columns should take the maximum of the columns it merges, so the busiest one shows.
//
// Thread safety: pure over a finalized const Trace.
#ifndef OPSCOPE_OVERVIEW_H_
#define OPSCOPE_OVERVIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/trace.h"

namespace opscope {

struct TrackOverview {
  uint32_t track = kNone;  // index into trace.tracks()
  std::string process;     // its process's name ("pid N" without one)
  std::string name;        // the track's name ("stream 7", "thread 1234 (python)")
  bool is_device = false;  // a device stream or engine lane
  int64_t busy_ns = 0;     // union of its top-level slices over the whole trace
  // Per column: the share of the column covered, in thousandths (0 = idle, 1..1000 = busy; any
  // activity counts at least 1).
  std::vector<uint16_t> busy_permille;
  // Per column: the slice covering most of it, as an index into TraceOverview::names; -1 = none.
  std::vector<int32_t> top_name;
};

struct TraceOverview {
  int64_t start_ns = 0, end_ns = 0;  // the span of every slice
  int columns = 0;
  std::vector<std::string> names;  // slice names the columns refer to
  // Device tracks first (by process, then track), then host threads by busy time, busiest first;
  // at most OverviewOptions::max_tracks.
  std::vector<TrackOverview> tracks;
  int omitted_tracks = 0;  // tracks with activity left out by max_tracks
  double column_ns() const {
    return columns > 0 ? static_cast<double>(end_ns - start_ns) / columns : 0;
  }
  // {"start_ns", "end_ns", "columns", "names", "omitted_tracks", "tracks": [{"track", "process",
  // "name", "is_device", "busy_ns", "busy_permille": [...], "top_name": [...]}]}
  std::string ToJson() const;
};

struct OverviewOptions {
  int columns = 1000;
  int max_tracks = 48;
};

// Tracks with no slice (counters, empty threads) are left out. Device annotations are not
// activity (a device track's ProfilerStep# spans its kernels without being busy).
TraceOverview ComputeTraceOverview(const Trace& trace, const OverviewOptions& options = {});

}  // namespace opscope

#endif  // OPSCOPE_OVERVIEW_H_
