// Interval arithmetic and the launcher rule (see device_activity.h).
#include "analysis/device_activity.h"

#include <algorithm>

#include "base/cores.h"

namespace opscope::analysis {

void MergeIntervals(std::vector<Interval>* v) {
  if (v->empty()) return;
  auto less = [](const Interval& a, const Interval& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  };
  // One lane's intervals come in time order: a sort of millions of them in order was most of a
  // Neuron profile's device section.
  if (!std::is_sorted(v->begin(), v->end(), less)) std::sort(v->begin(), v->end(), less);
  size_t out = 0;
  for (size_t i = 1; i < v->size(); ++i) {
    Interval& last = (*v)[out];
    const Interval& cur = (*v)[i];
    if (cur.begin <= last.end) {
      last.end = std::max(last.end, cur.end);
    } else {
      (*v)[++out] = cur;
    }
  }
  v->resize(out + 1);
}

int64_t Length(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& i : merged) total += i.end - i.begin;
  return total;
}

std::vector<Interval> Subtract(const std::vector<Interval>& from,
                               const std::vector<Interval>& remove) {
  std::vector<Interval> out;
  size_t r = 0;
  for (const Interval& b : from) {
    int64_t current = b.begin;
    while (r < remove.size() && remove[r].end <= b.begin) ++r;
    for (size_t k = r; k < remove.size() && remove[k].begin < b.end; ++k) {
      if (remove[k].begin > current) out.push_back({current, std::min(b.end, remove[k].begin)});
      current = std::max(current, remove[k].end);
      if (current >= b.end) break;
    }
    if (current < b.end) out.push_back({current, b.end});
  }
  return out;
}

int64_t UnionLength(std::vector<Interval> intervals) {
  MergeIntervals(&intervals);
  return Length(intervals);
}

bool IsTimelineActivity(ActivityKind kind) {
  return kind == ActivityKind::kKernel || kind == ActivityKind::kMemcpy ||
         kind == ActivityKind::kMemset;
}

bool IsLinked(const Trace& trace, uint32_t activity) {
  const DeviceLink& link = trace.Link(activity);
  return link.runtime != kNone || link.op != kNone;
}

bool CountsInTimeline(const Trace& trace, uint32_t i, bool include_unlinked) {
  if (!IsTimelineActivity(trace.slices()[i].kind)) return false;
  return include_unlinked || trace.metadata().timeline_rule == DeviceTimelineRule::kXla ||
         IsLinked(trace, i);
}

bool InMemcpyBucket(const Trace& trace, const Slice& activity) {
  if (trace.metadata().timeline_rule != DeviceTimelineRule::kXla) {
    return activity.kind == ActivityKind::kMemcpy;
  }
  const std::string_view name = trace.Str(activity.name);
  auto starts_with = [&](std::string_view prefix) {
    if (name.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      const char c = name[i];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != prefix[i]) return false;
    }
    return true;
  };
  return starts_with("copy") || starts_with("memcpy") || starts_with("memset");
}

bool IsCommunication(std::string_view name) {
  // Lower-cased search without allocating: names run to hundreds of bytes, the patterns are short.
  static constexpr std::string_view kPatterns[] = {"nccl",  "rccl",       "msccl",
                                                   "nccom", "cc_running", "cross_device_reduce"};
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::string_view pattern : kPatterns) {
    if (name.size() < pattern.size()) continue;
    for (size_t i = 0; i + pattern.size() <= name.size(); ++i) {
      size_t k = 0;
      while (k < pattern.size() && lower(name[i + k]) == pattern[k]) ++k;
      if (k == pattern.size()) return true;
    }
  }
  return false;
}

uint32_t LauncherOf(const Trace& trace, uint32_t activity) {
  const DeviceLink& link = trace.Link(activity);
  if (link.runtime == kNone) return link.op;
  const auto& slices = trace.slices();
  if (link.op != kNone) {  // an op on the device's own timeline (XPlane's XLA ops)
    const uint32_t track = slices[link.op].track;
    const uint32_t process = track < trace.tracks().size() ? trace.tracks()[track].process : kNone;
    if (process < trace.processes().size() && trace.processes()[process].is_device) {
      return link.op;
    }
  }
  for (uint32_t p = slices[link.runtime].parent; p != kNone; p = slices[p].parent) {
    const Slice& s = slices[p];
    // Python functions and annotations ("nccl:all_reduce" inside record_param_comms) are not
    // ops: keep walking to the innermost enclosing cpu_op.
    if (s.kind != ActivityKind::kCpuOp || trace.Str(s.name) == "execute") continue;
    return p;
  }
  return link.runtime;
}

int AnalysisThreads(int requested, size_t slices) {
  if (requested > 0) return internal::CapThreads(requested);
  return slices < kParallelAnalysisSlices ? 1 : internal::DefaultThreadsNow(0);
}

}  // namespace opscope::analysis
