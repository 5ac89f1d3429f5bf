// KeyAverages::Table and ToJson: profiler_util._build_table, character for character.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "base/json_escape.h"
#include "opscope/key_averages.h"

namespace opscope {
namespace {

using internal::Utf8Length;
using internal::Utf8Prefix;

// _format_memory: bytes as Gb / Mb / Kb (1024-based, two decimals) or "N b".
std::string FormatMemory(int64_t bytes) {
  constexpr double kKb = 1024.0, kMb = 1024.0 * kKb, kGb = 1024.0 * kMb;
  const double v = static_cast<double>(bytes), mag = std::abs(v);
  char buf[64];
  if (mag >= kGb) {
    std::snprintf(buf, sizeof(buf), "%.2f Gb", v / kGb);
  } else if (mag >= kMb) {
    std::snprintf(buf, sizeof(buf), "%.2f Mb", v / kMb);
  } else if (mag >= kKb) {
    std::snprintf(buf, sizeof(buf), "%.2f Kb", v / kKb);
  } else {
    return std::to_string(bytes) + " b";
  }
  return buf;
}

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// _format_time: microseconds as s / ms / us with three decimals.
std::string FormatTime(double time_us) {
  if (time_us >= 1000.0 * 1000.0) return Printf("%.3fs", time_us / (1000.0 * 1000.0));
  if (time_us >= 1000.0) return Printf("%.3fms", time_us / 1000.0);
  return Printf("%.3fus", time_us);
}

// _format_time_share.
std::string FormatShare(double time_us, double total_us) {
  if (total_us == 0) return "NaN";
  return Printf("%.2f%%", time_us * 100.0 / total_us);
}

double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
double Avg(int64_t total_ns, int64_t count) {
  return count == 0 ? 0.0 : Us(total_ns) / static_cast<double>(count);
}

// A sortable attribute of FunctionEventAvg: numbers, or the key text.
struct SortKey {
  std::function<double(const KeyAverage&)> number;
  bool by_text = false;
};

std::optional<SortKey> LookupSortKey(std::string attr) {
  for (std::string_view dev : {"cuda", "xpu", "privateuse1"}) {
    for (size_t pos; (pos = attr.find(dev)) != std::string::npos;)
      attr.replace(pos, dev.size(), "device");
  }
  const auto zero = [](const KeyAverage&) { return 0.0; };
  if (attr == "self_cpu_time_total")
    return SortKey{[](const KeyAverage& r) { return Us(r.self_cpu_time_total_ns); }};
  if (attr == "cpu_time_total")
    return SortKey{[](const KeyAverage& r) { return Us(r.cpu_time_total_ns); }};
  if (attr == "self_device_time_total")
    return SortKey{[](const KeyAverage& r) { return Us(r.self_device_time_total_ns); }};
  if (attr == "device_time_total")
    return SortKey{[](const KeyAverage& r) { return Us(r.device_time_total_ns); }};
  if (attr == "cpu_time")
    return SortKey{[](const KeyAverage& r) { return Avg(r.cpu_time_total_ns, r.count); }};
  if (attr == "device_time")
    return SortKey{[](const KeyAverage& r) { return Avg(r.device_time_total_ns, r.count); }};
  if (attr == "count")
    return SortKey{[](const KeyAverage& r) { return static_cast<double>(r.count); }};
  if (attr == "cpu_memory_usage")
    return SortKey{[](const KeyAverage& r) { return static_cast<double>(r.cpu_memory_usage); }};
  if (attr == "self_cpu_memory_usage") {
    return SortKey{
        [](const KeyAverage& r) { return static_cast<double>(r.self_cpu_memory_usage); }};
  }
  if (attr == "device_memory_usage")
    return SortKey{[](const KeyAverage& r) { return static_cast<double>(r.device_memory_usage); }};
  if (attr == "self_device_memory_usage") {
    return SortKey{
        [](const KeyAverage& r) { return static_cast<double>(r.self_device_memory_usage); }};
  }
  if (attr == "flops")
    return SortKey{[](const KeyAverage& r) { return static_cast<double>(r.flops); }};
  // node_id is -1 for every row (no RPC), so order is unchanged.
  if (attr == "node_id") return SortKey{zero};
  if (attr == "key") return SortKey{nullptr, true};
  return std::nullopt;
}

constexpr const char* kAcceptedSortKeys =
    "self_cpu_time_total, cpu_time_total, cpu_time, self_device_time_total, device_time_total, "
    "device_time (each device key also spelled with cuda, xpu or privateuse1, e.g. "
    "self_privateuse1_time_total, self_cuda_time_total), count, key, cpu_memory_usage, "
    "self_cpu_memory_usage, device_memory_usage, self_device_memory_usage, flops, node_id";

// The rows in table order: sorted descending (Python's stable sort with reverse=True keeps the
// original order among equal keys), then limited.
std::vector<const KeyAverage*> SortedRows(const std::vector<KeyAverage>& rows,
                                          std::string_view sort_by) {
  std::vector<const KeyAverage*> out;
  for (const KeyAverage& r : rows) out.push_back(&r);
  if (sort_by.empty()) return out;
  std::optional<SortKey> key = LookupSortKey(std::string(sort_by));
  if (!key) {
    throw BadSortKey("unknown sort key '" + std::string(sort_by) +
                     "'; accepted keys: " + kAcceptedSortKeys);
  }
  if (key->by_text) {
    std::stable_sort(out.begin(), out.end(),
                     [](const KeyAverage* a, const KeyAverage* b) { return a->key > b->key; });
  } else {
    std::stable_sort(out.begin(), out.end(), [&](const KeyAverage* a, const KeyAverage* b) {
      return key->number(*a) > key->number(*b);
    });
  }
  return out;
}

// One row of `values` right-aligned in `widths`, each followed by two spaces (Python's
// "{: >W}" pads but never truncates).
std::string FormatRow(const std::vector<std::string>& values, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < values.size(); ++i) {
    size_t len = Utf8Length(values[i]);
    if (len < widths[i]) line.append(widths[i] - len, ' ');
    line += values[i];
    line += "  ";
  }
  return line;
}

constexpr size_t kMaxName = 55, kMaxShapes = 80, kColumn = 12;

// The columns of one table: which appear, their headers and widths, and the FLOPs unit.
struct TableColumns {
  std::string device;  // the device's name in headers ("CUDA" when unnamed)
  bool has_device = false, has_shapes = false, has_memory = false, has_device_memory = false;
  size_t shapes_width = 0;
  int64_t min_flops = 0;  // the smallest positive row's FLOPs; 0: no FLOPs column
  double flops_scale = 1.0;
  std::vector<std::string> headers;
  std::vector<size_t> widths;
};

// with_flops: "Total <unit>FLOPs" scaled by the smallest positive row (auto_scale_flops).
void AddFlopsColumn(const KeyAverages& ka, TableColumns* c) {
  for (const KeyAverage& r : ka.rows()) {
    if (ka.has_flops() && r.flops > 0 && (c->min_flops == 0 || r.flops < c->min_flops)) {
      c->min_flops = r.flops;
    }
  }
  if (c->min_flops <= 0) return;
  static constexpr const char* kUnits[] = {"FLOPs",  "KFLOPs", "MFLOPs",
                                           "GFLOPs", "TFLOPs", "PFLOPs"};
  const double level = std::max(0.0, std::min(std::log10(static_cast<double>(c->min_flops)) / 3,
                                              static_cast<double>(std::size(kUnits) - 1)));
  c->flops_scale = std::pow(10.0, std::floor(level) * -3.0);
  c->headers.push_back(std::string("Total ") + kUnits[static_cast<int>(level)]);
  c->widths.push_back(kColumn);
}

// The columns _build_table shows for these rows, in its order.
TableColumns ChooseColumns(const KeyAverages& ka) {
  TableColumns c;
  c.has_device = ka.has_device_time();
  c.device = ka.device_name().empty() ? "CUDA" : ka.device_name();
  size_t name_width = 0;
  for (const KeyAverage& r : ka.rows()) {
    if (ka.grouped_by_input_shape()) {
      c.has_shapes |= !r.input_shapes.empty() && r.input_shapes != "[]";
    }
    name_width = std::max(name_width, Utf8Length(r.key) + 4);
    c.shapes_width =
        std::max(c.shapes_width, Utf8Length(r.input_shapes.empty() ? "[]" : r.input_shapes) + 4);
    // profile_memory: host columns always, device columns only when some row has self device
    // memory > 0 (has_cuda_mem).
    c.has_device_memory |= r.self_device_memory_usage > 0;
  }
  c.shapes_width = std::min(c.shapes_width, kMaxShapes);
  c.has_memory = ka.has_memory();
  c.has_device_memory &= c.has_memory;
  c.headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (c.has_device) {
    c.headers.insert(c.headers.end(), {"Self " + c.device, "Self " + c.device + " %",
                                       c.device + " total", c.device + " time avg"});
  }
  if (c.has_memory) c.headers.insert(c.headers.end(), {"CPU Mem", "Self CPU Mem"});
  if (c.has_device_memory) {
    c.headers.insert(c.headers.end(), {c.device + " Mem", "Self " + c.device + " Mem"});
  }
  c.headers.push_back("# of Calls");
  c.widths.assign(c.headers.size(), kColumn);
  c.widths[0] = std::min(name_width, kMaxName);
  if (c.has_shapes) {
    c.headers.push_back("Input Shapes");
    c.widths.push_back(c.shapes_width);
  }
  AddFlopsColumn(ka, &c);
  return c;
}

// One row's cells, in the columns' order; shares of the tables' self totals (us).
std::vector<std::string> RowValues(const KeyAverage& r, const TableColumns& c, double sum_self_cpu,
                                   double sum_self_device) {
  std::string name = r.key;
  if (Utf8Length(name) >= kMaxName - 3) name = std::string(Utf8Prefix(name, kMaxName - 3)) + "...";
  std::vector<std::string> values = {
      name,
      FormatShare(Us(r.self_cpu_time_total_ns), sum_self_cpu),
      FormatTime(Us(r.self_cpu_time_total_ns)),
      FormatShare(Us(r.cpu_time_total_ns), sum_self_cpu),
      FormatTime(Us(r.cpu_time_total_ns)),
      FormatTime(Avg(r.cpu_time_total_ns, r.count)),
  };
  if (c.has_device) {
    values.push_back(FormatTime(Us(r.self_device_time_total_ns)));
    values.push_back(FormatShare(Us(r.self_device_time_total_ns), sum_self_device));
    values.push_back(FormatTime(Us(r.device_time_total_ns)));
    values.push_back(FormatTime(Avg(r.device_time_total_ns, r.count)));
  }
  if (c.has_memory) {
    values.push_back(FormatMemory(r.cpu_memory_usage));
    values.push_back(FormatMemory(r.self_cpu_memory_usage));
  }
  if (c.has_device_memory) {
    values.push_back(FormatMemory(r.device_memory_usage));
    values.push_back(FormatMemory(r.self_device_memory_usage));
  }
  values.push_back(std::to_string(r.count));
  if (c.has_shapes) {
    values.push_back(
        std::string(Utf8Prefix(r.input_shapes.empty() ? "[]" : r.input_shapes, c.shapes_width)));
  }
  if (c.min_flops > 0) {
    values.push_back(r.flops <= 0 ? "--"
                                  : Printf("%8.3f", static_cast<double>(r.flops) * c.flops_scale));
  }
  return values;
}

}  // namespace

