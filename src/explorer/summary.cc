#include "explorer/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "opscope/analysis.h"
#include "trace/saturating.h"

namespace opscope::explorer {
namespace {

struct Interval {
  int64_t start, end;
  uint32_t slice;
};

struct Gap {
  int64_t ts, dur;
  uint32_t before, after;  // executions either side
};

// Per host op instance: the device executions launched inside it.
struct CallStats {
  int64_t execs = 0;
  int64_t first = INT64_MAX;
  int64_t last = INT64_MIN;
  int64_t busy = 0;
};

// Groups "ProfilerStep#3" with "ProfilerStep#4".
std::string GroupName(std::string_view name) {
  const size_t hash = name.rfind('#');
  if (hash != std::string_view::npos && hash + 1 < name.size() &&
      std::all_of(name.begin() + hash + 1, name.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    return std::string(name.substr(0, hash));
  }
  return std::string(name);
}

bool IsExecution(const TraceIndex& index, uint32_t id) {
  const Slice& s = index.trace().slices()[id];
  if (s.kind != ActivityKind::kKernel && s.kind != ActivityKind::kMemcpy &&
      s.kind != ActivityKind::kMemset) {
    return false;
  }
  const uint32_t lane = index.LaneOf(id);
  return lane != kNone && index.lanes()[lane].group == LaneGroup::kHardware;
}

// A sequence of top-level ops that repeats (an un-annotated layer called in a loop, e.g. an
// eager RMSNorm made of six aten ops): its period and the device work of each repetition.
struct Repetition {
  size_t period = 0;
  size_t repeats = 0;
  std::vector<StringId> names;            // one period
  int64_t execs = 0, busy = 0, idle = 0;  // totals over the repetitions
};

Repetition FindRepetition(const Trace& trace, const std::vector<uint32_t>& top_ops,
                          const std::unordered_map<uint32_t, CallStats>& calls) {
  Repetition best;
  const auto& slices = trace.slices();
  const size_t n = top_ops.size();
  for (size_t p = 2; p <= 64 && 2 * p <= n; ++p) {
    size_t same = 0;
    for (size_t i = 0; i + p < n; ++i)
      same += slices[top_ops[i]].name == slices[top_ops[i + p]].name;
    if (same < (n - p) * 9 / 10) continue;
    bool varied = false;
    for (size_t i = 1; i < p; ++i) varied |= slices[top_ops[i]].name != slices[top_ops[0]].name;
    if (!varied) return best;  // one op repeated: nothing to fuse across
    best.period = p;
    best.repeats = n / p;
    for (size_t i = 0; i < p; ++i) best.names.push_back(slices[top_ops[i]].name);
    for (size_t r = 0; r < best.repeats; ++r) {
      int64_t first = INT64_MAX, last = INT64_MIN, busy = 0;
      for (size_t i = r * p; i < (r + 1) * p; ++i) {
        const CallStats& c = calls.at(top_ops[i]);
        best.execs += c.execs;
        busy += c.busy;
        first = std::min(first, c.first);
        last = std::max(last, c.last);
      }
      best.busy += busy;
      best.idle += std::max<int64_t>(0, (last - first) - busy);
    }
    return best;
  }
  return best;
}

}  // namespace

std::string FormatNs(double ns) {
  const double a = std::abs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

void WriteSummary(const TraceIndex& index, JsonWriter* w) {
  const Trace& trace = index.trace();
  const auto& slices = trace.slices();
  std::vector<std::string> findings;

  // Device executions per device process, merged into busy intervals; the gaps between them.
  std::unordered_map<uint32_t, std::vector<Interval>> by_device;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    if (!IsExecution(index, i)) continue;
    const uint32_t process = trace.tracks()[slices[i].track].process;
    by_device[process].push_back({slices[i].ts_ns, slices[i].ts_ns + slices[i].dur_ns, i});
  }
  std::vector<Gap> gaps;
  int64_t gap_total = 0;
  for (auto& [process, v] : by_device) {
    std::sort(v.begin(), v.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    int64_t cur_end = v[0].end;
    uint32_t cur_last = v[0].slice;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i].start > cur_end) {
        gaps.push_back({cur_end, v[i].start - cur_end, cur_last, v[i].slice});
        gap_total += v[i].start - cur_end;
      }
      if (v[i].end >= cur_end) {
        cur_end = v[i].end;
        cur_last = v[i].slice;
      }
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.dur > b.dur; });

  const DeviceTimeline timeline = ComputeDeviceTimeline(trace);
  const OpSummary ops = ComputeOpSummary(trace);

