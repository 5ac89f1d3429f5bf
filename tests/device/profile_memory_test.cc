// profile_memory end to end on the simulated NeuronCore: tensor ops record "[memory]" events as
// Kineto writes them, the exported trace imports with opscope and key_averages charges each
// allocation to the op that made it, and `demo rmsnorm` shows what the naive version's
// intermediates cost. Expected sizes are computed here from shapes and dtypes (f32: 4 bytes),
// rounded up to the device allocator's 64-byte blocks.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "device/neuron/device.h"
#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"
#include "opscope/tensor.h"
#include "tools/demo_rmsnorm.h"

namespace opscope {
namespace {

int64_t Block(int64_t numel, int64_t element_bytes = 4) {
  return (numel * element_bytes + 63) / 64 * 64;
}

class ProfileMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterCpuBackend();
    RegisterNeuronBackend();
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope_profile_memory_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // x * x on neuron:0 under the profiler; returns the exported trace's path.
  std::string ProfileMul(bool profile_memory, int64_t rows, int64_t cols) {
    const Tensor x = randn({rows, cols}, 3).to(Device("neuron:0"));
    ProfilerOptions o;
    o.activities = {ProfilerActivity::kCPU, ProfilerActivity::kPrivateUse1};
    o.profile_memory = profile_memory;
    Profiler prof(o);
    prof.Start();
    {
      Tensor y = x * x;
      neuron::synchronize();
    }
    prof.Stop();
    const std::string path = (dir_ / (profile_memory ? "on.json" : "off.json")).string();
    prof.export_chrome_trace(path);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(ProfileMemoryTest, ExportedEventsImportAndKeyAveragesChargeTheOp) {
  const int64_t rows = 16, cols = 100;
  const std::string path = ProfileMul(true, rows, cols);

  // As Kineto writes them: "i" on the allocating thread, the args in Kineto's order.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(path).get(doc), simdjson::SUCCESS);
  std::vector<int64_t> bytes;
  int64_t op_tid = -1, memory_tid = -2;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view name;
    if (e["name"].get(name) != simdjson::SUCCESS) continue;
    if (name == "aten::mul") {
      ASSERT_EQ(e["tid"].get(op_tid), simdjson::SUCCESS);
    }
    if (name != "[memory]") continue;
    EXPECT_EQ(std::string_view(e["ph"]), "i");
    EXPECT_EQ(std::string_view(e["s"]), "t");
    EXPECT_EQ(std::string_view(e["cat"]), "cpu_instant_event");
    ASSERT_EQ(e["tid"].get(memory_tid), simdjson::SUCCESS);
    std::vector<std::string_view> keys;
    for (auto field : e["args"].get_object()) keys.push_back(field.key);
    EXPECT_EQ(keys, (std::vector<std::string_view>{"Total Reserved", "Total Allocated", "Bytes",
                                                   "Device Id", "Device Type", "Addr"}));
    EXPECT_EQ(int64_t(e["args"]["Device Type"]), 20);  // c10::DeviceType::PrivateUse1
    EXPECT_EQ(int64_t(e["args"]["Device Id"]), 0);
    bytes.push_back(int64_t(e["args"]["Bytes"]));
  }
  EXPECT_EQ(memory_tid, op_tid);
  EXPECT_EQ(bytes, (std::vector<int64_t>{Block(rows * cols), -Block(rows * cols)}));

  Trace trace;
  ASSERT_TRUE(ImportTrace(path, &trace).ok());
  const KeyAverages ka = KeyAverages::FromTrace(trace);
  ASSERT_TRUE(ka.has_memory());
  const KeyAverage* mul = nullptr;
  for (const KeyAverage& r : ka.rows()) {
    if (r.key == "aten::mul") mul = &r;
  }
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->device_memory_usage, Block(rows * cols));
  EXPECT_EQ(mul->self_device_memory_usage, Block(rows * cols));
  const std::string table = ka.Table("self_privateuse1_memory_usage", 5);
  EXPECT_NE(table.find("Self NEURON Mem"), std::string::npos) << table;
  EXPECT_NE(table.find("NEURON Mem"), std::string::npos) << table;
}

TEST_F(ProfileMemoryTest, OffRecordsNoMemoryEvent) {
  const std::string path = ProfileMul(false, 4, 4);
  Trace trace;
  ASSERT_TRUE(ImportTrace(path, &trace).ok());
  EXPECT_EQ(ComputeMemoryTimeline(trace).events, 0u);
  EXPECT_FALSE(KeyAverages::FromTrace(trace).has_memory());
  bool mul = false;
  for (const Slice& s : trace.slices()) mul = mul || trace.Str(s.name) == "aten::mul";
  EXPECT_TRUE(mul);
}

// The naive RMSNorm (x*x, mean, +eps, rsqrt, x*r, *w) holds, at its peak, r = rsqrt(...)
// [rows, 1] and x*r [rows, hidden] beside the output; the fused op holds only the output. So the
// naive call's peak exceeds the fused one's by exactly those two intermediates.
TEST_F(ProfileMemoryTest, DemoNaivePeakExceedsFusedByTheIntermediates) {
  tools::DemoOptions o;
  o.rows = 8;  // [8, 1] f32 is 32 bytes: one 64-byte block
  o.hidden = 256;
  o.iters = 2;
  o.warmup = 1;
  const tools::DemoReport report = tools::RunRmsNormDemo(o, tools::RmsNormVariants());
  ASSERT_EQ(report.variants.size(), 2u);
  const tools::VariantResult& naive = report.variants[0];
  const tools::VariantResult& fused = report.variants[1];
  ASSERT_EQ(naive.name, "naive");
  ASSERT_EQ(fused.name, "fused");
  EXPECT_EQ(naive.memory_device, "NEURON:0");
  const int64_t output = Block(o.rows * o.hidden);
  const int64_t x_times_r = Block(o.rows * o.hidden);
  const int64_t r = Block(o.rows * 1);
  EXPECT_EQ(fused.peak_memory_bytes_per_call, output);
  EXPECT_EQ(naive.peak_memory_bytes_per_call - fused.peak_memory_bytes_per_call, x_times_r + r);
  // Allocated per call: fused its output; naive x*x, x*r and the output [rows, hidden], and
  // mean, +eps and rsqrt [rows, 1].
  EXPECT_DOUBLE_EQ(fused.allocated_bytes_per_call, double(output));
  EXPECT_DOUBLE_EQ(naive.allocated_bytes_per_call, double(3 * output + 3 * r));
  // The printed summary and the table's memory columns.
  const std::string text = tools::FormatDemoText(report);
  EXPECT_NE(text.find("NEURON:0 memory per call"), std::string::npos) << text;
  EXPECT_NE(text.find("Self NEURON Mem"), std::string::npos) << text;
}

}  // namespace
}  // namespace opscope
