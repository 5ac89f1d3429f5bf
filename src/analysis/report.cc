// `opscope report`: key_averages table, device timeline, top kernels and launch statistics.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "analysis/device_activity.h"
#include "analysis/perf/perf_report.h"
#include "base/cores.h"
#include "base/json_writer.h"
#include "base/parallel_for.h"
#include "opscope/analysis.h"
#include "opscope/key_averages.h"
#include "opscope/neuron_device.h"

namespace opscope {
namespace {

std::string FormatNs(double ns) {
  const double a = ns < 0 ? -ns : ns;
  if (a >= 1e9) return fmt::format("{:.3f}s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f}ms", ns / 1e6);
  return fmt::format("{:.3f}us", ns / 1e3);
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 3)) + "...";
}

std::string DefaultSort(const Trace& trace, const ReportOptions& options) {
  if (!options.sort_by.empty()) return options.sort_by;
  return trace.HasDeviceActivity() ? "device_time_total" : "cpu_time_total";
}

// From this many slices the report's analyses run side by side when each runs on one thread
// (below kParallelAnalysisSlices, or --threads 1 not given): they are independent, each reads the
// finalized trace (const, safe from any number of threads) and writes only its own result, so the
// report is the same byte for byte. A task is then a few milliseconds against a thread's start of
// ~0.1 ms; they are coarse enough that a shared machine only time-slices them (no hand-over
// between threads), so no load sampling. 53 MB real-content trace (181,680 slices), 2-core VM:
// the text report's analyses 13-15 ms one after another.
constexpr size_t kSideBySideSlices = 32768;

struct ReportParts {
  Report report;
  NeuronDeviceReport neuron;
};

// The report's analyses (the op summary only with `ops`; the Neuron section only without: the
// JSON writer computes its own), longest first so that the last task to start is a short one.
ReportParts ComputeParts(const Trace& trace, const ReportOptions& options, bool ops) {
  const size_t slices = trace.slices().size();
  const int threads = analysis::AnalysisThreads(options.threads, slices);
  const int side_by_side = threads == 1 && options.threads <= 0 && slices >= kSideBySideSlices
                               ? internal::AffinityCores()
                               : 1;
  ReportParts parts;
  Report& r = parts.report;
  std::vector<std::function<void()>> tasks = {
      [&] { r.launches = ComputeLaunchStatistics(trace, threads); },
      [&] {
        r.key_averages = KeyAverages::FromTrace(
            trace, {.group_by_input_shape = options.group_by_input_shape, .threads = threads});
      },
      [&] { r.timeline = ComputeDeviceTimeline(trace, kNone, false, threads); },
      [&] { r.device_timelines = ComputeDeviceTimelines(trace, threads); },
      [&] { r.kernels = ComputeKernelSummary(trace, threads); },
  };
  if (ops) {
    tasks.push_back([&] { r.ops = ComputeOpSummary(trace, true, threads); });
  } else {
    tasks.push_back([&] { parts.neuron = ComputeNeuronDevice(trace); });
  }
  internal::ParallelFor(side_by_side, tasks.size(), [&](size_t i) { tasks[i](); });
  return parts;
}

void AppendTimeline(const Trace& trace, const DeviceTimeline& tl, std::string* out) {
  const std::string device =
      trace.metadata().device_type.empty() ? "device" : trace.metadata().device_type;
  *out += fmt::format("{} timeline ({} activities", device, tl.activities);
  if (tl.unlinked_activities > 0 && trace.metadata().timeline_rule == DeviceTimelineRule::kXla) {
    *out += fmt::format("; {} with no runtime call or op counted, as TraceLens's JAX report does",
                        tl.unlinked_activities);
  } else if (tl.unlinked_activities > 0) {
    *out += fmt::format("; {} with no runtime call or op left out, as TraceLens does",
                        tl.unlinked_activities);
  }
  *out += ")\n";
  if (tl.activities == 0) {
    *out += tl.unlinked_activities == 0 ? "  no device activity in this trace\n"
                                        : "  no device activity is linked to a runtime call\n";
    return;
  }
  const std::pair<const char*, int64_t> rows[] = {
      {"total", tl.total_ns},
      {"busy", tl.busy_ns},
      {"idle", tl.idle_ns},
      {"computation", tl.computation_ns},
      {"exposed communication", tl.exposed_comm_ns},
      {"exposed memcpy", tl.exposed_memcpy_ns},
      {"communication (all)", tl.total_comm_ns},
      {"memcpy (all)", tl.total_memcpy_ns},
  };
  for (const auto& [label, ns] : rows) {
    *out += fmt::format("  {:<22} {:>12}  {:>8}\n", label, FormatNs(static_cast<double>(ns)),
                        Percent(ns, tl.total_ns));
  }
}

