// Trace diff: per-op calls, host time and device time of two traces, sorted by impact. Calls,
// host time and device total are the report's key_averages rows (cpu ops, runtime calls and
// annotations, "ProfilerStep*" once); direct device time and executions are its op summary's.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "opscope/analysis.h"
#include "opscope/key_averages.h"

namespace opscope {
namespace {

struct Side {
  int64_t calls = 0;
  int64_t cpu_ns = 0;
  int64_t device_ns = 0;
  int64_t device_total_ns = 0;
  int64_t executions = 0;
};

std::map<std::string, Side> Collect(const Trace& trace) {
  std::map<std::string, Side> out;
  const KeyAverages averages = KeyAverages::FromTrace(trace);
  for (const KeyAverage& row : averages.rows()) {
    if (row.is_device) continue;  // kernels and device-side annotations: counted by their launcher
    Side& side = out[row.key];
    side.calls += row.count;
    side.cpu_ns = internal::SatAdd(side.cpu_ns, row.cpu_time_total_ns);
    side.device_total_ns = internal::SatAdd(side.device_total_ns, row.device_time_total_ns);
  }
  for (const OpDeviceTime& row : ComputeOpSummary(trace).rows) {
    Side& side = out[row.name];
    side.device_ns = row.direct_device_ns;
    side.executions = row.direct_activities;
  }
  return out;
}

// Relative change above which a figure counts as changed (timing noise stays below it).
constexpr double kChangeThreshold = 0.05;
constexpr int64_t kMinChangeNs = 1000;

bool Differs(int64_t a, int64_t b) {
  const int64_t delta = std::llabs(a - b);
  if (delta < kMinChangeNs) return false;
  return static_cast<double>(delta) > kChangeThreshold * static_cast<double>(std::max(a, b));
}

std::string FormatNs(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (std::llabs(ns) >= 1000000000) return fmt::format("{:.3f}s", v / 1e9);
  if (std::llabs(ns) >= 1000000) return fmt::format("{:.3f}ms", v / 1e6);
  return fmt::format("{:.3f}us", v / 1e3);
}

struct KernelSide {
  int64_t count = 0;
  int64_t total_ns = 0;
};

std::map<std::string, KernelSide> CollectKernels(const Trace& trace) {
  std::map<std::string, KernelSide> out;
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kKernel && s.kind != ActivityKind::kMemcpy &&
        s.kind != ActivityKind::kMemset) {
      continue;
    }
    KernelSide& side = out[std::string(trace.Str(s.name))];
    side.count += 1;
    side.total_ns = internal::SatAdd(side.total_ns, s.dur_ns);
  }
  return out;
}

std::vector<KernelDiff> DiffKernels(const Trace& a, const Trace& b) {
  std::map<std::string, std::pair<KernelSide, KernelSide>> merged;
  for (auto& [name, s] : CollectKernels(a)) merged[name].first = s;
  for (auto& [name, s] : CollectKernels(b)) merged[name].second = s;
  std::vector<KernelDiff> out;
  for (auto& [name, pair] : merged) {
    const KernelSide &x = pair.first, &y = pair.second;
    KernelDiff d{name, OpDiff::Change::kUnchanged, x.count, y.count, x.total_ns, y.total_ns};
    if (x.count == 0) {
      d.change = OpDiff::Change::kAdded;
    } else if (y.count == 0) {
      d.change = OpDiff::Change::kRemoved;
    } else if (x.count != y.count || Differs(x.total_ns, y.total_ns)) {
      d.change = OpDiff::Change::kChanged;
    } else {
      continue;
    }
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelDiff& l, const KernelDiff& r) {
    return l.impact_ns() > r.impact_ns();
  });
  return out;
}

}  // namespace

int64_t KernelDiff::impact_ns() const { return std::llabs(total_ns_b - total_ns_a); }

int64_t OpDiff::impact_ns() const {
  if (device_ns_a != 0 || device_ns_b != 0) return std::llabs(device_ns_b - device_ns_a);
  return std::llabs(cpu_ns_b - cpu_ns_a);
}

std::string_view ToString(OpDiff::Change change) {
  switch (change) {
    case OpDiff::Change::kAdded:
      return "added";
    case OpDiff::Change::kRemoved:
      return "removed";
    case OpDiff::Change::kChanged:
      return "changed";
    case OpDiff::Change::kUnchanged:
      return "unchanged";
  }
  return "unchanged";
}