  // Host op calls that take several device executions: fusing them would remove the gaps.
  std::unordered_map<uint32_t, CallStats> calls;
  for (const auto& [process, v] : by_device) {
    for (const Interval& e : v) {
      uint32_t op = trace.Link(e.slice).op;
      if (op == kNone && slices[e.slice].external_id != 0) {
        for (uint32_t id : index.WithExternalId(slices[e.slice].external_id)) {
          if (index.IsHostOp(id)) {
            op = id;
            break;
          }
        }
      }
      for (uint32_t a = op; a != kNone; a = slices[a].parent) {
        if (!index.IsHostOp(a)) continue;
        CallStats& c = calls[a];
        ++c.execs;
        c.first = std::min(c.first, e.start);
        c.last = std::max(c.last, e.end);
        c.busy += e.end - e.start;
      }
    }
  }
  struct NameStats {
    int64_t calls = 0, execs = 0, idle = 0, busy = 0;
  };
  std::unordered_map<std::string, NameStats> by_name;
  for (const auto& [op, c] : calls) {
    NameStats& n = by_name[GroupName(trace.Str(slices[op].name))];
    ++n.calls;
    n.execs += c.execs;
    n.busy += c.busy;
    n.idle += std::max<int64_t>(0, (c.last - c.first) - c.busy);
  }
  std::vector<std::pair<std::string, NameStats>> multi;
  for (auto& [name, n] : by_name) {
    // Fusion candidates: a few executions per call (a whole step or model is not one).
    if (n.execs >= 2 * n.calls && n.execs <= 64 * n.calls) multi.emplace_back(name, n);
  }
  std::sort(multi.begin(), multi.end(), [](const auto& a, const auto& b) {
    return a.second.idle != b.second.idle ? a.second.idle > b.second.idle : a.first < b.first;
  });