std::string KeyAverages::Table(std::string_view sort_by, int row_limit) const {
  if (rows_.empty()) return "";
  std::vector<const KeyAverage*> rows = SortedRows(rows_, sort_by);
  const TableColumns columns = ChooseColumns(*this);
  std::string rule;
  for (size_t w : columns.widths) rule += std::string(w, '-') + "  ";

  int64_t sum_self_cpu_ns = 0, sum_self_device_ns = 0;
  for (const KeyAverage& r : rows_) {
    sum_self_cpu_ns += r.self_cpu_time_total_ns;
    if (r.is_device && !r.is_user_annotation) sum_self_device_ns += r.self_device_time_total_ns;
  }
  const double sum_self_cpu = Us(sum_self_cpu_ns), sum_self_device = Us(sum_self_device_ns);

  std::string out;
  auto append = [&out](const std::string& s) {
    out += s;
    out += '\n';
  };
  append(rule);
  append(FormatRow(columns.headers, columns.widths));
  append(rule);
  int shown = 0;
  for (const KeyAverage* r : rows) {
    if (shown == row_limit) break;
    ++shown;
    append(FormatRow(RowValues(*r, columns, sum_self_cpu, sum_self_device), columns.widths));
  }
  append(rule);
  append("Self CPU time total: " + FormatTime(sum_self_cpu));
  if (columns.has_device) {
    append("Self " + columns.device + " time total: " + FormatTime(sum_self_device));
  }
  // opscope's additions, only when something was lost or left unlinked.
  if (dropped_events_ > 0) {
    append("Events dropped while recording: " + std::to_string(dropped_events_));
  }
  if (unmatched_device_activity_ > 0) {
    append("Device activity not linked to any op: " + std::to_string(unmatched_device_activity_));
  }
  return out;
}

