// Device specs: the built-in table, matching device names as traces record them, TraceLens arch
// files, and the roofline of one op worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

TEST(DeviceSpecs, TableHasTheDatasheetDevices) {
  for (const char* name : {"H100", "H200", "B200", "MI300X", "MI355X", "trn1", "trn2"}) {
    auto s = FindDeviceSpec(name);
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_GT(s->mem_bw_gbps, 0) << name;
    EXPECT_GT(s->PeakTflops("vector_fp32"), 0) << name;
    EXPECT_FALSE(s->source.empty()) << name;
  }
  EXPECT_EQ(FindDeviceSpec("mi300x")->PeakTflops("matrix_bf16"), 1307.4);
  EXPECT_EQ(FindDeviceSpec("H200")->mem_bw_gbps, 4800);
  EXPECT_EQ(FindDeviceSpec("MI355X")->PeakTflops("matrix_tf32"), 0);  // not listed
}

TEST(DeviceSpecs, MatchesDriverNames) {
  EXPECT_EQ(FindDeviceSpec("AMD Instinct MI300X VF")->name, "MI300X");
  EXPECT_EQ(FindDeviceSpec("NVIDIA H100 80GB HBM3")->name, "H100");
  EXPECT_EQ(FindDeviceSpec("NVIDIA H200")->name, "H200");
  EXPECT_FALSE(FindDeviceSpec("NVIDIA H100 PCIe").has_value());  // other peaks
  EXPECT_FALSE(FindDeviceSpec("NVIDIA A100-PG509-200").has_value());
}

std::string TempFile(const std::string& text) {
  char path[] = "/tmp/opscope_spec_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(DeviceSpecs, LoadsTraceLensArchFiles) {
  Trace empty;
  empty.Finalize();
  std::optional<DeviceSpec> spec;
  const std::string good = TempFile(
      R"({"name": "MI300X-custom", "mem_bw_gbps": 5000,
          "max_achievable_tflops": {"matrix_bf16": 700, "vector_fp32": 80}})");
  Status st = ChooseDeviceSpec(empty, good, &spec);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name, "MI300X-custom");
  EXPECT_EQ(spec->PeakTflops("matrix_bf16"), 700);
  const std::string bad = TempFile(R"({"name": "x", "max_achievable_tflops": {}})");
  st = ChooseDeviceSpec(empty, bad, &spec);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_FALSE(spec.has_value());
  EXPECT_NE(st.message().find("mem_bw_gbps"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(bad), std::string::npos) << st.message();
  st = ChooseDeviceSpec(empty, "/no/such/spec.json", &spec);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("MI300X"), std::string::npos) << "lists the known names";
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// A spec file is read under the 1 MiB limit of every small input: a device (read without end
// before: 1.4 GB in 6 s) or a directory is an error naming it.
TEST(DeviceSpecs, SpecFilesAreReadUnderTheSizeLimit) {
  Trace empty;
  empty.Finalize();
  std::optional<DeviceSpec> spec;
  Status st = ChooseDeviceSpec(empty, "/dev/zero", &spec);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "device spec '/dev/zero' is larger than 1048576 bytes (the limit for this kind of "
            "file)");
  EXPECT_FALSE(spec.has_value());
  st = ChooseDeviceSpec(empty, "/", &spec);
  EXPECT_EQ(st.message(), "device spec '/' is a directory, not a file");
}

TEST(DeviceSpecs, OpscopesOwnNeuronTracesGetTheSuppliedSimulatedSpec) {
  const std::string json = R"({"deviceType": "NEURON",
    "deviceProperties": [{"id": 0, "name": "NeuronCore 0"}], "traceEvents": []})";
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(json, &trace).ok());
  DeviceSpec sim;
  sim.name = std::string(kSimulatedNeuronSpec);
  sim.mem_bw_gbps = 410;
  std::optional<DeviceSpec> spec;
  ASSERT_TRUE(ChooseDeviceSpec(trace, "", &spec, {sim}).ok());
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name, kSimulatedNeuronSpec);
  ASSERT_TRUE(ChooseDeviceSpec(trace, "", &spec).ok());
  EXPECT_FALSE(spec.has_value());  // not supplied: no roofline rather than a guess
  ASSERT_TRUE(ChooseDeviceSpec(trace, "trn2", &spec, {sim}).ok());
  EXPECT_EQ(spec->name, "trn2");  // the published figures, by name
}

// One aten::mm [1024, 1024] x [1024, 1024] in bf16 whose kernel takes 10 us on an H100:
// 2 * 1024^3 = 2.147 GFLOP and 3 * 2 MiB moved, so 214.7 TFLOPS/s (21.7 % of 989.5) and
// 0.629 TB/s (18.8 % of 3.35); at peak the math takes 2.17 us and the memory 1.88 us: compute.
TEST(DeviceSpecs, RooflineOfOneGemm) {
  const std::string json = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
    "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50,
     "args": {"External id": 1, "Input Dims": [[1024, 1024], [1024, 1024]],
              "Input type": ["c10::BFloat16", "c10::BFloat16"],
              "Input Strides": [[1024, 1], [1024, 1]], "Concrete Inputs": ["", ""]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5,
     "dur": 10, "args": {"External id": 1, "correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 10,
     "args": {"External id": 1, "correlation": 9, "stream": 7}}]})";
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(json, &trace).ok());
  PerfModelOptions options;
  ASSERT_TRUE(ChooseDeviceSpec(trace, "", &options.device).ok());
  ASSERT_TRUE(options.device.has_value());
  const PerfModel pm = ComputePerfModel(trace, options);
  ASSERT_EQ(pm.rows.size(), 1u);
  const PerfModelRow& r = pm.rows[0];
  EXPECT_NEAR(r.gflops, 2.147483648, 1e-9);
  EXPECT_NEAR(r.data_moved_mb, 6, 1e-9);
  EXPECT_NEAR(r.tflops_per_s.mean, 214.7483648, 1e-6);
  EXPECT_NEAR(r.tb_per_s.mean, 0.6291456, 1e-9);
  EXPECT_NEAR(r.pct_compute_roof, 100 * 214.7483648 / 989.5, 1e-6);
  EXPECT_NEAR(r.pct_memory_roof, 100 * 0.6291456 / 3.35, 1e-6);
  EXPECT_EQ(r.bound, "compute");
  ASSERT_EQ(pm.ops_by_category.size(), 1u);
  EXPECT_EQ(pm.ops_by_category[0].category, "GEMM");
  EXPECT_EQ(pm.ops_by_category[0].direct_ns, 10000);
}

}  // namespace
}  // namespace opscope
