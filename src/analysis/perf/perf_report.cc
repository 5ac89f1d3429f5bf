// `opscope report --perf`: text and JSON of the performance model (see perf_report.h).
#include "analysis/perf/perf_report.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "analysis/perf/critical_path_json.h"

namespace opscope::analysis {
namespace {

std::string Time(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f}s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f}ms", ns / 1e6);
  return fmt::format("{:.3f}us", ns / 1e3);
}

std::string Num(double v, int decimals = 3) {
  return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, decimals);
}

std::string Pct(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}%", v); }

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 3)) + "...";
}

// "c10::BFloat16" -> "bf16" for compact tables; other type names as they are.
std::string ShortTypes(const std::string& types_json) {
  std::string out = types_json;
  for (auto [from, to] : {std::pair{"c10::BFloat16", "bf16"}, {"c10::Half", "fp16"}}) {
    for (size_t at; (at = out.find(from)) != std::string::npos;) out.replace(at, strlen(from), to);
  }
  return out;
}

template <typename Rows>
int Shown(const Rows& rows, int limit) {
  return limit < 0 ? static_cast<int>(rows.size()) : std::min(limit, static_cast<int>(rows.size()));
}

void AppendDevice(const PerfModel& pm, const std::string& trace_device, std::string* out) {
  if (!pm.device) {
    *out += fmt::format(
        "  no peak figures for device '{}': roofline columns left empty (--device-spec NAME|FILE;"
        " built in:",
        trace_device.empty() ? "unknown" : trace_device);
    for (const DeviceSpec& s : BuiltinDeviceSpecs()) *out += " " + s.name;
    *out += ")\n";
    return;
  }
  const DeviceSpec& d = *pm.device;
  *out += fmt::format("  device {}: memory {:.0f} GB/s", d.name, d.mem_bw_gbps);
  for (const auto& [spec, tflops] : d.tflops) *out += fmt::format(", {} {:g}", spec, tflops);
  *out += fmt::format(" TFLOPS\n  ({})\n", d.source);
}

void AppendCategories(const PerfModel& pm, std::string* out) {
  *out += "Ops by category (kernel-launching ops, direct device time)\n";
  *out +=
      fmt::format("  {:<22} {:>8} {:>14} {:>9}\n", "Category", "Count", "Device time", "Percent");
  for (const CategoryTime& c : pm.ops_by_category) {
    *out += fmt::format("  {:<22} {:>8} {:>14} {:>8.2f}%\n", c.category, c.count,
                        Time(static_cast<double>(c.direct_ns)), c.percent);
  }
}

void AppendRows(const PerfModel& pm, int limit, std::string* out) {
  *out += fmt::format("Per op and args, by device time ({} rows)\n", pm.rows.size());
  *out += fmt::format(
      "  {:<32} {:<12} {:>6} {:>12} {:>9} {:>9} {:>8} {:>9} {:>7} {:>7} {:>7} "
      "{:<7}  {}\n",
      "Op", "Category", "Count", "Device time", "GFLOPS", "Data MB", "FLOPs/B", "TFLOPS/s", "TB/s",
      "%Comp", "%Mem", "Bound", "Input dims / dtypes");
  for (int i = 0; i < Shown(pm.rows, limit); ++i) {
    const PerfModelRow& r = pm.rows[i];
    *out += fmt::format(
        "  {:<32} {:<12} {:>6} {:>12} {:>9} {:>9} {:>8} {:>9} {:>7} {:>7} {:>7} {:<7}  {}\n",
        Cut(r.name, 32), Cut(r.category, 12), r.count,
        Time(static_cast<double>(r.kernel_time_ns_sum)), Num(r.gflops), Num(r.data_moved_mb),
        Num(r.flops_per_byte, 1), Num(r.tflops_per_s.mean, 2), Num(r.tb_per_s.mean, 3),
        Pct(r.pct_compute_roof), Pct(r.pct_memory_roof), r.bound.empty() ? "-" : r.bound,
        Cut(r.input_dims + " " + ShortTypes(r.dtypes), 72));
  }
}