std::string KeyAverages::ToJson(std::string_view sort_by, int row_limit) const {
  std::vector<const KeyAverage*> rows = SortedRows(rows_, sort_by);
  int64_t sum_self_cpu_ns = 0, sum_self_device_ns = 0;
  for (const KeyAverage& r : rows_) {
    sum_self_cpu_ns += r.self_cpu_time_total_ns;
    if (r.is_device && !r.is_user_annotation) sum_self_device_ns += r.self_device_time_total_ns;
  }
  auto num = [](double v) { return Printf("%.3f", v); };
  auto pct = [](int64_t part, int64_t total) {
    return total == 0 ? std::string("null")
                      : Printf("%.4f", part * 100.0 / static_cast<double>(total));
  };
  std::string out = "{\"device\": ";
  internal::AppendJsonString(out, device_name_);
  out += ", \"group_by_input_shape\": ";
  out += options_.group_by_input_shape ? "true" : "false";
  out += ", \"self_cpu_time_total_us\": " + num(Us(sum_self_cpu_ns));
  out += ", \"self_device_time_total_us\": " + num(Us(sum_self_device_ns));
  out += ", \"dropped_events\": " + std::to_string(dropped_events_);
  out += ", \"unmatched_device_activity\": " + std::to_string(unmatched_device_activity_);
  out += ", \"profile_memory\": ";
  out += has_memory_ ? "true" : "false";
  out += ", \"rows\": [";
  int shown = 0;
  for (const KeyAverage* r : rows) {
    if (shown == row_limit) break;
    if (shown++ > 0) out += ", ";
    out += "{\"name\": ";
    internal::AppendJsonString(out, r->key);
    if (options_.group_by_input_shape) {
      out += ", \"input_shapes\": ";
      internal::AppendJsonString(out, r->input_shapes);
    }
    out += ", \"is_user_annotation\": ";
    out += r->is_user_annotation ? "true" : "false";
    out += ", \"is_device\": ";
    out += r->is_device ? "true" : "false";
    out += ", \"count\": " + std::to_string(r->count);
    out += ", \"self_cpu_time_total_us\": " + num(Us(r->self_cpu_time_total_ns));
    out += ", \"self_cpu_percent\": " + pct(r->self_cpu_time_total_ns, sum_self_cpu_ns);
    out += ", \"cpu_time_total_us\": " + num(Us(r->cpu_time_total_ns));
    out += ", \"cpu_total_percent\": " + pct(r->cpu_time_total_ns, sum_self_cpu_ns);
    out += ", \"cpu_time_avg_us\": " + num(Avg(r->cpu_time_total_ns, r->count));
    out += ", \"self_device_time_total_us\": " + num(Us(r->self_device_time_total_ns));
    out += ", \"self_device_percent\": " + pct(r->self_device_time_total_ns, sum_self_device_ns);
    out += ", \"device_time_total_us\": " + num(Us(r->device_time_total_ns));
    out += ", \"device_time_avg_us\": " + num(Avg(r->device_time_total_ns, r->count));
    if (has_flops_) out += ", \"flops\": " + std::to_string(r->flops);
    if (has_memory_) {
      out += ", \"cpu_memory_usage\": " + std::to_string(r->cpu_memory_usage);
      out += ", \"self_cpu_memory_usage\": " + std::to_string(r->self_cpu_memory_usage);
      out += ", \"device_memory_usage\": " + std::to_string(r->device_memory_usage);
      out += ", \"self_device_memory_usage\": " + std::to_string(r->self_device_memory_usage);
    }
    out += "}";
  }
  out += "]}";
  return out;
}

}  // namespace opscope
