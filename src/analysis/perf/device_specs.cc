// Device peaks for the roofline (see perf_analysis.h; docs/perf-model.md cites every figure).
//
// Tensor-core figures are dense: datasheets that print them with 2:4 sparsity are halved. Where a
// datasheet gives no vector figure for a 16-bit type, the FP32 vector figure is used: ATen computes
// reduced-precision elementwise and reduction math in float (at::opmath_type<Half/BFloat16>).
#include <simdjson.h>

#include <algorithm>
#include <cctype>

#include "base/small_file.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(std::string_view hay, std::string_view needle) {
  return Lower(hay).find(Lower(needle)) != std::string::npos;
}

// Matrix and vector peaks with the 16-bit vector rule applied.
DeviceSpec Gpu(std::string name, std::string source, double mem_gbps, double fp64_vec,
               double fp64_mat, double fp32_vec, double fp32_mat, double tf32, double bf16,
               double fp8, double half_vec) {
  DeviceSpec s;
  s.name = std::move(name);
  s.source = std::move(source);
  s.mem_bw_gbps = mem_gbps;
  const double vec16 = half_vec > 0 ? half_vec : fp32_vec;
  s.tflops = {{"matrix_fp64", fp64_mat}, {"matrix_fp32", fp32_mat}, {"matrix_tf32", tf32},
              {"matrix_bf16", bf16},     {"matrix_fp16", bf16},     {"matrix_fp8", fp8},
              {"vector_fp64", fp64_vec}, {"vector_fp32", fp32_vec}, {"vector_bf16", vec16},
              {"vector_fp16", vec16}};
  return s;
}

// One NeuronCore: the chip's published figures divided by its cores.
DeviceSpec NeuronCore(std::string name, std::string source, double chip_mem_gbps, double chip_bf16,
                      double chip_fp8, double chip_fp32, int cores, double vector_fp32) {
  DeviceSpec s;
  s.name = std::move(name);
  s.source = std::move(source);
  s.mem_bw_gbps = chip_mem_gbps / cores;
  s.tflops = {{"matrix_fp32", chip_fp32 / cores}, {"matrix_tf32", chip_bf16 / cores},
              {"matrix_bf16", chip_bf16 / cores}, {"matrix_fp16", chip_bf16 / cores},
              {"matrix_fp8", chip_fp8 / cores},   {"vector_fp32", vector_fp32},
              {"vector_bf16", vector_fp32},       {"vector_fp16", vector_fp32}};
  return s;
}

std::vector<DeviceSpec> MakeTable() {
  std::vector<DeviceSpec> t;
  t.push_back(Gpu("H100",
                  "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM (tensor figures halved from "
                  "'with sparsity'); FP16/BF16 non-tensor from the NVIDIA H100 Tensor Core GPU "
                  "Architecture whitepaper",
                  3350, 34, 67, 67, 67, 494.5, 989.5, 1979, 133.8));
  t.push_back(Gpu("H200",
                  "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM (tensor figures halved from "
                  "'with sparsity'); FP16/BF16 non-tensor as H100 (same GH100 compute)",
                  4800, 34, 67, 67, 67, 494.5, 989.5, 1979, 133.8));
  t.push_back(Gpu("B200",
                  "NVIDIA HGX B200 datasheet, individual Blackwell GPU (tensor figures halved "
                  "from 'with sparsity')",
                  7700, 37, 37, 75, 75, 1100, 2250, 4500, 0));
  t.push_back(Gpu("MI300X", "AMD Instinct MI300X accelerator specifications (amd.com, dense)", 5300,
                  81.7, 163.4, 163.4, 163.4, 653.7, 1307.4, 2614.9, 0));
  t.push_back(Gpu("MI355X", "AMD Instinct MI355X accelerator specifications (amd.com, dense)", 8000,
                  78.6, 78.6, 157.3, 157.3, 0, 2516.6, 5033.2, 0));
  t.push_back(NeuronCore("trn1",
                         "AWS Neuron docs, Trainium architecture: per chip 190 TFLOPS "
                         "BF16/FP16/TF32/cFP8, 47.5 FP32, 820 GB/s HBM, 2 NeuronCore-v2; "
                         "VectorE 2.3 TFLOPS FP32 per core",
                         820, 190, 190, 47.5, 2, 2.3));
  t.push_back(NeuronCore("trn2",
                         "AWS Neuron docs, Trainium2 architecture: per chip 667 TFLOPS "
                         "BF16/FP16/TF32 and 1299 FP8 dense, 181 FP32, 2.9 TB/s HBM, 8 "
                         "NeuronCore-v3; VectorE 1.0 TFLOPS FP32 per core",
                         2900, 667, 1299, 181, 8, 1.0));
  for (DeviceSpec& s : t) {
    std::erase_if(s.tflops, [](const auto& kv) { return kv.second <= 0; });
  }
  return t;
}