// One row per device (traces with two or more): the timeline's figures of each alone.
void AppendDeviceTimelines(const std::vector<DeviceTimelineOfDevice>& devices, std::string* out) {
  if (devices.size() < 2) return;
  *out += fmt::format("Per device ({} devices)\n", devices.size());
  *out += fmt::format("  {:<24}  {:>12}  {:>12}  {:>8}  {:>12}  {:>12}  {:>12}  {:>10}\n", "Device",
                      "Total", "Busy", "Busy %", "Computation", "Exp. comm", "Exp. memcpy",
                      "Activities");
  for (const DeviceTimelineOfDevice& d : devices) {
    const DeviceTimeline& tl = d.timeline;
    *out += fmt::format("  {:<24}  {:>12}  {:>12}  {:>8}  {:>12}  {:>12}  {:>12}  {:>10}\n",
                        Cut(d.device, 24), FormatNs(static_cast<double>(tl.total_ns)),
                        FormatNs(static_cast<double>(tl.busy_ns)), Percent(tl.busy_ns, tl.total_ns),
                        FormatNs(static_cast<double>(tl.computation_ns)),
                        FormatNs(static_cast<double>(tl.exposed_comm_ns)),
                        FormatNs(static_cast<double>(tl.exposed_memcpy_ns)), tl.activities);
  }
}

void AppendKernels(const KernelSummary& ks, int limit, std::string* out) {
  *out += fmt::format("Top kernels by total time ({} groups, {} total)\n", ks.rows.size(),
                      FormatNs(static_cast<double>(ks.total_ns)));
  if (ks.rows.empty()) return;
  *out += fmt::format("  {:>12}  {:>7}  {:>12}  {:>12}  {:>12}  {:>6}  {:<30}  {}\n", "Total",
                      "Count", "Mean", "Min", "Max", "Stream", "Parent op", "Kernel");
  int shown = 0;
  for (const KernelStats& k : ks.rows) {
    if (limit >= 0 && shown++ >= limit) break;
    *out += fmt::format(
        "  {:>12}  {:>7}  {:>12}  {:>12}  {:>12}  {:>6}  {:<30}  {}\n",
        FormatNs(static_cast<double>(k.sum_ns)), k.count, FormatNs(k.mean_ns()),
        FormatNs(static_cast<double>(k.min_ns)), FormatNs(static_cast<double>(k.max_ns)), k.stream,
        Cut(k.parent_op.empty() ? "(no launcher)" : k.parent_op, 30), Cut(k.kernel, 80));
  }
}

