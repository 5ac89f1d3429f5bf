// Presets, valid ranges and the key=value override format for the Neuron model's parameters.
#include "device/neuron/params.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "base/small_file.h"

namespace opscope::neuron {
namespace {

// One overridable number: its key (the field name), its valid range (inclusive) and whether it
// must be a whole number. The ranges keep every derived quantity finite, every loop bounded and
// every count representable (docs/neuron-model.md lists them with their reasons).
struct Field {
  const char* key;
  double Params::*member;
  double min;
  double max;
  bool integer;
};

constexpr double kMiB = 1024.0 * 1024;

// Every overridable number, in the order of the struct.
constexpr Field kFields[] = {
    {"num_cores", &Params::num_cores, 1, 64, true},
    {"logical_core_size", &Params::logical_core_size, 1, 4, true},
    {"partitions", &Params::partitions, 1, 128, true},
    {"free_tile_bytes", &Params::free_tile_bytes, 64, 65536, true},
    {"sbuf_bytes", &Params::sbuf_bytes, 64 * 1024, 1024 * kMiB, true},
    {"psum_banks", &Params::psum_banks, 1, 64, true},
    {"hbm_gib", &Params::hbm_gib, 1.0 / 1024, 4096, false},
    {"tensor_ghz", &Params::tensor_ghz, 0.01, 100, false},
    {"tensor_mm_min_cycles", &Params::tensor_mm_min_cycles, 0, 1e6, false},
    {"tensor_fp32_factor", &Params::tensor_fp32_factor, 0.01, 1000, false},
    {"tensor_fp8_factor", &Params::tensor_fp8_factor, 0.01, 1000, false},
    {"tensor_transpose_fp32_factor", &Params::tensor_transpose_fp32_factor, 0.01, 1000, false},
    {"vector_ghz", &Params::vector_ghz, 0.01, 100, false},
    {"vector_elems_per_cycle", &Params::vector_elems_per_cycle, 1, 65536, false},
    {"vector_elems_per_cycle_16bit", &Params::vector_elems_per_cycle_16bit, 1, 65536, false},
    {"vector_tt_elems_per_cycle_16bit", &Params::vector_tt_elems_per_cycle_16bit, 1, 65536, false},
    {"vector_overhead_cycles", &Params::vector_overhead_cycles, 0, 1e6, false},
    {"scalar_ghz", &Params::scalar_ghz, 0.01, 100, false},
    {"scalar_elems_per_cycle", &Params::scalar_elems_per_cycle, 1, 65536, false},
    {"scalar_overhead_cycles", &Params::scalar_overhead_cycles, 0, 1e6, false},
    {"gpsimd_ghz", &Params::gpsimd_ghz, 0.01, 100, false},
    {"gpsimd_elems_per_cycle", &Params::gpsimd_elems_per_cycle, 1, 65536, false},
    {"gpsimd_overhead_cycles", &Params::gpsimd_overhead_cycles, 0, 1e6, false},
    {"vector_gpsimd_shared_port", &Params::vector_gpsimd_shared_port, 0, 1, true},
    {"hbm_gbps", &Params::hbm_gbps, 0.1, 100000, false},
    {"dma_queues", &Params::dma_queues, 1, 64, true},
    {"dma_partitions_per_queue", &Params::dma_partitions_per_queue, 1, 128, true},
    {"dma_queue_gbps", &Params::dma_queue_gbps, 0.01, 10000, false},
    {"dma_latency_ns", &Params::dma_latency_ns, 0, 1e7, false},
    {"dma_descriptor_ns", &Params::dma_descriptor_ns, 0, 1e6, false},
    {"dma_inflight", &Params::dma_inflight, 1, 64, true},
    {"program_switch_us", &Params::program_switch_us, 0, 1e6, false},
    {"exec_launch_us", &Params::exec_launch_us, 0, 1e6, false},
    {"exec_complete_us", &Params::exec_complete_us, 0, 1e6, false},
    {"tensor_bind_us", &Params::tensor_bind_us, 0, 1e5, false},
    {"eager_dispatch_us", &Params::eager_dispatch_us, 0, 1e6, false},
    {"first_exec_load_us", &Params::first_exec_load_us, 0, 1e7, false},
    {"max_inflight_executions", &Params::max_inflight_executions, 1, 63, true},
    {"clock_offset_ns", &Params::clock_offset_ns, -1e15, 1e15, false},
    {"clock_drift_ppm", &Params::clock_drift_ppm, -1000, 1000, false},
};

// Keys of earlier versions of the model, with what replaced them.
struct RetiredKey {
  const char* key;
  const char* instead;
};
constexpr RetiredKey kRetired[] = {
    {"exec_fixed_us",
     "program_switch_us, exec_launch_us, exec_complete_us, tensor_bind_us and eager_dispatch_us"},
    {"exec_launch_fraction", "exec_launch_us and exec_complete_us"},
    {"tensor_fp32_tflops", "tensor_ghz, tensor_mm_min_cycles and tensor_fp32_factor"},
    {"tensor_overhead_cycles", "tensor_mm_min_cycles"},
    {"vector_fp32_tflops", "vector_elems_per_cycle"},
    {"scalar_fp32_tflops", "scalar_elems_per_cycle"},
    {"gpsimd_fp32_tflops", "gpsimd_elems_per_cycle"},
    {"dma_setup_ns", "dma_latency_ns (pipelined) and dma_descriptor_ns"},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.12g", v);
  return buf;
}

std::string RangeText(const Field& f) {
  return std::string(f.integer ? "an integer" : "a number") + " in [" + Num(f.min) + ", " +
         Num(f.max) + "]";
}

bool InRange(const Field& f, double v) {
  return std::isfinite(v) && v >= f.min && v <= f.max && (!f.integer || v == std::floor(v));
}

const Field* FindField(std::string_view key) {
  for (const auto& f : kFields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

}  // namespace

Params Preset(std::string_view name) {
  Params p;  // the struct's defaults are the trn1 preset
  if (name == "trn1" || name.empty()) return p;
  if (name == "trn2") {
    p.preset = "trn2";
    p.num_cores = 8;
    p.logical_core_size = 2;
    p.sbuf_bytes = 28.0 * kMiB;
    p.hbm_gib = 24;  // 96 GiB / 4 logical cores
    p.tensor_ghz = 2.4;
    p.tensor_fp8_factor = 0.5;
    p.tensor_transpose_fp32_factor = 2;
    p.vector_ghz = 0.96;
    p.vector_elems_per_cycle = 256;
    p.vector_elems_per_cycle_16bit = 512;
    p.vector_tt_elems_per_cycle_16bit = 256;
    p.scalar_ghz = 1.2;
    p.gpsimd_ghz = 1.2;
    p.vector_gpsimd_shared_port = 0;
    p.hbm_gbps = 360;
    p.dma_queue_gbps = 23;
    p.exec_launch_us = 8.5;
    return p;
  }
  std::string msg = "unknown Neuron preset '" + std::string(name) + "' (known:";
  for (const auto& n : PresetNames()) msg += " " + n;
  throw ParamsError(msg + ")");
}

std::vector<std::string> PresetNames() { return {"trn1", "trn2"}; }

void ValidateParams(const Params& params) {
  for (const auto& f : kFields) {
    const double v = params.*(f.member);
    if (!InRange(f, v)) {
      throw ParamsError("Neuron parameter '" + std::string(f.key) + "' = " + Num(v) +
                        " is out of range: must be " + RangeText(f));
    }
  }
  if (std::fmod(params.num_cores, params.logical_core_size) != 0) {
    throw ParamsError("Neuron parameter 'logical_core_size' = " + Num(params.logical_core_size) +
                      " must divide 'num_cores' = " + Num(params.num_cores));
  }
}

void ApplyOverrides(std::string_view text, std::string_view source, Params* params) {
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    auto where = [&] { return std::string(source) + ":" + std::to_string(line_no) + ": "; };
    if (line.size() > 256) throw ParamsError(where() + "line longer than 256 characters");
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      throw ParamsError(where() + "expected 'key = value', got '" + std::string(line) + "'");
    }
    std::string key(Trim(line.substr(0, eq)));
    std::string value(Trim(line.substr(eq + 1)));
    if (key == "preset") {
      try {
        *params = Preset(value);
      } catch (const ParamsError& e) {
        throw ParamsError(where() + e.what());
      }
      continue;
    }
    const Field* field = FindField(key);
    if (field == nullptr) {
      for (const auto& r : kRetired) {
        if (key == r.key) {
          throw ParamsError(where() + "key '" + key + "' was replaced by " + r.instead +
                            " (see docs/neuron-model.md)");
        }
      }
      throw ParamsError(where() + "unknown key '" + key +
                        "' (see docs/neuron-model.md for the parameters)");
    }
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size()) {
      throw ParamsError(where() + "value of '" + key + "' is not a number: '" + value + "'");
    }
    if (!InRange(*field, v) || errno == ERANGE) {
      throw ParamsError(where() + "'" + key + "' = " + value + " is out of range: must be " +
                        RangeText(*field));
    }
    params->*(field->member) = v;
  }
  if (std::fmod(params->num_cores, params->logical_core_size) != 0) {
    throw ParamsError(std::string(source) +
                      ": 'logical_core_size' = " + Num(params->logical_core_size) +
                      " must divide 'num_cores' = " + Num(params->num_cores));
  }
}