TraceDiff DiffTraces(const Trace& a, const Trace& b) {
  TraceDiff diff;
  diff.timeline_a = ComputeDeviceTimeline(a);
  diff.timeline_b = ComputeDeviceTimeline(b);
  std::map<std::string, Side> side_a = Collect(a), side_b = Collect(b);
  std::map<std::string, std::pair<Side, Side>> merged;
  for (auto& [name, s] : side_a) merged[name].first = s;
  for (auto& [name, s] : side_b) merged[name].second = s;
  for (auto& [name, pair] : merged) {
    const Side& x = pair.first;
    const Side& y = pair.second;
    OpDiff d;
    d.name = name;
    d.calls_a = x.calls;
    d.calls_b = y.calls;
    d.cpu_ns_a = x.cpu_ns;
    d.cpu_ns_b = y.cpu_ns;
    d.device_ns_a = x.device_ns;
    d.device_ns_b = y.device_ns;
    d.device_total_ns_a = x.device_total_ns;
    d.device_total_ns_b = y.device_total_ns;
    d.executions_a = x.executions;
    d.executions_b = y.executions;
    if (x.calls == 0 && y.calls > 0) {
      d.change = OpDiff::Change::kAdded;
    } else if (y.calls == 0 && x.calls > 0) {
      d.change = OpDiff::Change::kRemoved;
    } else if (x.calls != y.calls || x.executions != y.executions ||
               Differs(x.device_ns, y.device_ns) || Differs(x.cpu_ns, y.cpu_ns) ||
               Differs(x.device_total_ns, y.device_total_ns)) {
      d.change = OpDiff::Change::kChanged;
    } else {
      continue;
    }
    diff.rows.push_back(std::move(d));
  }
  std::stable_sort(diff.rows.begin(), diff.rows.end(),
                   [](const OpDiff& l, const OpDiff& r) { return l.impact_ns() > r.impact_ns(); });
  diff.kernels = DiffKernels(a, b);
  diff.neuron_device = DiffNeuronDevice(ComputeNeuronDevice(a), ComputeNeuronDevice(b));
  return diff;
}

std::string TraceDiff::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Key("timeline_a");
  w.Raw(timeline_a.ToJson());
  w.Key("timeline_b");
  w.Raw(timeline_b.ToJson());
  w.Key("rows");
  w.BeginArray();
  for (const OpDiff& d : rows) {
    w.BeginObject();
    w.Key("name");
    w.String(d.name);
    w.Key("change");
    w.String(ToString(d.change));
    w.Key("calls_a");
    w.Int(d.calls_a);
    w.Key("calls_b");
    w.Int(d.calls_b);
    w.Key("cpu_ns_a");
    w.Int(d.cpu_ns_a);
    w.Key("cpu_ns_b");
    w.Int(d.cpu_ns_b);
    w.Key("device_ns_a");
    w.Int(d.device_ns_a);
    w.Key("device_ns_b");
    w.Int(d.device_ns_b);
    w.Key("device_total_ns_a");
    w.Int(d.device_total_ns_a);
    w.Key("device_total_ns_b");
    w.Int(d.device_total_ns_b);
    w.Key("executions_a");
    w.Int(d.executions_a);
    w.Key("executions_b");
    w.Int(d.executions_b);
    w.Key("impact_ns");
    w.Int(d.impact_ns());
    w.EndObject();
  }
  w.EndArray();
  w.Key("kernels");
  w.BeginArray();
  for (const KernelDiff& k : kernels) {
    w.BeginObject();
    w.Field("name", k.name);
    w.Field("change", ToString(k.change));
    const std::pair<const char*, int64_t> fields[] = {
        {"count_a", k.count_a},       {"count_b", k.count_b},       {"total_ns_a", k.total_ns_a},
        {"total_ns_b", k.total_ns_b}, {"impact_ns", k.impact_ns()},
    };
    for (const auto& [key, v] : fields) {
      w.Key(key);
      w.Int(v);
    }
    w.EndObject();
  }
  w.EndArray();
  if (neuron_device.present) {
    w.Key("neuron_device");
    w.Raw(neuron_device.ToJson());
  }
  w.EndObject();
  return w.Take();
}

