// The NeuronCore section as text and JSON (`opscope report`), and its rows in `opscope diff`:
// engines and opcodes of two traces matched by EngineKey / OpcodeKey.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "base/json_writer.h"
#include "opscope/neuron_device.h"

namespace opscope {
namespace {

std::string Ns(int64_t ns) {
  const double v = static_cast<double>(ns), a = std::abs(v);
  if (a >= 1e9) return fmt::format("{:.3f}s", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f}ms", v / 1e6);
  return fmt::format("{:.3f}us", v / 1e3);
}

std::string Cut(std::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return std::string(s.substr(0, width - 3)) + "...";
}

void WriteDma(const NeuronDmaStats& d, JsonWriter* w) {
  w->BeginObject();
  w->Field("packets", d.packets);
  w->Field("bytes", d.bytes);
  w->Field("busy_ns", d.busy_ns);
  w->Field("gbps", d.gbps());
  w->Field("queues", d.queues);
  if (d.bandwidth_gbps > 0) {
    w->Field("bandwidth_gbps", d.bandwidth_gbps);
    w->Field("bandwidth_fraction", d.gbps() / d.bandwidth_gbps);
  }
  w->EndObject();
}

std::string Figure(double v) {
  return v == static_cast<double>(static_cast<int64_t>(v))
             ? fmt::format("{}", static_cast<int64_t>(v))
             : fmt::format("{:.1f}", v);
}

}  // namespace

std::string NeuronDeviceReport::ToJson(int rows) const {
  JsonWriter w;
  w.BeginObject();
  w.Field("span_ns", span_ns);
  w.Key("engines");
  w.BeginArray();
  for (const NeuronEngineStats& e : engines) {
    w.BeginObject();
    w.Field("engine", e.engine);
    w.Field("device", e.device);
    w.Field("instructions", e.instructions);
    w.Field("busy_ns", e.busy_ns);
    w.Field("total_ns", e.total_ns);
    w.Field("span_ns", e.span_ns);
    w.Field("utilization", e.utilization());
    w.EndObject();
  }
  w.EndArray();
  w.Key("opcodes");
  w.BeginArray();
  int shown = 0;
  for (const NeuronOpcodeStats& o : opcodes) {
    if (rows >= 0 && shown++ >= rows) break;
    w.BeginObject();
    w.Field("opcode", o.opcode);
    w.Field("engine", o.engine);
    w.Field("count", o.count);
    w.Field("total_ns", o.total_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("dma");
  WriteDma(dma, &w);
  if (has_hbm) {
    w.Key("hbm");
    w.BeginObject();
    w.Field("peak_bytes_in_use", hbm_peak_bytes);
    w.Field("peak_ts_ns", hbm_peak_ts_ns);
    if (hbm_bandwidth_gbps > 0) w.Field("bandwidth_gbps", hbm_bandwidth_gbps);
    w.EndObject();
  }
  w.Key("summary_checks");
  w.BeginArray();
  for (const NeuronSummaryCheck& c : checks) {
    w.BeginObject();
    w.Field("device", c.device);
    w.Field("figure", c.figure);
    w.Field("profile", c.profile);
    w.Field("computed", c.computed);
    w.Field("agree", c.agree);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

void NeuronDeviceReport::AppendText(int rows, std::string* out) const {
  *out += fmt::format("NeuronCore engines (execution span {}; busy = union of instruction times)\n",
                      Ns(span_ns));
  *out += fmt::format("  {:<20}  {:<24}  {:>12}  {:>12}  {:>12}  {:>8}\n", "Device", "Engine",
                      "Instructions", "Busy", "Sum", "Util");
  for (const NeuronEngineStats& e : engines) {
    *out += fmt::format("  {:<20}  {:<24}  {:>12}  {:>12}  {:>12}  {:>7.2f}%\n", Cut(e.device, 20),
                        Cut(e.engine, 24), e.instructions, Ns(e.busy_ns), Ns(e.total_ns),
                        100.0 * e.utilization());
  }
  *out += fmt::format("Top opcodes by time ({} in all)\n", opcodes.size());
  *out += fmt::format("  {:>12}  {:>9}  {:<24}  {}\n", "Total", "Count", "Engine", "Opcode");
  int shown = 0;
  for (const NeuronOpcodeStats& o : opcodes) {
    if (rows >= 0 && shown++ >= rows) break;
    *out += fmt::format("  {:>12}  {:>9}  {:<24}  {}\n", Ns(o.total_ns), o.count, Cut(o.engine, 24),
                        Cut(o.opcode, 60));
  }
  *out += fmt::format("DMA: {} packets on {} queues, {} bytes, busy {}, {:.2f} GB/s", dma.packets,
                      dma.queues, dma.bytes, Ns(dma.busy_ns), dma.gbps());
  if (dma.bandwidth_gbps > 0) {
    *out += fmt::format(" ({:.1f}% of Metadata.dma_ddr_bandwidth {:.1f} GB/s)",
                        100.0 * dma.gbps() / dma.bandwidth_gbps, dma.bandwidth_gbps);
  }
  *out += "\n";
  if (has_hbm) {
    *out += fmt::format("HBM bytes in use at the peak: {} at {}\n", Figure(hbm_peak_bytes),
                        Ns(hbm_peak_ts_ns));
  }
  if (checks.empty()) return;
  int agree = 0;
  for (const NeuronSummaryCheck& c : checks) agree += c.agree;
  *out += fmt::format(
      "Profile's own Summary / OpcodeSummary: {} of {} figures agree with the slices'{}\n", agree,
      checks.size(), agree == static_cast<int>(checks.size()) ? "" : "; these differ:");
  for (const NeuronSummaryCheck& c : checks) {
    if (c.agree) continue;
    *out += fmt::format("  {} {}: profile {}, slices {}\n", c.device, c.figure, Figure(c.profile),
                        Figure(c.computed));
  }
}

NeuronDeviceDiff DiffNeuronDevice(const NeuronDeviceReport& a, const NeuronDeviceReport& b) {
  NeuronDeviceDiff d;
  d.present = a.present || b.present;
  if (!d.present) return d;
  d.dma_a = a.dma;
  d.dma_b = b.dma;
  std::map<std::string, NeuronDeviceDiffRow> engines, opcodes;
  auto add = [](std::map<std::string, NeuronDeviceDiffRow>* rows, const std::string& key,
                const std::string& name, bool side_b, int64_t count, int64_t ns) {
    NeuronDeviceDiffRow& r = (*rows)[key];
    r.key = key;
    std::string& n = side_b ? r.name_b : r.name_a;
    if (n.find(name) == std::string::npos) n += (n.empty() ? "" : ", ") + name;
    (side_b ? r.count_b : r.count_a) += count;
    (side_b ? r.ns_b : r.ns_a) += ns;
  };
  for (const auto* side : {&a, &b}) {
    const bool is_b = side == &b;
    for (const NeuronEngineStats& e : side->engines) {
      add(&engines, EngineKey(e.engine), e.engine, is_b, e.instructions, e.busy_ns);
    }
    for (const NeuronOpcodeStats& o : side->opcodes) {
      add(&opcodes, EngineKey(o.engine) + "/" + OpcodeKey(o.opcode), o.opcode, is_b, o.count,
          o.total_ns);
    }
  }
  for (auto& [k, r] : engines) d.engines.push_back(std::move(r));
  for (auto& [k, r] : opcodes) d.opcodes.push_back(std::move(r));
  auto by_impact = [](const NeuronDeviceDiffRow& l, const NeuronDeviceDiffRow& r) {
    return std::abs(l.ns_b - l.ns_a) > std::abs(r.ns_b - r.ns_a);
  };
  std::stable_sort(d.opcodes.begin(), d.opcodes.end(), by_impact);
  return d;
}

std::string NeuronDeviceDiff::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  for (const auto& [key, rows] : {std::pair{"engines", &engines}, std::pair{"opcodes", &opcodes}}) {
    w.Key(key);
    w.BeginArray();
    for (const NeuronDeviceDiffRow& r : *rows) {
      w.BeginObject();
      w.Field("key", r.key);
      w.Field("name_a", r.name_a);
      w.Field("name_b", r.name_b);
      w.Field("count_a", r.count_a);
      w.Field("count_b", r.count_b);
      w.Field(std::string_view(rows == &engines ? "busy_ns_a" : "total_ns_a"), r.ns_a);
      w.Field(std::string_view(rows == &engines ? "busy_ns_b" : "total_ns_b"), r.ns_b);
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key("dma_a");
  WriteDma(dma_a, &w);
  w.Key("dma_b");
  WriteDma(dma_b, &w);
  w.EndObject();
  return w.Take();
}

void NeuronDeviceDiff::AppendText(int rows, std::string* out) const {
  *out += "\nNeuronCore engines (matched by engine: TensorE = Tensor/TensorMatrix, ...)\n";
  const auto line = [&](std::string_view name, std::string_view a, std::string_view b,
                        std::string_view count, std::string_view ns) {
    *out += fmt::format("{:<28}  {:<20}  {:<20}  {:>15}  {:>25}\n", name, a, b, count, ns);
  };
  line("Engine", "A names it", "B names it", "Instructions", "Busy");
  for (const NeuronDeviceDiffRow& r : engines) {
    line(Cut(r.key, 28), Cut(r.name_a, 20), Cut(r.name_b, 20),
         fmt::format("{} -> {}", r.count_a, r.count_b), Ns(r.ns_a) + " -> " + Ns(r.ns_b));
  }
  *out += "NeuronCore opcodes (engine/opcode, any case; by impact)\n";
  line("Opcode", "A names it", "B names it", "Count", "Total");
  int shown = 0;
  for (const NeuronDeviceDiffRow& r : opcodes) {
    if (rows >= 0 && shown++ >= rows) break;
    line(Cut(r.key, 28), Cut(r.name_a, 20), Cut(r.name_b, 20),
         fmt::format("{} -> {}", r.count_a, r.count_b), Ns(r.ns_a) + " -> " + Ns(r.ns_b));
  }
  *out +=
      fmt::format("DMA: {} -> {} packets, {} -> {} bytes, busy {} -> {}, {:.2f} -> {:.2f} GB/s\n",
                  dma_a.packets, dma_b.packets, dma_a.bytes, dma_b.bytes, Ns(dma_a.busy_ns),
                  Ns(dma_b.busy_ns), dma_a.gbps(), dma_b.gbps());
}

}  // namespace opscope