void AppendUniqueArgs(const PerfModel& pm, int limit, std::string* out) {
  *out += fmt::format("Kernel launchers by op and args ({} rows, direct device time)\n",
                      pm.unique_args.size());
  *out += fmt::format("  {:<32} {:<12} {:>6} {:>12} {:>12} {:>12}  {}\n", "Op", "Category", "Count",
                      "Total", "Mean", "Median", "Input dims / dtypes");
  for (int i = 0; i < Shown(pm.unique_args, limit); ++i) {
    const UniqueArgsRow& r = pm.unique_args[i];
    *out += fmt::format("  {:<32} {:<12} {:>6} {:>12} {:>12} {:>12}  {}\n", Cut(r.name, 32),
                        Cut(r.category, 12), r.count, Time(static_cast<double>(r.direct_ns_sum)),
                        Time(r.direct_us.mean * 1e3), Time(r.direct_us.median * 1e3),
                        Cut(r.input_dims + " " + ShortTypes(r.dtypes), 72));
  }
}

void AppendShortKernels(const PerfModel& pm, int limit, std::string* out) {
  const ShortKernels& sk = pm.short_kernels;
  int64_t sum = 0;
  for (const auto& r : sk.rows) sum += r.sum_ns;
  *out += fmt::format("Short kernels (< {:g} us): {} kernels", sk.threshold_us, sk.kernels);
  if (pm.total_time_ns > 0) {
    *out += fmt::format(", those with a launching op {} = {:.2f}% of the device timeline",
                        Time(static_cast<double>(sum)),
                        100.0 * static_cast<double>(sum) / static_cast<double>(pm.total_time_ns));
  }
  *out += "\n";
  if (sk.kernels == 0) return;
  *out += fmt::format("  {:>12} {:>7} {:>10} {:>8}  {:<28}  {}\n", "Total", "Count", "Mean",
                      "% total", "Parent op", "Kernel");
  for (int i = 0; i < Shown(sk.rows, limit); ++i) {
    const auto& r = sk.rows[i];
    *out += fmt::format("  {:>12} {:>7} {:>10} {:>7.2f}%  {:<28}  {}\n",
                        Time(static_cast<double>(r.sum_ns)), r.count,
                        Time(static_cast<double>(r.sum_ns) / static_cast<double>(r.count)),
                        r.percent_of_total, Cut(r.parent_op, 28), Cut(r.kernel, 70));
  }
  // The histogram in ten rows (each the sum of a tenth of the bins).
  *out += "  duration histogram (us):";
  const size_t step = std::max<size_t>(1, sk.bins.size() / 10);
  for (size_t b = 0; b < sk.bins.size(); b += step) {
    int64_t n = 0;
    const size_t end = std::min(sk.bins.size(), b + step);
    for (size_t k = b; k < end; ++k) n += sk.bins[k].count;
    *out += fmt::format(" [{:.2f},{:.2f}):{}", sk.bins[b].start_us, sk.bins[end - 1].end_us, n);
  }
  *out += "\n";
}

void WriteStats(JsonWriter* w, std::string_view key, const PerfStats& s) {
  w->Key(key);
  w->BeginObject();
  w->Field("mean", s.mean);
  w->Field("median", s.median);
  w->Field("min", s.min);
  w->Field("max", s.max);
  w->EndObject();
}

void RawOrNull(JsonWriter* w, std::string_view key, const std::string& json) {
  w->Key(key);
  if (json.empty()) {
    w->Null();
  } else {
    w->Raw(json);
  }
}

void WriteKernels(JsonWriter* w, const std::vector<KernelBrief>& kernels) {
  w->Key("kernels");
  w->BeginArray();
  for (const KernelBrief& k : kernels) {
    w->BeginObject();
    w->Field("name", k.name);
    w->Field("stream", k.stream);
    w->Field("count", k.count);
    w->Field("total_us", static_cast<double>(k.total_ns) / 1e3);
    w->EndObject();
  }
  w->EndArray();
}

