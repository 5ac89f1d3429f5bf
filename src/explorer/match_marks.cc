// Search matches in one viewport (match_marks.h), merged to about one mark per pixel.
#include "explorer/match_marks.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opscope::explorer {
namespace {

struct Mark {
  int64_t start, end;
  int64_t count = 0;
};

// Marks of one row: matches (`match(slice id)`) in [t0, t1), those within `px_ns` of the previous
// mark's end merged.
template <typename Match>
void RowMarks(const LaneRow& row, const Match& match, int64_t t0, int64_t t1, int64_t px_ns,
              std::vector<Mark>* out) {
  size_t i = std::upper_bound(row.end.begin(), row.end.end(), t0) - row.end.begin();
  while (i > 0 && row.end[i - 1] == t0 && row.start[i - 1] == t0) --i;
  for (; i < row.ids.size() && row.start[i] < t1; ++i) {
    if (!match(row.ids[i])) continue;
    if (!out->empty() && row.start[i] < out->back().end + px_ns) {
      out->back().end = std::max(out->back().end, row.end[i]);
      ++out->back().count;
    } else {
      out->push_back({row.start[i], row.end[i], 1});
    }
  }
}

template <typename Match>
void WriteMarks(const TraceIndex& index, const Match& match, const ViewportQuery& q,
                JsonWriter* w) {
  const double ns_per_px =
      std::max(1e-3, static_cast<double>(q.t1 - q.t0) / std::max(1, q.width_px));
  const int64_t px_ns = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ns_per_px)));
  std::vector<uint32_t> which = q.lanes;
  if (which.empty()) {
    which.resize(index.lanes().size());
    std::iota(which.begin(), which.end(), 0);
  }
  int64_t matches = 0;
  std::vector<Mark> marks;
  w->BeginObject();
  w->Field("t0", index.ToApi(q.t0));
  w->Field("t1", index.ToApi(q.t1));
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t lane_id : which) {
    if (lane_id >= index.lanes().size()) continue;
    const Lane& lane = index.lanes()[lane_id];
    bool open = false;
    for (size_t r = 0; r < lane.rows.size(); ++r) {
      marks.clear();
      RowMarks(lane.rows[r], match, q.t0, q.t1, px_ns, &marks);
      if (marks.empty()) continue;
      if (!open) {
        w->BeginObject();
        w->Field("lane", lane_id);
        w->Key("items");
        w->BeginArray();
        open = true;
      }
      for (const Mark& m : marks) {
        w->BeginArray();
        w->Int(index.ToApi(m.start));
        w->Int(m.end - m.start);
        w->Int(static_cast<int64_t>(r));
        w->Int(m.count);
        w->EndArray();
        matches += m.count;
      }
    }
    if (open) {
      w->EndArray();
      w->EndObject();
    }
  }
  w->EndArray();
  w->Field("matches", matches);
  w->EndObject();
}

}  // namespace

void WriteMatchMarks(const TraceIndex& index, const SliceFilter& filter, const ViewportQuery& q,
                     JsonWriter* w) {
  const auto& slices = index.trace().slices();
  WriteMarks(
      index, [&](uint32_t id) { return filter.Keeps(slices[id]); }, q, w);
}

void WriteSliceMarks(const TraceIndex& index, const std::vector<bool>& slices,
                     const ViewportQuery& q, JsonWriter* w) {
  WriteMarks(
      index, [&](uint32_t id) { return id < slices.size() && slices[id]; }, q, w);
}

}  // namespace opscope::explorer
