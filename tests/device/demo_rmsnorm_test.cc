// The RMSNorm case study end to end on the Neuron model: the reference story's structure
// (naive = six executions with aten::mul about half the device time; fused = one execution of
// aten::_fused_rms_norm at about one sixth), traces in Neuron's layout, JSON output, and the
// --no-sync pitfall with its warning. Figures are model facts, not timings of this host.
#include "tools/demo_rmsnorm.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <new>
#include <set>
#include <string>

#include "device/neuron/device.h"
#include "opscope/neuron.h"
#include "tools/demo_memory.h"

namespace opscope::tools {
namespace {

DemoOptions SmallRun() {
  DemoOptions o;  // the default shape: the structure is asserted there
  o.iters = 2;
  o.warmup = 1;
  return o;
}

const VariantResult& Find(const DemoReport& r, const std::string& name) {
  for (const auto& v : r.variants) {
    if (v.name == name) return v;
  }
  throw std::runtime_error("no variant " + name);
}

TEST(DemoRmsNorm, NeuronShowsTheReferenceStoryStructure) {
  DemoReport report = RunRmsNormDemo(SmallRun(), RmsNormVariants());
  ASSERT_EQ(report.variants.size(), 2u);
  const VariantResult& naive = Find(report, "naive");
  const VariantResult& fused = Find(report, "fused");
  EXPECT_DOUBLE_EQ(naive.device_executions_per_call, 6);
  EXPECT_DOUBLE_EQ(fused.device_executions_per_call, 1);
  ASSERT_FALSE(naive.device_share.empty());
  EXPECT_EQ(naive.device_share[0].first, "aten::mul");
  EXPECT_GT(naive.device_share[0].second, 0.40);
  EXPECT_LT(naive.device_share[0].second, 0.60);
  std::set<std::string> rest;
  for (size_t i = 1; i < naive.device_share.size(); ++i) rest.insert(naive.device_share[i].first);
  EXPECT_EQ(rest, (std::set<std::string>{"aten::add", "aten::rsqrt", "aten::mean"}));
  ASSERT_EQ(fused.device_share.size(), 1u);
  EXPECT_EQ(fused.device_share[0].first, "aten::_fused_rms_norm");
  EXPECT_GT(naive.device_us_per_call / fused.device_us_per_call, 4.0);
  EXPECT_LT(naive.device_us_per_call / fused.device_us_per_call, 8.0);
  EXPECT_LT(naive.max_abs_error, 1e-4);
  EXPECT_LT(fused.max_abs_error, 1e-4);
  EXPECT_EQ(naive.in_flight_at_stop, 0u);
  // The table is sorted by device time: aten::mul first among ops with device time.
  const std::string table = naive.averages.Table(naive.sort_key, 12);
  EXPECT_NE(table.find("Self NEURON"), std::string::npos) << table;
  EXPECT_LT(table.find("aten::mul"), table.find("aten::mean")) << table;
  EXPECT_EQ(FormatDemoText(report).find("warning"), std::string::npos);
}

TEST(DemoRmsNorm, WritesTracesInNeuronLayoutAndJson) {
  DemoOptions o = SmallRun();
  o.iters = 1;
  o.out_dir = ::testing::TempDir() + "/demo_rmsnorm_test";
  std::filesystem::remove_all(o.out_dir);
  DemoReport report = RunRmsNormDemo(o, RmsNormVariants());
  for (const auto& v : report.variants) {
    ASSERT_TRUE(std::filesystem::exists(v.trace_path)) << v.trace_path;
    // <dir>/<host>_pid_<pid>/<timestamp>/<variant>/trace.json
    std::filesystem::path p(v.trace_path);
    EXPECT_EQ(p.filename(), "trace.json");
    EXPECT_EQ(p.parent_path().filename(), v.name);
    EXPECT_NE(p.parent_path().parent_path().parent_path().filename().string().find("_pid_"),
              std::string::npos);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.load(v.trace_path).get(doc), simdjson::SUCCESS);
    int kernels = 0;
    for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
      std::string_view name;
      if (e["name"].get(name) == simdjson::SUCCESS && name == "nc_exec_running") ++kernels;
    }
    EXPECT_EQ(kernels, v.name == "naive" ? 6 : 1);
  }
  std::string json = FormatDemoJson(report);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(doc["variants"].get_array().size(), 2u);
  double execs = 0;
  ASSERT_EQ(doc["variants"].at(0)["device_executions_per_call"].get(execs), simdjson::SUCCESS);
  EXPECT_EQ(execs, 6);
  std::filesystem::remove_all(o.out_dir);
}