// The fields naming an op with one set of args (PerfModelRow and UniqueArgsRow share them).
template <typename R>
void WriteOpIdentity(JsonWriter* w, const R& r) {
  w->Field("name", r.name);
  w->Field("category", r.category);
  RawOrNull(w, "input_dims", r.input_dims);
  RawOrNull(w, "dtypes", r.dtypes);
  RawOrNull(w, "input_strides", r.strides);
  RawOrNull(w, "concrete_inputs", r.concrete);
  w->Field("count", r.count);
}

void WriteRow(JsonWriter* w, const PerfModelRow& r) {
  w->BeginObject();
  WriteOpIdentity(w, r);
  w->Field("has_perf_model", r.has_model);
  if (!r.model_error.empty()) w->Field("model_error", r.model_error);
  w->Field("compute_spec", r.compute_spec);
  w->Field("gflops", r.gflops);
  w->Field("data_moved_mb", r.data_moved_mb);
  w->Field("flops_per_byte", r.flops_per_byte);
  w->Field("tflops_per_s_mean", r.tflops_per_s.mean);
  w->Field("tb_per_s_mean", r.tb_per_s.mean);
  w->Field("kernel_time_us_sum", static_cast<double>(r.kernel_time_ns_sum) / 1e3);
  w->Key("bound");
  if (r.bound.empty()) {
    w->Null();
  } else {
    w->String(r.bound);
  }
  w->Field("pct_compute_roof", r.pct_compute_roof);
  w->Field("pct_memory_roof", r.pct_memory_roof);
  w->Field("percent", r.percent);
  WriteStats(w, "tflops_per_s", r.tflops_per_s);
  WriteStats(w, "tb_per_s", r.tb_per_s);
  WriteStats(w, "kernel_time_us", r.kernel_time_us);
  w->Key("params");
  w->BeginObject();
  for (const auto& [k, v] : r.params) w->Field(k, v);
  w->EndObject();
  WriteKernels(w, r.kernels);
  w->Field("example_slice", r.example_slice);
  w->EndObject();
}

void WriteDevice(JsonWriter* w, const std::optional<DeviceSpec>& d) {
  w->Key("device_spec");
  if (!d) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Field("name", d->name);
  w->Field("source", d->source);
  w->Field("mem_bw_gbps", d->mem_bw_gbps);
  w->Key("tflops");
  w->BeginObject();
  for (const auto& [k, v] : d->tflops) w->Field(k, v);
  w->EndObject();
  w->EndObject();
}

