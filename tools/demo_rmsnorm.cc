// The RMSNorm case study: naive vs fused (and any variant added to the list) under the profiler.
#include "tools/demo_rmsnorm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "opscope/activity.h"
#include "opscope/analysis.h"
#include "opscope/device.h"
#include "opscope/export.h"
#include "opscope/import.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"
#include "tools/demo_memory.h"

namespace opscope::tools {
namespace {

std::string Bytes(double b) {
  if (b <= 0) return "-";
  if (b >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

// Thousands separators as the reference story writes its figures ("2,355.0").
std::string Us(double us) {
  std::string s = fmt::format("{:.1f}", us);
  size_t dot = s.find('.');
  for (int i = int(dot) - 3; i > (s[0] == '-' ? 1 : 0); i -= 3) s.insert(size_t(i), ",");
  return s;
}

void Measure(const Profiler& prof, int iters, VariantResult* r) {
  const Trace& t = prof.trace();
  int64_t device_ns = 0, executions = 0;
  double bytes = 0;
  for (const Slice& s : t.slices()) {
    if (s.kind != ActivityKind::kKernel) continue;
    device_ns += s.dur_ns;
    ++executions;
    if (auto b = t.FindArg(s.args, "dma_bytes")) bytes += std::atof(b->c_str());
  }
  for (const auto& [reason, n] : t.metadata().dropped) {
    if (reason == "in_flight_at_stop") r->in_flight_at_stop = n;
  }
  // key_averages lists device executions as rows of their own (as PyTorch lists kernels); the
  // share is over host ops.
  std::set<std::string, std::less<>> device_keys;
  for (const Slice& s : t.slices()) {
    if (IsDeviceActivity(s.kind)) device_keys.emplace(t.Str(s.name));
  }
  // Host self CPU is the host's work: the synchronize's wait (nrta_is_completed, recorded for the
  // critical path) is the device's time, not the host's.
  int64_t self_cpu = 0, self_device = 0;
  for (const KeyAverage& row : r->averages.rows()) {
    if (device_keys.contains(row.key) || row.key == "nrta_is_completed") continue;
    self_cpu += row.self_cpu_time_total_ns;
    self_device += row.self_device_time_total_ns;
  }
  for (const KeyAverage& row : r->averages.rows()) {
    if (device_keys.contains(row.key)) continue;
    if (row.self_device_time_total_ns > 0 && self_device > 0) {
      r->device_share.emplace_back(row.key, double(row.self_device_time_total_ns) / self_device);
    }
  }
  std::sort(r->device_share.begin(), r->device_share.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  r->device_us_per_call = device_ns / 1e3 / iters;
  r->device_executions_per_call = double(executions) / iters;
  r->host_self_cpu_us_per_call = self_cpu / 1e3 / iters;
  r->bytes_per_call = bytes / iters;
}

// The demo device's memory per call from the recorded "[memory]" events, read back as a user
// reads the exported trace: Kineto JSON -> opscope's importer -> the memory timeline.
void MeasureMemory(const Profiler& prof, const Device& device, int iters, VariantResult* r) {
  Trace imported;
  const Status st = ImportTraceFromMemory(ChromeTraceJson(prof.trace(), r->name), &imported);
  if (!st.ok()) {
    throw std::runtime_error("reading back the recorded trace of " + r->name + ": " + st.message());
  }
  const int64_t type = C10DeviceType(device.type);
  const int64_t id = device.type == DeviceType::kCPU ? -1 : device.index;
  for (const DeviceMemory& d : ComputeMemoryTimeline(imported).devices) {
    if (d.device_type != type || d.device_id != id) continue;
    r->memory_device = d.device;
    r->peak_memory_bytes_per_call = d.peak_allocated - d.allocated_at_start;
    r->allocated_bytes_per_call = double(d.allocated_bytes) / iters;
    r->allocations_per_call = double(d.allocations) / iters;
  }
}

// Per variant side by side: the peak a call holds above what it started with and what it
// allocates, with the difference to the first variant's peak.
std::string MemoryComparison(const DemoReport& report) {
  const VariantResult& base = report.variants.front();
  std::string out = fmt::format(
      "\n== {} memory per call (profile_memory: [memory] events read back from the trace) ==\n",
      base.memory_device);
  const std::string vs = fmt::format("peak - {}", base.name);
  out += fmt::format("{:<12}{:>16}{:>16}{:>14}{:>14}\n", "variant", "peak allocated", vs,
                     "allocated", "allocations");
  for (const VariantResult& r : report.variants) {
    const int64_t diff = r.peak_memory_bytes_per_call - base.peak_memory_bytes_per_call;
    out += fmt::format(
        "{:<12}{:>16}{:>16}{:>14}{:>14.1f}\n", r.name, Bytes(double(r.peak_memory_bytes_per_call)),
        diff == 0 ? std::string("0") : (diff < 0 ? "-" : "+") + Bytes(std::abs(double(diff))),
        Bytes(r.allocated_bytes_per_call), r.allocations_per_call);
  }
  out +=
      "(peak allocated: the most a call holds above what was allocated when it began; the "
      "intermediates a variant keeps alive show here)\n";
  return out;
}

std::string MemoryJson(const VariantResult& r) {
  return fmt::format(
      "{{\"device\": {}, \"peak_bytes_per_call\": {}, \"allocated_bytes_per_call\": {:.0f}, "
      "\"allocations_per_call\": {:.3f}}}",
      JsonQuote(r.memory_device), r.peak_memory_bytes_per_call, r.allocated_bytes_per_call,
      r.allocations_per_call);
}

// Exports one variant's trace; on failure the error says which traces were written before and
// which were not (the demo then stops, so none of them is kept in memory).
void ExportTrace(const Profiler& prof, const std::string& path, const DemoReport& report,
                 size_t num_variants) {
  try {
    prof.export_chrome_trace(path);
  } catch (const ProfilerError& e) {
    std::string written;
    for (const VariantResult& done : report.variants) {
      written += (written.empty() ? "" : ", ") + done.trace_path;
    }
    const size_t missing = num_variants - report.variants.size();
    throw std::runtime_error(fmt::format(
        "{}.\nTraces written before: {}. Not written: this one{}.", e.what(),
        written.empty() ? "none" : written,
        missing > 1 ? fmt::format(" and the {} variant(s) after it", missing - 1) : ""));
  }
}

}  // namespace

std::vector<DemoVariant> RmsNormVariants() {
  return {
      {"naive", "x*x, mean, +eps, rsqrt, x*r, *w: six ATen ops, each its own device execution",
       [](const Tensor& x, const Tensor& w, double eps) {
         Tensor r = rsqrt(mean(x * x, {-1}, /*keepdim=*/true) + eps);
         return x * r * w;
       }},
      {"fused", "rms_norm(x, [hidden], w, eps): one op, aten::_fused_rms_norm, one execution",
       [](const Tensor& x, const Tensor& w, double eps) {
         return rms_norm(x, {x.size(-1)}, w, eps);
       }},
  };
}

namespace {

// The variant's trace file in the run directory, its folder created.
std::string VariantTracePath(const std::string& run_dir, const std::string& variant) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir + "/" + variant, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("cannot create trace directory '{}/{}': {}", run_dir, variant, ec.message()));
  }
  return run_dir + "/" + variant + "/trace.json";
}

// Checks the options and registers the backends; returns the device the demo runs on.
Device DemoDevice(const DemoOptions& options) {
  if (options.rows < 1 || options.hidden < 1) {
    throw std::runtime_error(fmt::format(
        "--shape must be two positive sizes ROWS,HIDDEN, got {},{}", options.rows, options.hidden));
  }
  if (options.iters < 1 || options.iters > kMaxDemoIters) {
    throw std::runtime_error(fmt::format(
        "--iters must be 1 to {} (each profiled iteration keeps its trace events), got {}",
        kMaxDemoIters, options.iters));
  }
  CheckDemoFits(options.rows, options.hidden);
  RegisterCpuBackend();
  Device device(options.device);
  if (device.type == DeviceType::kPrivateUse1) RegisterNeuronBackend();
  if (device.type == DeviceType::kMeta) {
    throw std::runtime_error("opscope demo: the meta device computes nothing; use neuron or cpu");
  }
  if (device.type == DeviceType::kPrivateUse1 &&
      device.index >= GetBackend(device.type).device_count()) {
    throw std::runtime_error(fmt::format("device {} does not exist: the model has {} NeuronCores",
                                         device.str(), GetBackend(device.type).device_count()));
  }
  return device;
}

}  // namespace

DemoReport RunRmsNormDemo(const DemoOptions& options, const std::vector<DemoVariant>& variants) {
  const Device device = DemoDevice(options);
  const bool neuron = device.type == DeviceType::kPrivateUse1;

  DemoReport report;
  report.options = options;
  report.device = device.str();
  if (neuron) report.model = neuron::DefaultDeviceConfig().preset();
  const std::string run_dir = options.out_dir.empty() ? "" : ProfileRunDirectory(options.out_dir);

  const int64_t x_bytes = options.rows * options.hidden * int64_t{4};  // fits: ParseShape
  const Tensor x_cpu = Allocating("x on the host", x_bytes, [&] {
    return randn({options.rows, options.hidden}, 0);
  });
  const Tensor w_cpu = randn({options.hidden}, /*seed=*/1);
  const std::vector<float> ref = Allocating("the CPU reference output", 2 * x_bytes, [&] {
    return rms_norm(x_cpu, {options.hidden}, w_cpu, options.eps).ToVector();
  });
  const Tensor x = Allocating("x on " + device.str(), x_bytes, [&] { return x_cpu.to(device); });
  const Tensor w = w_cpu.to(device);

  for (const DemoVariant& v : variants) {
    auto run = [&] {
      return Allocating(v.name + "'s output and intermediates", 2 * x_bytes,
                        [&] { return v.run(x, w, options.eps); });
    };
    for (int i = 0; i < options.warmup; ++i) run();
    synchronize(device);

    ProfilerOptions po;
    po.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
    po.record_shapes = true;
    po.profile_memory = true;
    po.device.correlate_device_time = true;
    po.device.flush_device_on_stop = options.sync || options.flush_on_stop;
    Profiler prof(po);
    Tensor y;
    prof.Start();
    const int64_t t0 = NowNs();
    for (int i = 0; i < options.iters; ++i) {
      y = Tensor();  // every call starts from the same allocation (see RunRmsNormDemo)
      y = run();
      if (options.sync) synchronize(device);  // torch.neuron.synchronize() in the loop
    }
    const int64_t t1 = NowNs();
    prof.Stop();
    synchronize(device);  // let the device finish before the next variant

    VariantResult r;
    r.name = v.name;
    r.description = v.description;
    r.averages = prof.key_averages();
    r.sort_key = neuron ? "self_privateuse1_time_total" : "self_cpu_time_total";
    r.wall_us_per_call = (t1 - t0) / 1e3 / options.iters;
    Measure(prof, options.iters, &r);
    MeasureMemory(prof, device, options.iters, &r);
    const std::vector<float> got =
        Allocating(v.name + "'s output read back", x_bytes, [&] { return y.ToVector(); });
    for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
      r.max_abs_error = std::max(r.max_abs_error, double(std::fabs(got[i] - ref[i])));
    }
    if (!run_dir.empty()) {
      r.trace_path = VariantTracePath(run_dir, v.name);
      ExportTrace(prof, r.trace_path, report, variants.size());
    }
    report.variants.push_back(std::move(r));
  }
  return report;
}