void AppendLaunches(const LaunchStatistics& ls, int limit, std::string* out) {
  *out += fmt::format(
      "Launch statistics ({} runtime calls, {} device activities without one; p50/p99 by linear "
      "interpolation between order statistics, as numpy.percentile)\n",
      ls.duration.count, ls.unlinked_activities);
  if (ls.by_name.empty()) return;
  *out += fmt::format("  {:<32}  {:>7}  {:>12}  {:>12}  {:>12}  {:>14}  {:>14}  {:>14}\n",
                      "Runtime call", "Calls", "Dur mean", "Dur p50", "Dur p99", "Delay mean",
                      "Delay p50", "Delay p99");
  auto row = [&](const std::string& name, const DurationStats& d, const DurationStats& l) {
    *out += fmt::format("  {:<32}  {:>7}  {:>12}  {:>12}  {:>12}  {:>14}  {:>14}  {:>14}\n",
                        Cut(name, 32), d.count, FormatNs(d.mean_ns()), FormatNs(d.p50_ns),
                        FormatNs(d.p99_ns), FormatNs(l.mean_ns()), FormatNs(l.p50_ns),
                        FormatNs(l.p99_ns));
  };
  int shown = 0;
  for (const RuntimeCallStats& r : ls.by_name) {
    if (limit >= 0 && shown++ >= limit) break;
    row(r.name, r.duration, r.launch_delay);
  }
  row("(all)", ls.duration, ls.launch_delay);
}

// Bytes as key_averages prints memory (_format_memory: 1024-based Kb / Mb / Gb).
std::string FormatBytes(int64_t bytes) {
  const double v = static_cast<double>(bytes), mag = v < 0 ? -v : v;
  if (mag >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} Gb", v / (1024.0 * 1024 * 1024));
  if (mag >= 1024.0 * 1024) return fmt::format("{:.2f} Mb", v / (1024.0 * 1024));
  if (mag >= 1024.0) return fmt::format("{:.2f} Kb", v / 1024.0);
  return fmt::format("{} b", bytes);
}

void AppendMemory(const MemoryTimeline& mt, int limit, std::string* out) {
  *out +=
      fmt::format("Memory timeline ({} [memory] events; times are trace timestamps)\n", mt.events);
  if (mt.devices.empty()) {
    *out += "  no [memory] events: record with profile_memory=True\n";
    return;
  }
  *out += fmt::format("  {:<12}  {:>8}  {:>8}  {:>14}  {:>18}  {:>14}\n", "Device", "Allocs",
                      "Frees", "Peak allocated", "Peak at (us)", "Peak reserved");
  for (const DeviceMemory& d : mt.devices) {
    *out +=
        fmt::format("  {:<12}  {:>8}  {:>8}  {:>14}  {:>18.3f}  {:>14}\n", d.device, d.allocations,
                    d.frees, FormatBytes(d.peak_allocated), static_cast<double>(d.peak_ts_ns) / 1e3,
                    d.peak_reserved < 0 ? std::string("-") : FormatBytes(d.peak_reserved));
  }
  for (const DeviceMemory& d : mt.devices) {
    *out += fmt::format("  Ops holding the most at {}'s peak ({} allocated):\n", d.device,
                        FormatBytes(d.peak_allocated));
    *out += fmt::format("    {:>12}  {:>7}  {}\n", "Bytes", "Allocs", "Op");
    int shown = 0;
    for (const MemoryHolder& h : d.holders_at_peak) {
      if (limit >= 0 && shown++ >= limit) break;
      *out += fmt::format("    {:>12}  {:>7}  {}\n", FormatBytes(h.bytes), h.allocations,
                          Cut(h.op, 80));
    }
  }
}

// Why a trace has no key_averages rows: which kinds of slices it does have.
std::string NoTableReason(const Trace& trace) {
  if (trace.slices().empty()) {
    return "No key_averages table: the trace has no complete events (\"ph\": \"X\").\n";
  }
  std::map<std::string, uint64_t> by_category;
  for (const Slice& s : trace.slices()) {
    std::string cat(trace.Str(s.category));
    by_category[cat.empty() ? "(none)" : cat] += 1;
  }
  std::string seen;
  for (const auto& [cat, count] : by_category) {
    if (!seen.empty()) seen += ", ";
    seen += fmt::format("{} ({})", cat, count);
  }
  return fmt::format(
      "No key_averages table: none of the trace's {} slices is a host op (cpu_op, "
      "user_annotation, runtime or driver call, or a legacy event without \"cat\"); categories "
      "seen: {}\n",
      trace.slices().size(), seen);
}

}  // namespace

