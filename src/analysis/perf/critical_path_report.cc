// `opscope report --perf`: text and JSON of the idle-time breakdown and the critical path (see
// perf_report.h; the critical path's JSON is critical_path_json.h's, shared with the Explorer).
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "analysis/perf/critical_path_json.h"
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

// The path's share of the step and the rest by cause (CriticalPathCoverage).
void AppendCoverage(const CriticalPathCoverage& c, std::string* out) {
  *out += fmt::format("  covers {} of {} ({})", Time(c.path_ns), Time(c.total_ns),
                      Pct(c.path_ns, c.total_ns));
  if (c.outside_step_ns > 0) {
    *out += fmt::format(": the step's {} and {} of device work past its end", Time(c.step_ns),
                        Time(c.outside_step_ns));
  }
  *out += "; the rest:\n";
  const std::pair<const char*, int64_t> rest[] = {
      {"host gaps between top-level ops", c.host_gaps_ns},
      {"waits for the device (no device edge)", c.sync_waits_ns},
      {"waits for the CUDA runtime lock", c.runtime_lock_ns},
      {"before the path starts", c.before_path_ns},
      {"after the path ends", c.after_path_ns},
      {"threads not connected to the path", c.threads_not_connected_ns},
      {"events out of order (clock skew)", c.out_of_order_ns},
  };
  for (const auto& [label, ns] : rest) {
    if (ns == 0) continue;
    *out += fmt::format("    {:<40} {:>12} {:>7}", label, Time(ns), Pct(ns, c.total_ns));
    if (ns == c.threads_not_connected_ns && label == rest[5].first) {
      *out += fmt::format("  ({} threads)", c.threads_not_connected);
    }
    *out += "\n";
  }
}

void AppendCriticalPath(const CriticalPath& cp, int rows, std::string* out) {
  const std::string step = cp.annotation.empty() ? "the whole trace" : "'" + cp.annotation + "'";
  *out += "Critical path (HTA's algorithm) through " + step + "\n";
  for (const std::string& note : cp.coverage.notes) *out += "  note: " + note + "\n";
  if (!cp.ok) {
    *out += "  none: " + cp.error + "\n";
    return;
  }
  *out += fmt::format("  {} over a {} step ({} events on it; graph of {} nodes, {} edges)\n",
                      Time(cp.length_ns), Time(cp.end_ns - cp.start_ns), cp.events.size(), cp.nodes,
                      cp.edges);
  AppendCoverage(cp.coverage, out);
  *out += "  the path by what bounds it:\n";
  const std::pair<const char*, int64_t> parts[] = {
      {"device compute", cp.device_compute_ns},
      {"communication", cp.communication_ns},
      {"host ops", cp.host_ops_ns},
      {"launch overhead", cp.launch_overhead_ns},
      {"idle between kernels", cp.idle_ns},
  };
  for (const auto& [label, ns] : parts) {
    *out += fmt::format("    {:<22} {:>12} {:>7}\n", label, Time(ns), Pct(ns, cp.length_ns));
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

namespace {

void WriteCoverage(const CriticalPathCoverage& c, const std::function<int64_t(int64_t)>& time,
                   JsonWriter* w) {
  w->Key("coverage");
  w->BeginObject();
  w->Field("step_ns", c.step_ns);
  w->Field("outside_step_ns", c.outside_step_ns);
  w->Field("total_ns", c.total_ns);
  w->Field("path_ns", c.path_ns);
  w->Field("covered_percent",
           c.total_ns > 0 ? 100.0 * static_cast<double>(c.path_ns) / static_cast<double>(c.total_ns)
                          : 0.0);
  w->Key("rest");
  w->BeginObject();
  w->Field("host_gaps_ns", c.host_gaps_ns);
  w->Field("sync_waits_ns", c.sync_waits_ns);
  w->Field("runtime_lock_ns", c.runtime_lock_ns);
  w->Field("before_path_ns", c.before_path_ns);
  w->Field("after_path_ns", c.after_path_ns);
  w->Field("threads_not_connected_ns", c.threads_not_connected_ns);
  w->Field("out_of_order_ns", c.out_of_order_ns);
  w->EndObject();
  w->Field("threads_not_connected", c.threads_not_connected);
  w->Key("gaps");
  w->BeginArray();
  for (const CriticalPathCoverage::Gap& g : c.gaps) {
    w->BeginObject();
    w->Field("start_ns", time(g.start_ns));
    w->Field("end_ns", time(g.end_ns));
    w->Field("cause", g.cause);
    w->EndObject();
  }
  w->EndArray();
  w->Key("notes");
  w->BeginArray();
  for (const std::string& n : c.notes) w->String(n);
  w->EndArray();
  w->EndObject();
}

}  // namespace

void WriteCriticalPathFields(const Trace& trace, const CriticalPath& cp,
                             const CriticalPathJsonOptions& options, JsonWriter* w) {
  const auto time = [&](int64_t ns) { return options.to_output ? options.to_output(ns) : ns; };
  w->Field("ok", cp.ok);
  if (!cp.ok) w->Field("error", cp.error);
  w->Field("step", cp.annotation);
  if (!options.to_output) w->Field("base_time_ns", trace.metadata().base_time_ns);
  w->Field("start_ns", time(cp.start_ns));
  w->Field("end_ns", time(cp.end_ns));
  w->Field("length_ns", cp.length_ns);
  w->Field("graph_nodes", cp.nodes);
  w->Field("graph_edges", cp.edges);
  std::vector<uint32_t> slices;
  for (const CriticalPathEdge& e : cp.path) {
    slices.push_back(e.from_slice);
    slices.push_back(e.to_slice);
  }
  std::sort(slices.begin(), slices.end());
  w->Field("path_edges", static_cast<int64_t>(cp.path.size()));
  w->Field("path_slices",
           static_cast<int64_t>(std::unique(slices.begin(), slices.end()) - slices.begin()));
  w->Key("breakdown");
  w->BeginObject();
  w->Field("device_compute_ns", cp.device_compute_ns);
  w->Field("communication_ns", cp.communication_ns);
  w->Field("host_ops_ns", cp.host_ops_ns);
  w->Field("launch_overhead_ns", cp.launch_overhead_ns);
  w->Field("idle_ns", cp.idle_ns);
  w->EndObject();
  WriteCoverage(cp.coverage, time, w);
  w->Key("events");
  w->BeginArray();
  const size_t top =
      options.top_events < 0 ? cp.events.size() : static_cast<size_t>(options.top_events);
  for (size_t i = 0; i < std::min(cp.events.size(), top); ++i) {
    const CriticalPathEvent& e = cp.events[i];
    if (e.slice >= trace.slices().size()) continue;
    w->BeginObject();
    w->Field("slice", e.slice);
    w->Field("name", e.name);
    w->Field("bound_by", e.bound_by);
    w->Field("ts_ns", time(e.ts_ns));
    w->Field("dur_ns", e.dur_ns);
    w->Field("on_path_ns", e.on_path_ns);
    if (options.event_fields) options.event_fields(e.slice, w);
    w->EndObject();
  }
  w->EndArray();
  w->Field("events_total", static_cast<int64_t>(cp.events.size()));
  if (!options.path) return;
  w->Key("path");
  w->BeginArray();
  for (const CriticalPathEdge& e : cp.path) {
    w->BeginObject();
    w->Field("from_slice", e.from_slice);
    w->Field("from", e.from_start ? "start" : "end");
    w->Field("to_slice", e.to_slice);
    w->Field("to", e.to_start ? "start" : "end");
    w->Field("type", e.type);
    w->Field("weight_ns", e.weight_ns);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace opscope::analysis
