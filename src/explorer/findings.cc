// The Summary's plain-language findings (findings.h), each citing the report's figures.
#include "explorer/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "base/saturating.h"

namespace opscope::explorer {
namespace {

using Span = std::pair<int64_t, int64_t>;  // [start_ns, end_ns)

// Host calls that findings count: framework ops and annotated ranges, never a step annotation
// (a step is a container of the work, not a unit of it).
bool IsCall(const Trace& trace, uint32_t slice) {
  const Slice& s = trace.slices()[slice];
  if (s.kind != ActivityKind::kCpuOp && s.kind != ActivityKind::kUserAnnotation) return false;
  return !trace.Str(s.name).starts_with("ProfilerStep#");
}

// The device work of one call: how many activities, their union and their extent.
struct CallWork {
  int64_t executions = 0, busy_ns = 0, first_ns = 0, last_ns = 0;
};

CallWork WorkOf(std::vector<Span> spans) {
  CallWork w;
  w.executions = static_cast<int64_t>(spans.size());
  std::sort(spans.begin(), spans.end());
  w.first_ns = spans.front().first;
  int64_t cur_start = spans.front().first, cur_end = spans.front().second;
  for (const auto& [a, b] : spans) {
    if (a > cur_end) {
      w.busy_ns = internal::SatAdd(w.busy_ns, cur_end - cur_start);
      cur_start = a;
    }
    cur_end = std::max(cur_end, b);
    w.last_ns = std::max(w.last_ns, b);
  }
  w.busy_ns = internal::SatAdd(w.busy_ns, cur_end - cur_start);
  w.last_ns = std::max(w.last_ns, cur_end);
  return w;
}

int64_t IdleOf(const CallWork& w) {
  return std::max<int64_t>(0, w.last_ns - w.first_ns - w.busy_ns);
}

// A templated C++ name shortened for a sentence: template arguments and parameter lists become
// "<…>" and "(…)", a leading "void " goes. Names without template arguments come back unchanged.
std::string ShortName(std::string_view name) {
  if (name.find('<') == std::string_view::npos) return std::string(name);
  if (name.starts_with("void ")) name.remove_prefix(5);
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<' || c == '(') {
      if (depth++ == 0) out += std::string(1, c) + "…";
    } else if (c == '>' || c == ')') {
      depth = std::max(0, depth - 1);
      if (depth == 0) out += c;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

Span SpanOf(const Slice& s) { return {s.ts_ns, s.ts_ns + std::max<int64_t>(s.dur_ns, 0)}; }

}  // namespace

std::string FormatNs(double ns) {
  const double a = std::abs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::vector<FusionCandidate> FindFusionCandidates(const Trace& trace,
                                                  const std::vector<AttributedActivity>& acts) {
  const auto& slices = trace.slices();
  std::unordered_map<uint32_t, std::vector<Span>> per_call;
  std::vector<std::pair<StringId, uint32_t>> outermost;  // per name around one activity
  for (const AttributedActivity& a : acts) {
    outermost.clear();
    for (uint32_t p = a.launcher; p != kNone; p = slices[p].parent) {
      if (!IsCall(trace, p)) continue;
      auto it = std::find_if(outermost.begin(), outermost.end(),
                             [&](const auto& x) { return x.first == slices[p].name; });
      if (it != outermost.end()) {
        it->second = p;
      } else {
        outermost.emplace_back(slices[p].name, p);
      }
    }
    for (const auto& [name, call] : outermost) per_call[call].push_back(SpanOf(slices[a.slice]));
  }
  std::unordered_map<StringId, FusionCandidate> by_name;
  std::unordered_map<StringId, int64_t> depth;  // summed nesting depth of a name's calls
  for (auto& [call, spans] : per_call) {
    const CallWork w = WorkOf(std::move(spans));
    FusionCandidate& c = by_name[slices[call].name];
    depth[slices[call].name] += slices[call].depth;
    c.calls += 1;
    c.executions += w.executions;
    c.busy_ns = internal::SatAdd(c.busy_ns, w.busy_ns);
    c.idle_ns = internal::SatAdd(c.idle_ns, IdleOf(w));
  }
  std::vector<std::pair<double, FusionCandidate>> found;  // (mean depth, candidate)
  for (auto& [name, c] : by_name) {
    if (c.executions < 2 * c.calls || c.executions > 64 * c.calls) continue;
    c.name = std::string(trace.Str(name));
    found.emplace_back(static_cast<double>(depth[name]) / c.calls, std::move(c));
  }
  auto figures = [](const FusionCandidate& c) {
    return std::make_tuple(-c.idle_ns, -c.executions, c.calls, -c.busy_ns);
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    if (figures(a.second) != figures(b.second)) return figures(a.second) < figures(b.second);
    return a.first != b.first ? a.first < b.first : a.second.name < b.second.name;
  });
  std::vector<FusionCandidate> out;
  for (auto& [d, c] : found) {
    if (!out.empty() && figures(out.back()) == figures(c)) {
      out.back().nested.push_back(std::move(c.name));
    } else {
      out.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

// The run of consecutive copies of a period covering the most elements (see FindRepetition).
struct Run {
  size_t period = 0, start = 0, copies = 0;
};

Run BestRun(const std::vector<StringId>& names) {
  Run best;
  const size_t n = names.size();
  for (size_t p = 2; p <= 64 && 3 * p <= n; ++p) {
    size_t length = 0;  // matches names[i] == names[i + p] ending at i
    for (size_t i = 0; i + p <= n; ++i) {
      const bool match = i + p < n && names[i] == names[i + p];
      if (match) {
        ++length;
        continue;
      }
      const size_t copies = length / p + 1, start = i - length;
      length = 0;
      if (copies < 3 || copies * p <= best.copies * best.period) continue;
      const auto block = names.begin() + static_cast<std::ptrdiff_t>(start);
      if (std::all_of(block, block + static_cast<std::ptrdiff_t>(p),
                      [&](StringId x) { return x == *block; })) {
        continue;  // one op repeated: nothing to fuse across
      }
      best = {p, start, copies};
    }
  }
  return best;
}

}  // namespace

Repetition FindRepetition(const Trace& trace, const std::vector<AttributedActivity>& acts) {
  const auto& slices = trace.slices();
  std::unordered_map<uint32_t, std::vector<Span>> per_top;
  for (const AttributedActivity& a : acts) {
    uint32_t top = kNone;
    for (uint32_t p = a.launcher; p != kNone; p = slices[p].parent) {
      if (IsCall(trace, p)) top = p;
    }
    if (top != kNone) per_top[top].push_back(SpanOf(slices[a.slice]));
  }
  std::vector<uint32_t> tops;
  for (const auto& [top, spans] : per_top) tops.push_back(top);
  std::sort(tops.begin(), tops.end(), [&](uint32_t a, uint32_t b) {
    return slices[a].ts_ns != slices[b].ts_ns ? slices[a].ts_ns < slices[b].ts_ns : a < b;
  });
  std::vector<StringId> names;
  for (uint32_t t : tops) names.push_back(slices[t].name);
  const Run run = BestRun(names);
  Repetition rep;
  if (run.copies == 0) return rep;
  for (size_t i = 0; i < run.period; ++i) rep.names.emplace_back(trace.Str(names[run.start + i]));
  rep.repeats = static_cast<int64_t>(run.copies);
  for (size_t c = 0; c < run.copies; ++c) {
    std::vector<Span> spans;
    for (size_t i = 0; i < run.period; ++i) {
      const auto& s = per_top[tops[run.start + c * run.period + i]];
      spans.insert(spans.end(), s.begin(), s.end());
    }
    const CallWork w = WorkOf(std::move(spans));
    rep.executions += w.executions;
    rep.busy_ns = internal::SatAdd(rep.busy_ns, w.busy_ns);
    rep.idle_ns = internal::SatAdd(rep.idle_ns, IdleOf(w));
  }
  return rep;
}

namespace {

void TimelineFinding(const DeviceTimeline& tl, std::vector<std::string>* out) {
  if (tl.activities == 0) {
    out->push_back(tl.unlinked_activities == 0
                       ? "This trace has no device activity: only host time is shown."
                       : fmt::format("None of the {} device activities is linked to a runtime call "
                                     "or op, so the device figures leave them out (as TraceLens "
                                     "does).",
                                     tl.unlinked_activities));
    return;
  }
  std::string left;
  if (tl.unlinked_activities > 0) {
    left = fmt::format(" {} activities with no runtime call or op are left out, as TraceLens does.",
                       tl.unlinked_activities);
  }
  out->push_back(fmt::format(
      "The device was busy {:.1f}% of the {} between its first and last activity ({} busy, {} "
      "idle, {} activities).{}",
      tl.total_ns ? 100.0 * tl.busy_ns / tl.total_ns : 0.0, FormatNs(tl.total_ns),
      FormatNs(tl.busy_ns), FormatNs(tl.idle_ns), tl.activities, left));
}

void FusionFindings(const std::vector<FusionCandidate>& fusion, std::vector<std::string>* out) {
  for (size_t i = 0; i < fusion.size() && i < 3; ++i) {
    const FusionCandidate& c = fusion[i];
    std::string name = c.name;
    if (!c.nested.empty()) {
      name += " (with " + c.nested.front();
      for (size_t k = 1; k < c.nested.size(); ++k) name += ", " + c.nested[k];
      name += " inside)";
    }
    out->push_back(fmt::format(
        "One {} call takes {:.0f} device executions ({} calls, {} executions); fusing each call "
        "into one execution would save ~{} per call, the device idle time between its executions "
        "({} of busy device time per call).",
        name, static_cast<double>(c.executions) / c.calls, c.calls, c.executions,
        FormatNs(static_cast<double>(c.idle_ns) / c.calls),
        FormatNs(static_cast<double>(c.busy_ns) / c.calls)));
  }
}

void RepetitionFinding(const Repetition& rep, std::vector<std::string>* out) {
  if (rep.repeats == 0 || rep.executions < 2 * rep.repeats) return;
  std::string names;
  for (size_t i = 0; i < rep.names.size() && i < 8; ++i) names += (i ? ", " : "") + rep.names[i];
  if (rep.names.size() > 8) names += ", …";
  const double per = static_cast<double>(rep.executions) / rep.repeats;
  const double idle = static_cast<double>(rep.idle_ns) / rep.repeats;
  const double busy = static_cast<double>(rep.busy_ns) / rep.repeats;
  const std::string saving =
      idle >= 0.01 * busy
          ? fmt::format("~{} of device idle time between executions per repetition", FormatNs(idle))
          : std::string(
                "the round trips of intermediate results through device memory between them (the "
                "executions already run back to back, so the saving is in the executions "
                "themselves)");
  out->push_back(fmt::format(
      "A sequence of {} ops ({}) repeats {} times and takes {:.0f} device executions each time "
      "({} of device time per repetition); fusing it into one execution would remove {:.0f} "
      "launches and {}.",
      rep.names.size(), names, rep.repeats, per, FormatNs(busy), per - 1, saving));
}

// The op with the most direct device time, as `opscope report` ranks them. Its launches are
// calls of the op when it is one; otherwise (device work launched outside any op, credited to
// the runtime call or to "(no launcher)") they are counted as launches, never as "0 calls".
void TopOpFinding(const OpSummary& ops, std::vector<std::string>* out) {
  if (ops.rows.empty() || ops.total_direct_device_ns <= 0 || ops.rows[0].direct_device_ns <= 0) {
    return;
  }
  const OpDeviceTime& top = ops.rows[0];
  const std::string over = top.calls > 0
                               ? fmt::format("over {} calls", top.calls)
                               : fmt::format("from {} launches outside any op", top.count);
  out->push_back(fmt::format("{} takes {:.1f}% of the device time attributed to ops ({} {}).",
                             ShortName(top.name),
                             100.0 * top.direct_device_ns / ops.total_direct_device_ns,
                             FormatNs(top.direct_device_ns), over));
}

void GapFinding(const Trace& trace, const IdleGaps& gaps, std::vector<std::string>* out) {
  if (gaps.count == 0) return;
  const IdleGap& g = gaps.largest.front();
  out->push_back(fmt::format(
      "The longest device idle gap is {}, after {} ({} gaps, {} in all: the idle time above).",
      FormatNs(g.dur_ns), ShortName(trace.Str(trace.slices()[g.before].name)), gaps.count,
      FormatNs(gaps.total_ns)));
}

// Engine lanes (Neuron DEVICE mode): how much of the instruction time is data movement.
void DmaFinding(const TraceIndex& index, std::vector<std::string>* out) {
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
  if (engine_ns <= 0 || dma_ns <= 0) return;
  out->push_back(fmt::format(
      "DMA queues account for {:.1f}% of the engine instruction time ({} of {}): {}.",
      100.0 * dma_ns / engine_ns, FormatNs(dma_ns), FormatNs(engine_ns),
      dma_ns * 2 > engine_ns ? "the device work is dominated by data movement, which fusion "
                               "reduces by keeping intermediates on chip"
                             : "compute engines dominate the device work"));
}

void DroppedFinding(const Trace& trace, std::vector<std::string>* out) {
  uint64_t dropped = 0;
  for (const auto& d : trace.metadata().dropped) dropped += d.second;
  if (dropped > 0) {
    out->push_back(
        fmt::format("{} events were dropped while recording: figures undercount.", dropped));
  }
}

}  // namespace

std::vector<std::string> Findings(const TraceIndex& index, const Report& report,
                                  const IdleGaps& gaps, const std::vector<FusionCandidate>& fusion,
                                  const Repetition& repetition) {
  std::vector<std::string> out;
  TimelineFinding(report.timeline, &out);
  FusionFindings(fusion, &out);
  RepetitionFinding(repetition, &out);
  TopOpFinding(report.ops, &out);
  GapFinding(index.trace(), gaps, &out);
  DmaFinding(index, &out);
  DroppedFinding(index.trace(), &out);
  return out;
}

}  // namespace opscope::explorer