void ApplyOverridesFile(const std::string& path, Params* params) {
  // Read under a limit whatever the path names (/dev/zero, a huge file), refusing a named pipe.
  std::string text;
  const Status st = internal::ReadSmallFile(path, "Neuron device config", kMaxConfigBytes, &text);
  if (!st.ok()) throw ParamsError(st.message());
  ApplyOverrides(text, path, params);
}

Params ParamsFromEnvironment() {
  Params p = Preset("trn1");
  if (const char* path = std::getenv("OPSCOPE_NEURON_CONFIG"); path != nullptr && *path) {
    ApplyOverridesFile(path, &p);
  }
  return p;
}

std::string FormatParams(const Params& params) {
  std::ostringstream out;
  out << "preset = " << params.preset << "\n";
  for (const auto& f : kFields) out << f.key << " = " << Num(params.*(f.member)) << "\n";
  return out.str();
}

double ParamValue(const Params& params, std::string_view key) {
  const Field* field = FindField(key);
  if (field == nullptr) {
    throw ParamsError("unknown Neuron parameter '" + std::string(key) +
                      "' (see docs/neuron-model.md for the parameters)");
  }
  return params.*(field->member);
}

std::string FormatParamRanges() {
  std::string out;
  for (const auto& f : kFields) out += std::string(f.key) + ": " + RangeText(f) + "\n";
  return out;
}

}  // namespace opscope::neuron