std::string FormatReport(const Trace& trace, const ReportOptions& options) {
  std::string out;
  const TraceMetadata& md = trace.metadata();
  out += fmt::format("Trace: {}  device: {}  slices: {}  processes: {}  tracks: {}\n",
                     options.file.empty() ? "(in memory)" : options.file,
                     md.device_type.empty() ? "none" : md.device_type, trace.slices().size(),
                     trace.processes().size(), trace.tracks().size());
  if (!md.trace_name.empty()) out += fmt::format("traceName: {}\n", md.trace_name);
  if (md.skipped_events > 0) {
    out += fmt::format("Warning: {} events were skipped while importing; first: {}\n",
                       md.skipped_events, md.warnings.empty() ? "" : md.warnings.front());
  }
  out += "\n";
  const ReportParts parts = ComputeParts(trace, options, /*ops=*/false);
  const KeyAverages& averages = parts.report.key_averages;
  out += averages.rows().empty() ? NoTableReason(trace)
                                 : averages.Table(DefaultSort(trace, options), options.rows);
  out += "\n";
  if (options.memory) {
    AppendMemory(ComputeMemoryTimeline(trace, options.rows < 0 ? SIZE_MAX : options.rows), -1,
                 &out);
    out += "\n";
  }
  AppendTimeline(trace, parts.report.timeline, &out);
  AppendDeviceTimelines(parts.report.device_timelines, &out);
  out += "\n";
  AppendKernels(parts.report.kernels, options.rows, &out);
  out += "\n";
  AppendLaunches(parts.report.launches, options.rows, &out);
  // Only traces with Neuron engine or DMA activity get the section (others are unchanged).
  if (parts.neuron.present) {
    out += "\n";
    parts.neuron.AppendText(options.rows, &out);
  }
  if (options.perf) analysis::AppendPerfSections(trace, options, &out);
  return out;
}

Status ValidateReportOptions(const Trace& trace, const ReportOptions& options) {
  if (!options.perf) return Status::Ok();
  std::optional<DeviceSpec> spec;
  return ChooseDeviceSpec(trace, options.device_spec, &spec, options.extra_device_specs);
}

Report ComputeReport(const Trace& trace, const ReportOptions& options) {
  Report report = std::move(ComputeParts(trace, options, /*ops=*/true).report);
  if (report.device_timelines.size() < 2) report.device_timelines.clear();
  return report;
}

std::string ReportJson(const Trace& trace, const ReportOptions& options) {
  return ReportJson(trace, ComputeReport(trace, options), options);
}

std::string ReportJson(const Trace& trace, const Report& report, const ReportOptions& options) {
  JsonWriter w;
  w.BeginObject();
  w.Key("file");
  w.String(options.file);
  w.Key("trace_name");
  w.String(trace.metadata().trace_name);
  w.Key("device_type");
  w.String(trace.metadata().device_type);
  w.Key("skipped_events");
  w.Int(static_cast<int64_t>(trace.metadata().skipped_events));
  w.Key("key_averages");
  w.Raw(report.key_averages.ToJson(DefaultSort(trace, options), options.rows));
  w.Key("device_timeline");
  w.Raw(report.timeline.ToJson());
  if (report.device_timelines.size() >= 2) {
    w.Key("device_timelines");
    w.BeginArray();
    for (const DeviceTimelineOfDevice& d : report.device_timelines) w.Raw(d.ToJson());
    w.EndArray();
  }
  w.Key("ops");
  w.Raw(report.ops.ToJson());
  w.Key("kernels");
  w.Raw(report.kernels.ToJson());
  w.Key("launches");
  w.Raw(report.launches.ToJson());
  if (const NeuronDeviceReport nd = ComputeNeuronDevice(trace); nd.present) {
    w.Key("neuron_device");
    w.Raw(nd.ToJson(options.rows));
  }
  if (options.perf) analysis::WritePerfJson(trace, options, &w);
  if (options.memory) {
    w.Key("memory");
    w.Raw(ComputeMemoryTimeline(trace, options.rows < 0 ? SIZE_MAX : options.rows).ToJson());
  }
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
