// End-to-end tests of `opscope report`, `opscope diff` and the demo's arguments as a user runs
// them: exit codes, output sections, JSON that parses, and clear errors for bad input.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using CliRun = testing::CommandResult;

fs::path Binary() { return testing::OpscopeBinary(); }

CliRun Opscope(const std::string& args, bool with_stderr = true) {
  return testing::RunOpscope(args,
                             with_stderr ? testing::Stderr::kMerged : testing::Stderr::kDropped);
}

std::string Fixture(const char* relative) {
  return (testing::FixturesDir() / "traces" / relative).string();
}

bool ValidJson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(text).get(doc) == simdjson::SUCCESS;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(Binary())) << Binary() << " not built";
    ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
  }
};

TEST_F(CliTest, ReportPrintsEverySection) {
  const CliRun r = Opscope(
      "report '" + Fixture("tracelens/mi300/Falconsai_nsfw_image_detection__1016002.json.gz") +
      "' --rows 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* section : {"Self CUDA", "CUDA timeline", "busy", "Top kernels",
                              "Launch statistics", "aten::addmm", "hipLaunchKernel"}) {
    EXPECT_NE(r.output.find(section), std::string::npos) << section << "\n" << r.output;
  }
}

// `--threads N` changes nothing in the output, warnings included, on every fixture: the import
// and the report's analyses (key_averages, timeline, op and kernel summaries, launch statistics)
// run on N threads; `report --json` and the text report are byte-identical to one thread's.
TEST_F(CliTest, ReportIsTheSameForEveryThreadCount) {
  const auto traces = testing::TraceFiles(testing::FixturesDir() / "traces");
  ASSERT_FALSE(traces.empty());
  for (const fs::path& trace : traces) {
    for (const char* format : {"--json", "--group-by-input-shape"}) {
      const std::string args =
          "report '" + trace.string() + "' " + format + " --rows -1 --threads ";
      const CliRun one = Opscope(args + "1");
      EXPECT_EQ(one.exit_code, 0) << trace << " " << format;
      for (const char* threads : {"2", "3", "8"}) {
        const CliRun many = Opscope(args + threads);
        EXPECT_EQ(many.exit_code, one.exit_code) << trace << " " << format << ", " << threads;
        EXPECT_TRUE(many.output == one.output)
            << trace << " " << format << ", " << threads << " threads";
      }
    }
  }
}

