// Presets and the key=value override format for the Neuron model's parameters.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "opscope/neuron.h"

namespace opscope::neuron {
namespace {

struct Field {
  const char* key;
  double Params::*member;
};

// Every overridable number, by the name used in files. Keep in the order of the struct.
constexpr Field kFields[] = {
    {"num_cores", &Params::num_cores},
    {"partitions", &Params::partitions},
    {"free_tile_bytes", &Params::free_tile_bytes},
    {"sbuf_bytes", &Params::sbuf_bytes},
    {"hbm_gib", &Params::hbm_gib},
    {"tensor_ghz", &Params::tensor_ghz},
    {"tensor_fp32_tflops", &Params::tensor_fp32_tflops},
    {"tensor_overhead_cycles", &Params::tensor_overhead_cycles},
    {"vector_ghz", &Params::vector_ghz},
    {"vector_fp32_tflops", &Params::vector_fp32_tflops},
    {"vector_overhead_cycles", &Params::vector_overhead_cycles},
    {"scalar_ghz", &Params::scalar_ghz},
    {"scalar_fp32_tflops", &Params::scalar_fp32_tflops},
    {"scalar_overhead_cycles", &Params::scalar_overhead_cycles},
    {"gpsimd_ghz", &Params::gpsimd_ghz},
    {"gpsimd_fp32_tflops", &Params::gpsimd_fp32_tflops},
    {"gpsimd_overhead_cycles", &Params::gpsimd_overhead_cycles},
    {"hbm_gbps", &Params::hbm_gbps},
    {"dma_queues", &Params::dma_queues},
    {"dma_queue_gbps", &Params::dma_queue_gbps},
    {"dma_setup_ns", &Params::dma_setup_ns},
    {"exec_fixed_us", &Params::exec_fixed_us},
    {"exec_launch_fraction", &Params::exec_launch_fraction},
    {"first_exec_load_us", &Params::first_exec_load_us},
    {"clock_offset_ns", &Params::clock_offset_ns},
    {"clock_drift_ppm", &Params::clock_drift_ppm},
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

// Values that must be positive for the model to make sense (a zero clock or bandwidth would
// divide by zero).
bool MustBePositive(std::string_view key) {
  return key != "clock_offset_ns" && key != "clock_drift_ppm" && key != "first_exec_load_us" &&
         key != "exec_fixed_us" && key != "exec_launch_fraction" && key != "dma_setup_ns" &&
         key.find("overhead") == std::string_view::npos;
}

}  // namespace

Params Preset(std::string_view name) {
  Params p;  // the struct's defaults are the trn1 preset
  if (name == "trn1" || name.empty()) return p;
  if (name == "trn2") {
    p.preset = "trn2";
    p.num_cores = 8;
    p.sbuf_bytes = 28.0 * 1024 * 1024;
    p.hbm_gib = 12;
    p.tensor_ghz = 2.4;
    p.tensor_fp32_tflops = 20;
    p.vector_ghz = 0.96;
    p.vector_fp32_tflops = 1.0;
    p.scalar_ghz = 1.2;
    p.scalar_fp32_tflops = 1.2;
    p.gpsimd_ghz = 1.2;
    p.gpsimd_fp32_tflops = 0.31;
    p.hbm_gbps = 360;
    p.dma_queue_gbps = 23;
    return p;
  }
  std::string msg = "unknown Neuron preset '" + std::string(name) + "' (known:";
  for (const auto& n : PresetNames()) msg += " " + n;
  throw ParamsError(msg + ")");
}

std::vector<std::string> PresetNames() { return {"trn1", "trn2"}; }

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
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      throw ParamsError(where() + "expected 'key = value', got '" + std::string(line) + "'");
    }
    std::string key(Trim(line.substr(0, eq)));
    std::string value(Trim(line.substr(eq + 1)));
    if (key == "preset") {
      *params = Preset(value);
      continue;
    }
    const Field* field = nullptr;
    for (const auto& f : kFields) {
      if (key == f.key) field = &f;
    }
    if (field == nullptr) {
      throw ParamsError(where() + "unknown key '" + key +
                        "' (see docs/neuron-model.md for the parameters)");
    }
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || errno != 0 || !std::isfinite(v)) {
      throw ParamsError(where() + "value of '" + key + "' is not a number: '" + value + "'");
    }
    if (v < 0 && key != "clock_drift_ppm") {
      throw ParamsError(where() + "'" + key + "' must not be negative, got " + value);
    }
    if (v <= 0 && MustBePositive(key)) {
      throw ParamsError(where() + "'" + key + "' must be positive, got " + value);
    }
    if (key == "exec_launch_fraction" && v > 1) {
      throw ParamsError(where() + "'exec_launch_fraction' must be in [0, 1], got " + value);
    }
    params->*(field->member) = v;
  }
}

void ApplyOverridesFile(const std::string& path, Params* params) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParamsError("cannot read Neuron device config '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  ApplyOverrides(ss.str(), path, params);
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
  out.precision(12);
  out << "preset = " << params.preset << "\n";
  for (const auto& f : kFields) out << f.key << " = " << params.*(f.member) << "\n";
  return out.str();
}

}  // namespace opscope::neuron