TEST(DemoRmsNorm, NoSyncLosesDeviceTimeAndWarns) {
  DemoOptions o = SmallRun();
  o.iters = 5;  // 30 executions of ~400 us: far more device time than the host needs to launch
  o.sync = false;
  DemoReport report = RunRmsNormDemo(o, RmsNormVariants());
  const VariantResult& naive = Find(report, "naive");
  EXPECT_GT(naive.in_flight_at_stop, 0u);
  EXPECT_LT(naive.device_executions_per_call, 6);  // missing or short
  const std::string text = FormatDemoText(report);
  EXPECT_NE(text.find("still in flight"), std::string::npos) << text;
  EXPECT_NE(text.find("opscope::neuron::synchronize()"), std::string::npos);
  EXPECT_NE(text.find("flush_device_on_stop"), std::string::npos);
  // The fix without a synchronize: flush at stop.
  o.flush_on_stop = true;
  DemoReport fixed = RunRmsNormDemo(o, RmsNormVariants());
  EXPECT_DOUBLE_EQ(Find(fixed, "naive").device_executions_per_call, 6);
  EXPECT_EQ(Find(fixed, "naive").in_flight_at_stop, 0u);
}

// Without a synchronize the host runs ahead only as far as the runtime's execution queue allows:
// at stop at most max_inflight_executions are in flight, however many iterations ran.
TEST(DemoRmsNorm, NoSyncRunsAheadOnlyAsFarAsTheQueueAllows) {
  DemoOptions o = SmallRun();
  o.iters = 100;
  o.sync = false;
  DemoReport report = RunRmsNormDemo(o, RmsNormVariants());
  const auto limit = uint64_t(neuron::DefaultDevice().params().max_inflight_executions);
  for (const auto& v : report.variants) {
    SCOPED_TRACE(v.name);
    EXPECT_GT(v.in_flight_at_stop, 0u);
    EXPECT_LE(v.in_flight_at_stop, limit);
  }
}

TEST(DemoRmsNorm, CpuRunsWithoutDeviceColumns) {
  DemoOptions o = SmallRun();
  o.device = "cpu";
  o.rows = 16;
  o.hidden = 64;
  DemoReport report = RunRmsNormDemo(o, RmsNormVariants());
  EXPECT_EQ(report.model, "");
  for (const auto& v : report.variants) {
    EXPECT_EQ(v.device_executions_per_call, 0);
    EXPECT_GT(v.wall_us_per_call, 0);
    EXPECT_LT(v.max_abs_error, 1e-4);
  }
}

TEST(DemoRmsNorm, BadOptionsAreClearErrors) {
  DemoOptions o = SmallRun();
  o.iters = 0;
  EXPECT_THROW(RunRmsNormDemo(o, RmsNormVariants()), std::runtime_error);
  o = SmallRun();
  o.device = "tpu";
  EXPECT_ANY_THROW(RunRmsNormDemo(o, RmsNormVariants()));
  o = SmallRun();
  o.device = "neuron:7";
  try {
    RunRmsNormDemo(o, RmsNormVariants());
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("neuron:7"), std::string::npos) << e.what();
  }
}

// What cannot fit is refused before anything is allocated, every copy counted; an allocation
// that fails anyway says what it was and how much; per-iteration state is bounded by --iters.
TEST(DemoRmsNorm, SizesThatCannotFitAreRefusedUpFront) {
  DemoOptions o = SmallRun();
  o.rows = int64_t{1} << 40;  // 4 TiB per copy
  o.hidden = 1;
  try {
    RunRmsNormDemo(o, RmsNormVariants());
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit: the demo holds 6 copies of the "
                                         "[1099511627776, 1] f32 tensor x (4096.0 GiB each"),
              std::string::npos)
        << e.what();
  }
  o.rows = int64_t{1} << 62;  // the copies' bytes do not fit 64 bits
  EXPECT_THROW(RunRmsNormDemo(o, RmsNormVariants()), std::runtime_error);
  o = SmallRun();
  o.iters = kMaxDemoIters + 1;
  EXPECT_THROW(RunRmsNormDemo(o, RmsNormVariants()), std::runtime_error);
  try {
    Allocating("x on the host", int64_t{3} << 30, []() -> int { throw std::bad_alloc(); });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory allocating x on the host (3.0 GiB; "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace opscope::tools