  if (timeline.activities == 0) {
    findings.push_back("This trace has no device activity: only host time is shown.");
  } else {
    findings.push_back(fmt::format(
        "The device was busy {:.1f}% of the {} between its first and last activity ({} busy, {} "
        "idle, {} activities).",
        timeline.total_ns ? 100.0 * timeline.busy_ns / timeline.total_ns : 0.0,
        FormatNs(timeline.total_ns), FormatNs(timeline.busy_ns), FormatNs(timeline.idle_ns),
        timeline.activities));
  }
  for (size_t i = 0; i < multi.size() && i < 3; ++i) {
    const auto& [name, n] = multi[i];
    const double per_call = static_cast<double>(n.execs) / n.calls;
    findings.push_back(fmt::format(
        "One {} call takes {:.0f} device executions ({} calls, {} executions); fusing each call "
        "into one execution would save ~{} per call, the device idle time between its executions "
        "({} of busy device time per call).",
        name, per_call, n.calls, n.execs, FormatNs(static_cast<double>(n.idle) / n.calls),
        FormatNs(static_cast<double>(n.busy) / n.calls)));
  }
  // Top-level host ops that launched device work, in time order, for repeated sequences.
  std::vector<uint32_t> top_ops;
  for (const auto& [op, c] : calls) {
    bool top = true;
    for (uint32_t a = slices[op].parent; a != kNone && top; a = slices[a].parent) {
      top = !index.IsHostOp(a);
    }
    if (top) top_ops.push_back(op);
  }
  std::sort(top_ops.begin(), top_ops.end(),
            [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
  const Repetition rep = FindRepetition(trace, top_ops, calls);
  if (rep.period > 0 && rep.execs >= static_cast<int64_t>(2 * rep.repeats)) {
    std::string names;
    for (StringId id : rep.names) names += (names.empty() ? "" : ", ") + std::string(trace.Str(id));
    const double per = static_cast<double>(rep.execs) / rep.repeats;
    const double idle = static_cast<double>(rep.idle) / rep.repeats;
    const double busy = static_cast<double>(rep.busy) / rep.repeats;
    const std::string saving =
        idle >= 0.01 * busy
            ? fmt::format("~{} of device idle time between executions per repetition",
                          FormatNs(idle))
            : std::string(
                  "the round trips of intermediate results through device memory between "
                  "them (the executions already run back to back, so the saving is in "
                  "the executions themselves)");
    findings.push_back(fmt::format(
        "A sequence of {} ops ({}) repeats {} times and takes {:.0f} device executions each time "
        "({} of device time per repetition); fusing it into one execution would remove {:.0f} "
        "launches and {}.",
        rep.period, names, rep.repeats, per, FormatNs(busy), per - 1, saving));
  }
  if (!ops.rows.empty() && ops.total_direct_device_ns > 0 && ops.rows[0].direct_device_ns > 0) {
    findings.push_back(fmt::format(
        "{} takes {:.1f}% of the device time attributed to ops ({} over "
        "{} calls).",
        ops.rows[0].name, 100.0 * ops.rows[0].direct_device_ns / ops.total_direct_device_ns,
        FormatNs(ops.rows[0].direct_device_ns), ops.rows[0].calls));
  }
  if (!gaps.empty()) {
    findings.push_back(fmt::format(
        "The longest device idle gap is {}, after {} ({} gaps, {} in all).", FormatNs(gaps[0].dur),
        trace.Str(slices[gaps[0].before].name), gaps.size(), FormatNs(gap_total)));
  }
  // Engine lanes: how much of the instruction time is data movement.
  int64_t dma_ns = 0, engine_ns = 0;
  for (const Lane& lane : index.lanes()) {
    if (lane.group != LaneGroup::kEngines) continue;
    const bool dma =
        lane.title.find("DMA") != std::string::npos || lane.title.find("dma") != std::string::npos;
    for (const LaneRow& row : lane.rows) {
      const int64_t t = row.busy.empty() ? 0 : row.busy.back();
      engine_ns = internal::SatAdd(engine_ns, t);
      if (dma) dma_ns = internal::SatAdd(dma_ns, t);
    }
  }
  if (engine_ns > 0 && dma_ns > 0) {
    findings.push_back(fmt::format(
        "DMA queues account for {:.1f}% of the engine instruction time ({} of {}): {}.",
        100.0 * dma_ns / engine_ns, FormatNs(dma_ns), FormatNs(engine_ns),
        dma_ns * 2 > engine_ns ? "the device work is dominated by data movement, which fusion "
                                 "reduces by keeping intermediates on chip"
                               : "compute engines dominate the device work"));
  }
  uint64_t dropped = 0;
  for (const auto& d : trace.metadata().dropped) dropped += d.second;
  if (dropped > 0) {
    findings.push_back(
        fmt::format("{} events were dropped while recording: figures undercount.", dropped));
  }

  w->BeginObject();
  w->Key("timeline");
  w->BeginObject();
  w->Field("start_ns", timeline.start_ns);
  w->Field("end_ns", timeline.end_ns);
  w->Field("total_ns", timeline.total_ns);
  w->Field("busy_ns", timeline.busy_ns);
  w->Field("idle_ns", timeline.idle_ns);
  w->Field("activities", timeline.activities);
  w->EndObject();
  w->Key("top_ops");
  w->BeginArray();
  for (size_t i = 0; i < ops.rows.size() && i < 10; ++i) {
    const OpDeviceTime& r = ops.rows[i];
    w->BeginObject();
    w->Field("name", r.name);
    w->Field("calls", r.calls);
    w->Field("device_ns", r.direct_device_ns);
    w->Field("subtree_device_ns", r.subtree_device_ns);
    w->EndObject();
  }
  w->EndArray();
  w->Key("gaps");
  w->BeginObject();
  w->Field("count", static_cast<uint64_t>(gaps.size()));
  w->Field("total_ns", gap_total);
  w->Field("max_ns", gaps.empty() ? int64_t{0} : gaps[0].dur);
  w->Field("mean_ns", gaps.empty() ? 0.0 : static_cast<double>(gap_total) / gaps.size());
  w->Key("largest");
  w->BeginArray();
  for (size_t i = 0; i < gaps.size() && i < 5; ++i) {
    w->BeginObject();
    w->Field("ts", gaps[i].ts);
    w->Field("dur", gaps[i].dur);
    w->Key("before");
    index.WriteSliceRef(gaps[i].before, w);
    w->Key("after");
    index.WriteSliceRef(gaps[i].after, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("multi_execution_ops");
  w->BeginArray();
  for (size_t i = 0; i < multi.size() && i < 10; ++i) {
    w->BeginObject();
    w->Field("name", multi[i].first);
    w->Field("calls", multi[i].second.calls);
    w->Field("executions", multi[i].second.execs);
    w->Field("idle_ns", multi[i].second.idle);
    w->Field("busy_ns", multi[i].second.busy);
    w->EndObject();
  }
  w->EndArray();
  w->Key("findings");
  w->BeginArray();
  for (const auto& f : findings) w->String(f);
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