namespace {

// The kernel section of ToText: counts of added/removed/changed names and the top rows.
void AppendKernelDiff(const std::vector<KernelDiff>& kernels, int row_limit, std::string* out) {
  int added = 0, removed = 0, changed = 0;
  for (const KernelDiff& k : kernels) {
    added += k.change == OpDiff::Change::kAdded;
    removed += k.change == OpDiff::Change::kRemoved;
    changed += k.change == OpDiff::Change::kChanged;
  }
  *out += fmt::format("\nKernels (device activity by name): {} added, {} removed, {} changed\n",
                      added, removed, changed);
  if (kernels.empty()) return;
  *out += fmt::format("{:<60}  {:>9}  {:>15}  {:>25}  {:>12}\n", "Kernel", "Change", "Count",
                      "Total", "Impact");
  int shown = 0;
  for (const KernelDiff& k : kernels) {
    if (row_limit >= 0 && shown++ >= row_limit) break;
    const std::string name = k.name.size() > 60 ? k.name.substr(0, 57) + "..." : k.name;
    *out += fmt::format("{:<60}  {:>9}  {:>15}  {:>25}  {:>12}\n", name, ToString(k.change),
                        fmt::format("{} -> {}", k.count_a, k.count_b),
                        FormatNs(k.total_ns_a) + " -> " + FormatNs(k.total_ns_b),
                        FormatNs(k.impact_ns()));
  }
  if (row_limit >= 0 && static_cast<int>(kernels.size()) > row_limit) {
    *out += fmt::format("... {} more kernels (--rows N, or --json for all)\n",
                        kernels.size() - row_limit);
  }
}

}  // namespace

std::string TraceDiff::ToText(int row_limit) const {
  std::string out;
  out += fmt::format("Device busy: {} -> {}   total: {} -> {}   device activities: {} -> {}\n",
                     FormatNs(timeline_a.busy_ns), FormatNs(timeline_b.busy_ns),
                     FormatNs(timeline_a.total_ns), FormatNs(timeline_b.total_ns),
                     timeline_a.activities, timeline_b.activities);
  if (rows.empty()) {
    out += "No op differs (calls equal, host and device time within 5%).\n";
    AppendKernelDiff(kernels, row_limit, &out);
    if (neuron_device.present) neuron_device.AppendText(row_limit, &out);
    return out;
  }
  size_t name_width = 4;
  for (const OpDiff& d : rows)
    name_width = std::max(name_width, std::min<size_t>(d.name.size(), 50));
  const auto line = [&](std::string_view name, std::string_view change, std::string_view calls,
                        std::string_view execs, std::string_view host, std::string_view device,
                        std::string_view total, std::string_view impact) {
    out += fmt::format("{:<{}}  {:>9}  {:>15}  {:>13}  {:>25}  {:>25}  {:>25}  {:>12}\n", name,
                       name_width, change, calls, execs, host, device, total, impact);
  };
  line("Name", "Change", "Calls", "Device execs", "Host time", "Device time (direct)",
       "Device total", "Impact");
  int shown = 0;
  for (const OpDiff& d : rows) {
    if (row_limit >= 0 && shown++ >= row_limit) break;
    const std::string name = d.name.size() > 50 ? d.name.substr(0, 47) + "..." : d.name;
    line(name, ToString(d.change), fmt::format("{} -> {}", d.calls_a, d.calls_b),
         fmt::format("{} -> {}", d.executions_a, d.executions_b),
         FormatNs(d.cpu_ns_a) + " -> " + FormatNs(d.cpu_ns_b),
         FormatNs(d.device_ns_a) + " -> " + FormatNs(d.device_ns_b),
         FormatNs(d.device_total_ns_a) + " -> " + FormatNs(d.device_total_ns_b),
         FormatNs(d.impact_ns()));
  }
  if (row_limit >= 0 && static_cast<int>(rows.size()) > row_limit) {
    out += fmt::format("... {} more rows (--rows N, or --json for all)\n", rows.size() - row_limit);
  }
  AppendKernelDiff(kernels, row_limit, &out);
  if (neuron_device.present) neuron_device.AppendText(row_limit, &out);
  return out;
}

}  // namespace opscope