std::string InFlightWarning(const VariantResult& r) {
  if (r.in_flight_at_stop == 0) return "";
  return fmt::format(
      "warning: [{}] the profiler stopped while {} device execution{} still in flight, so "
      "their device time is missing from the table (the NEURON columns are empty or short).\n"
      "  Fix: call opscope::neuron::synchronize() (torch.neuron.synchronize()) inside the profiled "
      "region before the profiler stops, or set DeviceConfig::flush_device_on_stop = true so the "
      "profiler waits for the device at stop (demo: --no-sync --flush-on-stop).\n",
      r.name, r.in_flight_at_stop, r.in_flight_at_stop == 1 ? " was" : "s were");
}

std::string FormatDemoText(const DemoReport& report) {
  const DemoOptions& o = report.options;
  std::string out = fmt::format(
      "opscope demo rmsnorm: device {}{}, x [{}, {}] f32, {} iteration{} per variant after {} "
      "warm-up, {}\n",
      report.device,
      report.model.empty() ? "" : " (simulated NeuronCore, preset " + report.model + ")", o.rows,
      o.hidden, o.iters, o.iters == 1 ? "" : "s", o.warmup,
      o.sync ? "synchronize after each iteration"
             : (o.flush_on_stop ? "no synchronize (the profiler flushes the device at stop)"
                                : "no synchronize (--no-sync)"));
  for (const VariantResult& r : report.variants) {
    out += fmt::format("\n== {}: {} ==\n", r.name, r.description);
    out += r.averages.Table(r.sort_key, o.row_limit);
    if (report.model.empty()) {
      out += fmt::format("{}: {} us wall per call, host self CPU {} us per call", r.name,
                         Us(r.wall_us_per_call), Us(r.host_self_cpu_us_per_call));
    } else {
      out += fmt::format(
          "{}: {} us device time per call in {:.1f} device execution{}, host self "
          "CPU {} us per call, {} moved per call",
          r.name, Us(r.device_us_per_call), r.device_executions_per_call,
          r.device_executions_per_call == 1 ? "" : "s", Us(r.host_self_cpu_us_per_call),
          Bytes(r.bytes_per_call));
      if (!r.device_share.empty()) {
        out += "; device time share:";
        for (const auto& [key, share] : r.device_share) {
          out += fmt::format(" {} {:.1f}%", key, 100 * share);
        }
      }
    }
    out += fmt::format("; max |y - cpu reference| = {:.2g}\n", r.max_abs_error);
    if (!r.memory_device.empty()) {
      out += fmt::format(
          "{}: {} memory per call: peak {} allocated above the call's start, {} allocated in "
          "{:.1f} allocations\n",
          r.name, r.memory_device, Bytes(double(r.peak_memory_bytes_per_call)),
          Bytes(r.allocated_bytes_per_call), r.allocations_per_call);
    }
    if (!r.trace_path.empty()) out += "trace: " + r.trace_path + "\n";
    out += InFlightWarning(r);
  }
  if (report.variants.size() > 1) {
    const VariantResult& base = report.variants.front();
    const bool dev = !report.model.empty();
    out += "\n== comparison (per call) ==\n";
    const std::string vs = fmt::format("vs {}", base.name);
    if (dev) {
      out += fmt::format("{:<12}{:>14}{:>12}{:>12}{:>16}{:>14}{:>14}\n", "variant", "device us", vs,
                         "executions", "host self us", "wall us", "bytes moved");
    } else {
      out += fmt::format("{:<12}{:>14}{:>12}{:>16}\n", "variant", "wall us", vs, "host self us");
    }
    for (const VariantResult& r : report.variants) {
      const double t = dev ? r.device_us_per_call : r.wall_us_per_call;
      const double b = dev ? base.device_us_per_call : base.wall_us_per_call;
      const std::string ratio = t > 0 ? fmt::format("{:.2f}x", b / t) : "-";
      if (dev) {
        out += fmt::format("{:<12}{:>14}{:>12}{:>12.1f}{:>16}{:>14}{:>14}\n", r.name, Us(t), ratio,
                           r.device_executions_per_call, Us(r.host_self_cpu_us_per_call),
                           Us(r.wall_us_per_call), Bytes(r.bytes_per_call));
      } else {
        out += fmt::format("{:<12}{:>14}{:>12}{:>16}\n", r.name, Us(t), ratio,
                           Us(r.host_self_cpu_us_per_call));
      }
    }
    out += fmt::format("(\"{}\" = {}'s {} time / this variant's)\n", vs, base.name,
                       dev ? "device" : "wall");
    if (!base.memory_device.empty()) out += MemoryComparison(report);
  }
  return out;
}

