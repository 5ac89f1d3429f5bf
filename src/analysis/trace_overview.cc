// The trace overview (opscope/overview.h): each track's top-level activity spread over equal time
// columns, busy share and the slice covering most of each column.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "base/json_writer.h"
#include "opscope/overview.h"

namespace opscope {
namespace {

bool CountsAsActivity(const Slice& s) {
  return s.parent == kNone && s.kind != ActivityKind::kDeviceAnnotation && s.dur_ns >= 0;
}

// One track's columns. Overlapping top-level slices (other lanes) may add past a column's width;
// the share is capped at the whole column.
struct Columns {
  std::vector<double> covered_ns;
  std::vector<double> top_ns;
  std::vector<StringId> top;
};

void Spread(const Slice& s, int64_t start, double width, int columns, Columns* c) {
  const double from = static_cast<double>(s.ts_ns - start);
  const double to = from + static_cast<double>(s.dur_ns);
  int first = static_cast<int>(std::floor(from / width));
  int last = static_cast<int>(std::floor(to / width));
  first = std::clamp(first, 0, columns - 1);
  last = std::clamp(last, 0, columns - 1);
  for (int k = first; k <= last; ++k) {
    const double lo = std::max(from, k * width), hi = std::min(to, (k + 1) * width);
    // A zero-length slice still marks its column (a tiny share).
    const double part = hi > lo ? hi - lo : (s.dur_ns == 0 && k == first ? 1e-9 : 0);
    if (part <= 0) continue;
    c->covered_ns[k] += part;
    if (part > c->top_ns[k]) {
      c->top_ns[k] = part;
      c->top[k] = s.name;
    }
  }
}

}  // namespace

TraceOverview ComputeTraceOverview(const Trace& trace, const OverviewOptions& options) {
  TraceOverview ov;
  const auto& slices = trace.slices();
  if (slices.empty() || options.columns <= 0) return ov;
  ov.start_ns = INT64_MAX;
  ov.end_ns = INT64_MIN;
  for (const Slice& s : slices) {
    ov.start_ns = std::min(ov.start_ns, s.ts_ns);
    ov.end_ns = std::max(ov.end_ns, s.ts_ns + s.dur_ns);
  }
  ov.columns = options.columns;
  const double width = std::max(1e-9, ov.column_ns());
  std::vector<TrackOverview> device, host;
  std::unordered_map<StringId, int32_t> name_index;
  for (uint32_t t = 0; t < trace.tracks().size(); ++t) {
    const Track& track = trace.tracks()[t];
    if (track.kind == TrackKind::kCounter) continue;
    const auto [begin, end] = trace.TrackSlices(t);
    Columns c{std::vector<double>(ov.columns, 0), std::vector<double>(ov.columns, 0),
              std::vector<StringId>(ov.columns, 0)};
    int64_t busy = 0, reach = INT64_MIN;
    bool any = false;
    for (uint32_t i = begin; i < end; ++i) {
      const Slice& s = slices[i];
      if (!CountsAsActivity(s)) continue;
      any = true;
      Spread(s, ov.start_ns, width, ov.columns, &c);
      const int64_t e = s.ts_ns + s.dur_ns;  // slices are in start order on a track
      if (e > reach) {
        busy += e - std::max(s.ts_ns, reach);
        reach = e;
      }
    }
    if (!any) continue;
    TrackOverview out;
    out.track = t;
    const Process* p = track.process == kNone ? nullptr : &trace.processes()[track.process];
    out.process = p == nullptr           ? std::string()
                  : p->name != 0         ? std::string(trace.Str(p->name))
                  : !p->pid_text.empty() ? p->pid_text
                                         : "pid " + std::to_string(p->pid);
    out.name =
        track.name != 0 ? std::string(trace.Str(track.name)) : "tid " + std::to_string(track.tid);
    out.is_device = track.kind != TrackKind::kThread || (p != nullptr && p->is_device);
    out.busy_ns = busy;
    out.busy_permille.resize(ov.columns);
    out.top_name.assign(ov.columns, -1);
    for (int k = 0; k < ov.columns; ++k) {
      const double share = std::min(1.0, c.covered_ns[k] / width);
      out.busy_permille[k] =
          static_cast<uint16_t>(share > 0 ? std::max(1.0, std::ceil(share * 1000)) : 0);
      if (c.top_ns[k] > 0) {
        const auto [it, added] = name_index.try_emplace(c.top[k], 0);
        if (added) {
          it->second = static_cast<int32_t>(ov.names.size());
          ov.names.emplace_back(trace.Str(c.top[k]));
        }
        out.top_name[k] = it->second;
      }
    }
    (out.is_device ? device : host).push_back(std::move(out));
  }
  std::stable_sort(host.begin(), host.end(), [](const TrackOverview& a, const TrackOverview& b) {
    return a.busy_ns > b.busy_ns;
  });
  for (auto* group : {&device, &host}) {
    for (TrackOverview& t : *group) {
      if (static_cast<int>(ov.tracks.size()) < options.max_tracks) {
        ov.tracks.push_back(std::move(t));
      } else {
        ++ov.omitted_tracks;
      }
    }
  }
  return ov;
}

std::string TraceOverview::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Field("start_ns", start_ns);
  w.Field("end_ns", end_ns);
  w.Field("columns", columns);
  w.Field("omitted_tracks", omitted_tracks);
  w.Key("names");
  w.BeginArray();
  for (const std::string& n : names) w.String(n);
  w.EndArray();
  w.Key("tracks");
  w.BeginArray();
  for (const TrackOverview& t : tracks) {
    w.BeginObject();
    w.Field("track", t.track);
    w.Field("process", t.process);
    w.Field("name", t.name);
    w.Field("is_device", t.is_device);
    w.Field("busy_ns", t.busy_ns);
    w.Key("busy_permille");
    w.BeginArray();
    for (uint16_t v : t.busy_permille) w.Int(v);
    w.EndArray();
    w.Key("top_name");
    w.BeginArray();
    for (int32_t v : t.top_name) w.Int(v);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
