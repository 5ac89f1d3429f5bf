// `opscope report --perf`: text and JSON of the idle-time breakdown and the critical path (see
// perf_report.h).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/perf/perf_report.h"

namespace opscope::analysis {
namespace {

std::string Time(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (std::abs(v) >= 1e9) return fmt::format("{:.3f}s", v / 1e9);
  if (std::abs(v) >= 1e6) return fmt::format("{:.3f}ms", v / 1e6);
  return fmt::format("{:.3f}us", v / 1e3);
}

std::string Pct(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%",
                                 100.0 * static_cast<double>(part) / static_cast<double>(whole))
                   : "-";
}

double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 3)) + "...";
}

}  // namespace

void AppendIdleBreakdown(const IdleBreakdown& idle, std::string* out) {
  *out += fmt::format(
      "Idle time per stream (HTA's breakdown; kernel wait = gaps under {:g} us, "
      "--consecutive-kernel-delay-us)\n",
      idle.consecutive_kernel_delay_us);
  if (idle.streams.empty()) {
    *out += "  no device streams in this trace\n";
    return;
  }
  *out += fmt::format("  {:>8} {:>10}  {:>14} {:>7}  {:>14} {:>7}  {:>14} {:>7}\n", "Device",
                      "Stream", "Host wait", "gaps", "Kernel wait", "gaps", "Other", "gaps");
  for (const StreamIdle& s : idle.streams) {
    *out +=
        fmt::format("  {:>8} {:>10}  {:>14} {:>7}  {:>14} {:>7}  {:>14} {:>7}\n", s.device,
                    s.stream, Time(s.host_wait_ns), s.host_wait_intervals, Time(s.kernel_wait_ns),
                    s.kernel_wait_intervals, Time(s.other_ns), s.other_intervals);
  }
}

void AppendCriticalPath(const CriticalPath& cp, int rows, std::string* out) {
  const std::string step = cp.annotation.empty() ? "the whole trace" : "'" + cp.annotation + "'";
  *out += "Critical path (HTA's algorithm) through " + step + "\n";
  if (!cp.ok) {
    *out += "  none: " + cp.error + "\n";
    return;
  }
  *out += fmt::format("  {} over a {} step ({} events on it; graph of {} nodes, {} edges)\n",
                      Time(cp.length_ns), Time(cp.end_ns - cp.start_ns), cp.events.size(), cp.nodes,
                      cp.edges);
  const std::pair<const char*, int64_t> parts[] = {
      {"device compute", cp.device_compute_ns},
      {"communication", cp.communication_ns},
      {"host ops", cp.host_ops_ns},
      {"launch overhead", cp.launch_overhead_ns},
      {"idle between kernels", cp.idle_ns},
  };
  for (const auto& [label, ns] : parts) {
    *out += fmt::format("  {:<22} {:>12} {:>7}\n", label, Time(ns), Pct(ns, cp.length_ns));
  }
  *out += fmt::format("  {:>12} {:>7}  {:<26}  {}\n", "On path", "Share", "Bound by", "Event");
  const int shown = rows < 0 ? static_cast<int>(cp.events.size())
                             : std::min(rows, static_cast<int>(cp.events.size()));
  for (int i = 0; i < shown; ++i) {
    const CriticalPathEvent& e = cp.events[i];
    *out += fmt::format("  {:>12} {:>7}  {:<26}  {}\n", Time(e.on_path_ns),
                        Pct(e.on_path_ns, cp.length_ns), e.bound_by, Cut(e.name, 90));
  }
}

void WriteIdleBreakdownJson(const IdleBreakdown& idle, JsonWriter* w) {
  w->BeginArray();
  for (const StreamIdle& s : idle.streams) {
    w->BeginObject();
    w->Field("device", s.device);
    w->Field("stream", s.stream);
    w->Field("consecutive_kernel_delay_us", idle.consecutive_kernel_delay_us);
    w->Field("host_wait_us", Us(s.host_wait_ns));
    w->Field("kernel_wait_us", Us(s.kernel_wait_ns));
    w->Field("other_us", Us(s.other_ns));
    w->Field("host_wait_intervals", s.host_wait_intervals);
    w->Field("kernel_wait_intervals", s.kernel_wait_intervals);
    w->Field("other_intervals", s.other_intervals);
    w->EndObject();
  }
  w->EndArray();
}

void WriteCriticalPathJson(const Trace& trace, const CriticalPath& cp, int top, JsonWriter* w) {
  w->BeginObject();
  w->Field("ok", cp.ok);
  if (!cp.ok) w->Field("error", cp.error);
  w->Field("step", cp.annotation);
  w->Field("start_us", Us(cp.start_ns));
  w->Field("end_us", Us(cp.end_ns));
  w->Field("length_us", Us(cp.length_ns));
  w->Field("graph_nodes", cp.nodes);
  w->Field("graph_edges", cp.edges);
  w->Key("breakdown");
  w->BeginObject();
  w->Field("device_compute_us", Us(cp.device_compute_ns));
  w->Field("communication_us", Us(cp.communication_ns));
  w->Field("host_ops_us", Us(cp.host_ops_ns));
  w->Field("launch_overhead_us", Us(cp.launch_overhead_ns));
  w->Field("idle_us", Us(cp.idle_ns));
  w->EndObject();
  w->Key("events");
  w->BeginArray();
  const size_t shown = top < 0 ? cp.events.size() : std::min(cp.events.size(), size_t(top));
  for (size_t i = 0; i < shown; ++i) {
    const CriticalPathEvent& e = cp.events[i];
    w->BeginObject();
    w->Field("slice", e.slice);
    w->Field("name", e.name);
    w->Field("bound_by", e.bound_by);
    w->Field("ts_us", Us(e.ts_ns));
    w->Field("dur_us", Us(e.dur_ns));
    w->Field("on_path_us", Us(e.on_path_ns));
    w->EndObject();
  }
  w->EndArray();
  w->Key("path");
  w->BeginArray();
  for (const CriticalPathEdge& e : cp.path) {
    w->BeginObject();
    w->Field("from_slice", e.from_slice);
    w->Field("from", e.from_start ? "start" : "end");
    w->Field("to_slice", e.to_slice);
    w->Field("to", e.to_start ? "start" : "end");
    w->Field("type", e.type);
    w->Field("weight_us", Us(e.weight_ns));
    w->EndObject();
  }
  w->EndArray();
  (void)trace;
  w->EndObject();
}

}  // namespace opscope::analysis