void WriteShortKernels(JsonWriter* w, const ShortKernels& sk, int limit) {
  w->Key("short_kernels");
  w->BeginObject();
  w->Field("threshold_us", sk.threshold_us);
  w->Field("kernels", sk.kernels);
  w->Key("rows");
  w->BeginArray();
  for (int i = 0; i < Shown(sk.rows, limit); ++i) {
    const auto& r = sk.rows[i];
    w->BeginObject();
    w->Field("parent_op", r.parent_op);
    RawOrNull(w, "input_dims", r.input_dims);
    RawOrNull(w, "input_strides", r.strides);
    RawOrNull(w, "concrete_inputs", r.concrete);
    w->Field("kernel", r.kernel);
    w->Field("count", r.count);
    w->Field("sum_us", static_cast<double>(r.sum_ns) / 1e3);
    w->Field("percent_of_total", r.percent_of_total);
    w->EndObject();
  }
  w->EndArray();
  w->Key("histogram");
  w->BeginArray();
  for (const auto& b : sk.bins) {
    w->BeginObject();
    w->Field("bin_start_us", b.start_us);
    w->Field("bin_end_us", b.end_us);
    w->Field("count", b.count);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

// The performance model with the options' device spec; an unusable spec (ValidateReportOptions
// rejects it first in the CLI) leaves the roofline out, its reason in *spec_error.
PerfModel ComputeForReport(const Trace& trace, const ReportOptions& options,
                           std::string* trace_device, std::string* spec_error) {
  PerfModelOptions po;
  const Status st =
      ChooseDeviceSpec(trace, options.device_spec, &po.device, options.extra_device_specs);
  if (!st.ok()) {
    *spec_error = st.message();
    po.device.reset();
  }
  *trace_device = TraceDeviceName(trace);
  return ComputePerfModel(trace, po);
}

IdleBreakdownOptions IdleOptions(const ReportOptions& options) {
  IdleBreakdownOptions o;
  o.consecutive_kernel_delay_us = options.consecutive_kernel_delay_us;
  return o;
}

CriticalPathOptions PathOptions(const ReportOptions& options) {
  CriticalPathOptions o;
  o.annotation = options.critical_path_step;
  o.instance = options.critical_path_instance;
  return o;
}

}  // namespace

void WritePerfModelJson(const PerfModel& pm, int rows, JsonWriter* w) {
  WriteDevice(w, pm.device);
  w->Key("perf_model");
  w->BeginArray();
  for (int i = 0; i < Shown(pm.rows, rows); ++i) WriteRow(w, pm.rows[i]);
  w->EndArray();
  w->Key("ops_by_category");
  w->BeginArray();
  for (const CategoryTime& c : pm.ops_by_category) {
    w->BeginObject();
    w->Field("category", c.category);
    w->Field("count", c.count);
    w->Field("direct_time_us", static_cast<double>(c.direct_ns) / 1e3);
    w->Field("percent", c.percent);
    w->EndObject();
  }
  w->EndArray();
  w->Key("ops_unique_args");
  w->BeginArray();
  for (int i = 0; i < Shown(pm.unique_args, rows); ++i) {
    const UniqueArgsRow& r = pm.unique_args[i];
    w->BeginObject();
    WriteOpIdentity(w, r);
    w->Field("direct_time_us_sum", static_cast<double>(r.direct_ns_sum) / 1e3);
    w->Field("subtree_time_us_sum", static_cast<double>(r.subtree_ns_sum) / 1e3);
    WriteStats(w, "direct_time_us", r.direct_us);
    w->Field("percent", r.percent);
    WriteKernels(w, r.kernels);
    w->Field("example_slice", r.example_slice);
    w->EndObject();
  }
  w->EndArray();
  WriteShortKernels(w, pm.short_kernels, rows);
  w->Field("perf_model_failed_instances", pm.failed_models);
}

void AppendPerfSections(const Trace& trace, const ReportOptions& options, std::string* out) {
  std::string device, spec_error;
  const PerfModel pm = ComputeForReport(trace, options, &device, &spec_error);
  *out += "\nPerformance model (TraceLens's definitions; docs/perf-model.md)\n";
  if (!spec_error.empty()) *out += "  device spec: " + spec_error + "\n";
  AppendDevice(pm, device, out);
  if (pm.failed_models > 0) {
    *out += fmt::format(
        "  {} modeled op instances have args their model cannot read (e.g. no "
        "Input type recorded): no GFLOPS for them\n",
        pm.failed_models);
  }
  *out += "\n";
  AppendCategories(pm, out);
  *out += "\n";
  AppendRows(pm, options.rows, out);
  *out += "\n";
  AppendUniqueArgs(pm, options.rows, out);
  *out += "\n";
  AppendShortKernels(pm, options.rows, out);
  *out += "\n";
  AppendIdleBreakdown(ComputeIdleBreakdown(trace, IdleOptions(options)), out);
  *out += "\n";
  AppendCriticalPath(ComputeCriticalPath(trace, PathOptions(options)), options.rows, out);
}

void WritePerfJson(const Trace& trace, const ReportOptions& options, JsonWriter* w) {
  std::string device, spec_error;
  const PerfModel pm = ComputeForReport(trace, options, &device, &spec_error);
  if (!spec_error.empty()) w->Field("device_spec_error", spec_error);
  WritePerfModelJson(pm, options.rows, w);
  w->Key("idle_breakdown");
  WriteIdleBreakdownJson(ComputeIdleBreakdown(trace, IdleOptions(options)), w);
  w->Key("critical_path");
  w->BeginObject();
  CriticalPathJsonOptions json;
  json.top_events = options.rows;
  WriteCriticalPathFields(trace, ComputeCriticalPath(trace, PathOptions(options)), json, w);
  w->EndObject();
}

}  // namespace opscope::analysis