std::string FormatDemoJson(const DemoReport& report) {
  const DemoOptions& o = report.options;
  std::string out = fmt::format(
      "{{\"demo\": \"rmsnorm\", \"device\": {}, \"model\": {}, \"shape\": [{}, {}], \"iters\": {}, "
      "\"warmup\": {}, \"sync\": {}, \"flush_on_stop\": {}, \"variants\": [",
      JsonQuote(report.device), JsonQuote(report.model), o.rows, o.hidden, o.iters, o.warmup,
      o.sync, o.flush_on_stop);
  for (size_t i = 0; i < report.variants.size(); ++i) {
    const VariantResult& r = report.variants[i];
    std::string shares;
    for (const auto& [key, share] : r.device_share) {
      shares += fmt::format("{}{}: {:.6f}", shares.empty() ? "" : ", ", JsonQuote(key), share);
    }
    out += fmt::format(
        "{}{{\"name\": {}, \"description\": {}, \"device_us_per_call\": {:.3f}, "
        "\"device_executions_per_call\": {:.3f}, \"host_self_cpu_us_per_call\": {:.3f}, "
        "\"wall_us_per_call\": {:.3f}, \"bytes_per_call\": {:.0f}, \"device_share\": {{{}}}, "
        "\"in_flight_at_stop\": {}, \"max_abs_error\": {:.3g}, \"trace\": {}, \"sort_by\": {}, "
        "\"memory\": {}, \"key_averages\": {}}}",
        i == 0 ? "" : ", ", JsonQuote(r.name), JsonQuote(r.description), r.device_us_per_call,
        r.device_executions_per_call, r.host_self_cpu_us_per_call, r.wall_us_per_call,
        r.bytes_per_call, shares, r.in_flight_at_stop, r.max_abs_error, JsonQuote(r.trace_path),
        JsonQuote(r.sort_key), MemoryJson(r), r.averages.ToJson(r.sort_key));
  }
  // The comparison section of the text output: per variant, the time the table compares
  // (device time on a device model, wall time on cpu) and its ratio to the first variant.
  out += "], \"comparison\": [";
  const bool dev = !report.model.empty();
  for (size_t i = 0; i < report.variants.size(); ++i) {
    const VariantResult& r = report.variants[i];
    const VariantResult& base = report.variants.front();
    const double t = dev ? r.device_us_per_call : r.wall_us_per_call;
    const double b = dev ? base.device_us_per_call : base.wall_us_per_call;
    out += fmt::format(
        "{}{{\"variant\": {}, \"time\": {}, \"us_per_call\": {:.3f}, \"vs_{}\": {:.4f}, "
        "\"device_executions_per_call\": {:.3f}, \"host_self_cpu_us_per_call\": {:.3f}, "
        "\"bytes_per_call\": {:.0f}}}",
        i == 0 ? "" : ", ", JsonQuote(r.name), dev ? "\"device\"" : "\"wall\"", t, base.name,
        t > 0 ? b / t : 0.0, r.device_executions_per_call, r.host_self_cpu_us_per_call,
        r.bytes_per_call);
  }
  return out + "]}";
}

}  // namespace opscope::tools