Status LoadSpecFile(const std::string& path, const std::vector<DeviceSpec>& extra,
                    std::optional<DeviceSpec>* out) {
  // A spec is a few hundred bytes: read it under the limit of every small input (a device such
  // as /dev/zero was read without end before).
  std::string text;
  if (Status st = internal::ReadSmallFile(path, "device spec", internal::kMaxSmallFileBytes, &text);
      !st.ok()) {
    if (st.code() != Status::Code::kNotFound) return st;
    std::string msg =
        "device spec '" + path + "' is neither a known device nor a readable file (known:";
    for (const DeviceSpec& s : BuiltinDeviceSpecs()) msg += " " + s.name;
    for (const DeviceSpec& s : extra) msg += " " + s.name;
    return Status::NotFound(msg + ")", path);
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text).get(doc); err != simdjson::SUCCESS) {
    return Status::InvalidInput(path + ": not JSON (" + simdjson::error_message(err) + ")", 0,
                                path);
  }
  DeviceSpec spec;
  std::string_view name;
  spec.name = doc["name"].get_string().get(name) == simdjson::SUCCESS ? std::string(name) : path;
  spec.source = path;
  if (doc["mem_bw_gbps"].get_double().get(spec.mem_bw_gbps) != simdjson::SUCCESS ||
      spec.mem_bw_gbps <= 0) {
    return Status::InvalidInput(path + ": expected a positive number \"mem_bw_gbps\" (GB/s)", 0,
                                path);
  }
  simdjson::dom::object peaks;
  if (doc["max_achievable_tflops"].get_object().get(peaks) != simdjson::SUCCESS) {
    return Status::InvalidInput(
        path + ": expected an object \"max_achievable_tflops\" ({\"matrix_bf16\": ...})", 0, path);
  }
  for (simdjson::dom::key_value_pair kv : peaks) {
    double v = 0;
    if (kv.value.get_double().get(v) != simdjson::SUCCESS || v <= 0) {
      return Status::InvalidInput(
          path + ": max_achievable_tflops." + std::string(kv.key) + " must be a positive number", 0,
          path);
    }
    spec.tflops.emplace_back(std::string(kv.key), v);
  }
  *out = std::move(spec);
  return Status::Ok();
}

}  // namespace

std::string TraceDeviceName(const Trace& trace) {
  for (const auto& [key, value] : trace.metadata().extra) {
    if (key != "deviceProperties") continue;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(value).get(doc) != simdjson::SUCCESS) return "";
    simdjson::dom::array devices;
    if (doc.get_array().get(devices) != simdjson::SUCCESS) return "";
    for (simdjson::dom::element d : devices) {
      std::string_view name;
      if (d["name"].get_string().get(name) == simdjson::SUCCESS) return std::string(name);
    }
  }
  return "";
}

double DeviceSpec::PeakTflops(std::string_view compute_spec) const {
  for (const auto& [key, value] : tflops) {
    if (key == compute_spec) return value;
  }
  return 0;
}

const std::vector<DeviceSpec>& BuiltinDeviceSpecs() {
  static const std::vector<DeviceSpec> table = MakeTable();
  return table;
}

std::optional<DeviceSpec> FindDeviceSpec(std::string_view name) {
  const auto& table = BuiltinDeviceSpecs();
  for (const DeviceSpec& s : table) {
    if (Lower(s.name) == Lower(name)) return s;
  }
  // Device names as drivers report them. PCIe and NVL H100s have other peaks: no match.
  struct Alias {
    const char* needle;
    const char* spec;
  };
  constexpr Alias kAliases[] = {{"MI355X", "MI355X"},
                                {"MI300X", "MI300X"},
                                {"H200", "H200"},
                                {"B200", "B200"},
                                {"H100", "H100"}};
  for (const Alias& a : kAliases) {
    if (!Contains(name, a.needle)) continue;
    if (std::string_view(a.spec) == "H100" && (Contains(name, "PCIe") || Contains(name, "NVL"))) {
      return std::nullopt;
    }
    return FindDeviceSpec(a.spec);
  }
  return std::nullopt;
}

Status ChooseDeviceSpec(const Trace& trace, std::string_view name_or_file,
                        std::optional<DeviceSpec>* spec, const std::vector<DeviceSpec>& extra) {
  spec->reset();
  auto from_extra = [&](std::string_view name) -> std::optional<DeviceSpec> {
    for (const DeviceSpec& s : extra) {
      if (Lower(s.name) == Lower(name)) return s;
    }
    return std::nullopt;
  };
  if (!name_or_file.empty()) {
    if ((*spec = from_extra(name_or_file)) || (*spec = FindDeviceSpec(name_or_file))) {
      return Status::Ok();
    }
    return LoadSpecFile(std::string(name_or_file), extra, spec);
  }
  const std::string device = TraceDeviceName(trace);
  // opscope's profiler names its simulated cores "NeuronCore N" in a NEURON trace.
  if (trace.metadata().device_type == "NEURON" && device.starts_with("NeuronCore")) {
    *spec = from_extra(kSimulatedNeuronSpec);
  } else {
    *spec = FindDeviceSpec(device);
  }
  return Status::Ok();
}

}  // namespace opscope