TEST_F(CliTest, ReportJsonParses) {
  const CliRun r =
      Opscope("report '" + Fixture("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz") +
                  "' --json --sort self_cpu_time_total",
              /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(ValidJson(r.output)) << r.output.substr(0, 500);
  EXPECT_NE(r.output.find("\"device_timeline\""), std::string::npos);
}

TEST_F(CliTest, DiffTextAndJson) {
  const std::string a = Fixture("tracelens/mi300/Falconsai_nsfw_image_detection__1016002.json.gz");
  const std::string b = Fixture("tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  CliRun r = Opscope("diff '" + a + "' '" + b + "' --rows 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("added"), std::string::npos) << r.output;
  r = Opscope("diff '" + a + "' '" + b + "' --json", false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(ValidJson(r.output));
}

TEST_F(CliTest, BadInputExitsOneWithAClearMessage) {
  CliRun r = Opscope("report /nonexistent/trace.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("cannot open /nonexistent/trace.json"), std::string::npos) << r.output;

  const fs::path truncated =
      fs::temp_directory_path() / ("opscope_cli_truncated_" + std::to_string(getpid()) + ".json");
  {
    std::ofstream out(truncated);
    out << R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}, {"ph": )";
  }
  r = Opscope("report '" + truncated.string() + "'");
  fs::remove(truncated);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("byte "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;

  r = Opscope("report '" + Fixture("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz") +
              "' --sort no_such_key");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no_such_key"), std::string::npos) << r.output;

  r = Opscope("diff /nonexistent/a.json /nonexistent/b.json");
  EXPECT_EQ(r.exit_code, 1);
}

// Writes `text` to a fresh temporary file; removed when the returned guard goes away.
struct TempTrace {
  explicit TempTrace(const std::string& text) {
    path = fs::temp_directory_path() /
           ("opscope_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".json");
    std::ofstream(path) << text;
  }
  ~TempTrace() { fs::remove(path); }
  fs::path path;
  static inline int counter = 0;
};

// torch.autograd.profiler's legacy export (no Kineto): a top-level array, no "cat", pid
// "CPU functions", integer microseconds. Its complete events are the ops.
TEST_F(CliTest, LegacyTraceWithoutCategoriesGivesTheTable) {
  const TempTrace t(
      R"([{"name": "outer", "ph": "X", "ts": 10, "dur": 100, "tid": 1, "pid": "CPU functions", "args": {}}, )"
      R"({"name": "aten::mm", "ph": "X", "ts": 20, "dur": 30, "tid": 1, "pid": "CPU functions", "args": {}}, )"
      R"({"name": "aten::mm", "ph": "X", "ts": 60, "dur": 10, "tid": 1, "pid": "CPU functions", "args": {}}])");
  const CliRun r = Opscope("report '" + t.path.string() + "' --sort self_cpu_time_total");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // outer: self 60 of 100 us; aten::mm: 2 calls, 40 us.
  EXPECT_NE(r.output.find("outer        60.00%      60.000us       100.00%     100.000us     "
                          "100.000us             1"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("aten::mm        40.00%      40.000us        40.00%      40.000us      "
                          "20.000us             2"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Self CPU time total: 100.000us"), std::string::npos) << r.output;
}

TEST_F(CliTest, TraceWithoutHostOpsSaysWhyThereIsNoTable) {
  const TempTrace t(
      R"({"traceEvents": [{"name": "span", "ph": "X", "cat": "Trace", "ts": 1, "dur": 5, "pid": 1, "tid": 1}]})");
  const CliRun r = Opscope("report '" + t.path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("No key_averages table: none of the trace's 1 slices is a host op"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("categories seen: Trace (1)"), std::string::npos) << r.output;
}

// The header names the file the user gave; the recorded traceName is metadata only.
TEST_F(CliTest, HeaderShowsTheFileAndTraceNameAsMetadata) {
  const TempTrace t(
      R"({"traceEvents": [{"name": "aten::add", "ph": "X", "cat": "cpu_op", "ts": 1, "dur": 5, "pid": 1, "tid": 1}], "traceName": "/tmp/tmpab12/rank0.json"})");
  CliRun r = Opscope("report '" + t.path.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("Trace: " + t.path.string() + "  device: none", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("\ntraceName: /tmp/tmpab12/rank0.json\n"), std::string::npos) << r.output;
  r = Opscope("report '" + t.path.string() + "' --json", false);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("{\"file\":\"" + t.path.string() + "\""), std::string::npos) << r.output;
}

// `--json` is read by scripts that cannot know of a row limit: every row unless --rows is given
// explicitly; the text keeps its default of 20.
TEST_F(CliTest, JsonGivesEveryRowUnlessRowsIsExplicit) {
  std::string events;
  for (int i = 0; i < 30; ++i) {
    events += (i ? ", " : "") + std::string(R"({"name": "op)") + std::to_string(i) +
              R"(", "ph": "X", "cat": "cpu_op", "ts": )" + std::to_string(10 * i) +
              R"(, "dur": 5, "pid": 1, "tid": 1})";
  }
  const TempTrace t(R"({"traceEvents": [)" + events + "]}");
  auto rows = [&](const std::string& flags) -> size_t {
    const CliRun r = Opscope("report '" + t.path.string() + "' --json " + flags, false);
    EXPECT_EQ(r.exit_code, 0) << flags;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(r.output).get(doc) != simdjson::SUCCESS) return 0;
    simdjson::dom::array a;
    if (doc["key_averages"]["rows"].get_array().get(a) != simdjson::SUCCESS) return 0;
    return a.size();
  };
  EXPECT_EQ(rows(""), 30u);
  EXPECT_EQ(rows("--rows 7"), 7u);
  EXPECT_EQ(rows("--rows -1"), 30u);
  const CliRun text = Opscope("report '" + t.path.string() + "'");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("op19"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("op20"), std::string::npos) << text.output;
}

// NCCL kernels are launched by cudaLaunchKernelExC inside the "nccl:all_reduce" annotation inside
// record_param_comms: their launcher is record_param_comms (the innermost enclosing op, which
// key_averages credits through External id), never the runtime call.
TEST_F(CliTest, CommunicationKernelsBelongToTheEnclosingOp) {
  const CliRun r = Opscope(
      "report '" + Fixture("hta/nccl_parser_config/nccl_data.json.gz") + "' --json --rows -1",
      false);
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.output).get(doc), simdjson::SUCCESS);
  int nccl_kernels = 0;
  for (simdjson::dom::element k : doc["kernels"]["rows"].get_array()) {
    const std::string_view kernel = k["kernel"].get_string().value();
    if (kernel.find("ncclKernel") == std::string_view::npos) continue;
    ++nccl_kernels;
    EXPECT_EQ(k["parent_op"].get_string().value(), "record_param_comms") << kernel;
  }
  EXPECT_GT(nccl_kernels, 0);
  for (simdjson::dom::element op : doc["ops"]["rows"].get_array()) {
    const std::string_view name = op["name"].get_string().value();
    EXPECT_FALSE(name.starts_with("cudaLaunchKernel")) << name << " is a runtime call, not an op";
  }
}

// Errors name the file, and in diff which of the two it is.
TEST_F(CliTest, InputErrorsNameTheFile) {
  const std::string good = Fixture("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  // (A directory is a job's folder to `diff`, so a missing file stands for the unreadable one.)
  CliRun r = Opscope("diff '" + good + "' /nonexistent/b.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("trace B: cannot open /nonexistent/b.json"), std::string::npos)
      << r.output;
  r = Opscope("diff /nonexistent/a.json '" + good + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("trace A (the baseline): cannot open /nonexistent/a.json"),
            std::string::npos)
      << r.output;
  // A file that opens but cannot be read.
  r = Opscope("report /proc/self/mem");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("/proc/self/mem"), std::string::npos) << r.output;
}

TEST_F(CliTest, DemoArgumentsAreChecked) {
  for (const char* args :
       {"--shape 4294967296,4294967296", "--shape ''", "--shape 0,4", "--shape 12", "--shape 1,2,3",
        "--shape 1,x", "--shape 99999999999999999999,1", "--warmup -1", "--iters 0",
        "--iters -3"}) {
    const CliRun r = Opscope(std::string("demo rmsnorm --device cpu ") + args);
    EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("Self CPU"), std::string::npos) << args << ": ran\n" << r.output;
  }
  const CliRun r = Opscope("demo rmsnorm --device cpu --shape 4294967296,4294967296");
  EXPECT_NE(r.output.find("--shape 4294967296,4294967296"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("64-bit"), std::string::npos) << r.output;
}

TEST_F(CliTest, ReportPerfPrintsTheModelAndItsJsonKeys) {
  const std::string trace = Fixture("tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  CliRun r = Opscope("report '" + trace + "' --perf --rows 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* section :
       {"Performance model", "device MI300X", "Ops by category", "Per op and args",
        "Kernel launchers by op and args", "Short kernels", "compute"}) {
    EXPECT_NE(r.output.find(section), std::string::npos) << section << "\n" << r.output;
  }
  r = Opscope("report '" + trace + "' --perf --json --device-spec H100", false);
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.output).get(doc), simdjson::SUCCESS) << r.output.substr(0, 300);
  simdjson::dom::array rows;
  ASSERT_EQ(doc["perf_model"].get_array().get(rows), simdjson::SUCCESS);
  ASSERT_GT(rows.size(), 0u);
  for (const char* key :
       {"name", "category", "input_dims", "dtypes", "count", "gflops", "data_moved_mb",
        "flops_per_byte", "tflops_per_s_mean", "tb_per_s_mean", "kernel_time_us_sum", "bound"}) {
    EXPECT_EQ(rows.at(0)[key].error(), simdjson::SUCCESS) << key;
  }
  EXPECT_EQ(doc["ops_by_category"].get_array().error(), simdjson::SUCCESS);
  std::string_view device;
  ASSERT_EQ(doc["device_spec"]["name"].get_string().get(device), simdjson::SUCCESS);
  EXPECT_EQ(device, "H100");
}

TEST_F(CliTest, ReportPerfRejectsAnUnknownDeviceSpec) {
  const CliRun r = Opscope(
      "report '" + Fixture("tracelens/mi300/Falconsai_nsfw_image_detection__1016002.json.gz") +
      "' --device-spec no_such_gpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no_such_gpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MI355X"), std::string::npos) << "lists the known devices\n" << r.output;
}

// opscope's own simulated NeuronCore, whose critical path is known by construction: the naive
// RMSNorm queues its six device executions faster than the device runs them, so they run back to
// back and every one is on the path; the path's device compute is their total time, with no idle
// gap between them. The roofline uses the simulated device's own peaks.
TEST_F(CliTest, CriticalPathOfTheNeuronDemoRunsThroughEveryDeviceExecution) {
  const fs::path out =
      fs::temp_directory_path() / ("opscope_cli_cp_demo_" + std::to_string(getpid()));
  CliRun r = Opscope("demo rmsnorm --iters 1 --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::path trace;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (e.path().filename() == "trace.json" && e.path().parent_path().filename() == "naive") {
      trace = e.path();
    }
  }
  ASSERT_FALSE(trace.empty()) << "no naive/trace.json under " << out;
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  simdjson::dom::parser trace_parser;
  simdjson::dom::element trace_doc;
  ASSERT_EQ(trace_parser.parse(text.str()).get(trace_doc), simdjson::SUCCESS);
  double kernel_us = 0;
  std::vector<std::pair<double, double>> runs;  // (ts, end) in us
  for (simdjson::dom::element e : trace_doc["traceEvents"].get_array()) {
    std::string_view cat;
    double ts = 0, dur = 0;
    if (e["cat"].get_string().get(cat) || cat != "kernel" || e["ts"].get_double().get(ts) ||
        e["dur"].get_double().get(dur)) {
      continue;
    }
    kernel_us += dur;
    runs.emplace_back(ts, ts + dur);
  }
  ASSERT_EQ(runs.size(), 6u);
  // By construction the executions run back to back; a host descheduled for longer than an
  // execution (a loaded machine) leaves the device waiting, and then the path may cross the host.
  std::sort(runs.begin(), runs.end());
  bool back_to_back = true;
  for (size_t i = 1; i < runs.size(); ++i)
    back_to_back &= runs[i].first <= runs[i - 1].second + 1e-3;
  r = Opscope("report '" + trace.string() + "' --perf --json", false);
  fs::remove_all(out);
  ASSERT_EQ(r.exit_code, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.output).get(doc), simdjson::SUCCESS);
  simdjson::dom::element cp = doc["critical_path"];
  bool ok = false;
  ASSERT_EQ(cp["ok"].get_bool().get(ok), simdjson::SUCCESS);
  ASSERT_TRUE(ok);
  int64_t compute_ns = 0, idle = -1;
  ASSERT_EQ(cp["breakdown"]["device_compute_ns"].get_int64().get(compute_ns), simdjson::SUCCESS);
  ASSERT_EQ(cp["breakdown"]["idle_ns"].get_int64().get(idle), simdjson::SUCCESS);
  const double compute = static_cast<double>(compute_ns) / 1e3;
  std::string_view device;
  ASSERT_EQ(doc["device_spec"]["name"].get_string().get(device), simdjson::SUCCESS);
  EXPECT_EQ(device, "opscope-neuron-trn1");
  EXPECT_LE(compute, kernel_us + 1e-3);
  if (!back_to_back) {
    std::printf("the device waited for the host between executions; path checks skipped\n");
    return;
  }
  EXPECT_NEAR(compute, kernel_us, 1e-3);
  EXPECT_EQ(idle, 0);
  int on_path = 0;
  for (simdjson::dom::element e : cp["events"].get_array()) {
    std::string_view name;
    if (e["name"].get_string().get(name) == simdjson::SUCCESS && name == "nc_exec_running") {
      ++on_path;
    }
  }
  EXPECT_EQ(on_path, 6);
}

}  // namespace
}  // namespace opscope
