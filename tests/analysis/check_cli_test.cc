// `opscope check` as CI runs it: a real regression (the demo run on a slower device
// configuration), a trace against itself, a copy with every duration jittered by a few percent (no
// regression), an unreadable file (exit 2 naming it), the JUnit and Markdown outputs, and the rank
// test on stepped traces (a consistent slowdown is significant; step-to-step noise is not).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <span>
#include <sstream>

#include "opscope/check.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunOpscope;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteText(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Every "dur" of a Chrome trace multiplied by a factor drawn uniformly in [1 - pct, 1 + pct].
std::string Jittered(const std::string& trace, double pct, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> factor(1 - pct / 100, 1 + pct / 100);
  const std::regex dur("\"dur\": *([0-9.]+)");
  std::string out;
  auto last = trace.cbegin();
  for (std::sregex_iterator it(trace.begin(), trace.end(), dur), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    out += "\"dur\": " + std::to_string(std::stod((*it)[1].str()) * factor(rng));
    last = (*it)[0].second;
  }
  out.append(last, trace.cend());
  return out;
}

// A Kineto trace of `steps` ProfilerStep#N windows; each launches one aten::mm whose kernel runs
// `kernel_us` times a per-step factor (1 + slow) * U[1 - jitter, 1 + jitter].
std::string SteppedTrace(int steps, double kernel_us, double slow, double jitter, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(1 - jitter, 1 + jitter);
  std::string ev;
  double t = 0;
  for (int i = 0; i < steps; ++i) {
    const double k = kernel_us * (1 + slow) * noise(rng), step = k + 40;
    const std::string c = std::to_string(i + 1);
    ev += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" + c +
          "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(t) +
          ",\"dur\":" + std::to_string(step) + "},";
    ev += "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":" +
          std::to_string(t + 1) + ",\"dur\":10},";
    ev +=
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
        "\"ts\":" +
        std::to_string(t + 2) + ",\"dur\":5,\"args\":{\"correlation\":" + c + "}},";
    ev += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,\"ts\":" +
          std::to_string(t + 20) + ",\"dur\":" + std::to_string(k) +
          ",\"args\":{\"correlation\":" + c + ",\"device\":0,\"stream\":7}},";
    t += step + 5;
  }
  ev.pop_back();
  return "{\"traceEvents\":[" + ev + "]}";
}

class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("opscope_check_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Q(const fs::path& p) { return "'" + p.string() + "'"; }

  // The naive variant's trace of `opscope demo rmsnorm` (with a device config file when given).
  fs::path Demo(const std::string& name, const std::string& config_text = "") {
    std::string args = "demo rmsnorm --iters 4 --warmup 1 --out " + Q(dir_ / name);
    if (!config_text.empty()) {
      WriteText(dir_ / (name + ".cfg"), config_text);
      args += " --device-config " + Q(dir_ / (name + ".cfg"));
    }
    const CommandResult run = RunOpscope(args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / name)) {
      if (e.path().filename() == "trace.json" && e.path().parent_path().filename() == "naive") {
        return e.path();
      }
    }
    ADD_FAILURE() << "no naive/trace.json under " << dir_ / name;
    return {};
  }

  fs::path dir_;
};

TEST_F(CheckCli, SlowerDeviceConfigurationIsARegression) {
  const fs::path base = Demo("base");
  // Every execution takes longer to launch, and the engines run slower.
  const fs::path slow = Demo("slow", "exec_launch_us = 300\nvector_ghz = 0.5\n");
  const fs::path junit = dir_ / "check.xml", md = dir_ / "check.md";
  const CommandResult run = RunOpscope("check " + Q(base) + " " + Q(slow) + " --junit " + Q(junit) +
                                       " --markdown " + Q(md));
  ASSERT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("REGRESSION"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("no noise estimate"), std::string::npos) << run.output;
  const std::string xml = ReadText(junit);
  EXPECT_NE(xml.find("<testsuite"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure"), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"step\""), std::string::npos) << xml;
  const std::string markdown = ReadText(md);
  EXPECT_NE(markdown.find("| step"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("regression"), std::string::npos) << markdown;

  // The JSON says the same: the device time regressed (the whole trace's span is mostly the
  // host's, which a loaded machine makes vary by more than the threshold: steps are for that).
  const CommandResult json = RunOpscope("check " + Q(base) + " " + Q(slow) + " --json");
  ASSERT_EQ(json.exit_code, 1) << json.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.output).get(doc), simdjson::SUCCESS) << json.output;
  EXPECT_EQ(std::string_view(doc["verdict"].get_string().value()), "regression");
  EXPECT_FALSE(doc["noise_estimate"].get_bool().value());
  bool device_regressed = false;
  const simdjson::dom::array metrics = doc["metrics"].get_array().value();
  for (simdjson::dom::element m : metrics) {
    if (std::string_view(m["metric"].get_string().value()) == "device") {
      device_regressed = std::string_view(m["outcome"].get_string().value()) == "regression";
    }
  }
  EXPECT_TRUE(device_regressed) << json.output;
  EXPECT_GT(doc["moved"].get_array().size(), 0u);

  // A loose enough threshold lets the same pair pass.
  EXPECT_EQ(RunOpscope("check " + Q(base) + " " + Q(slow) + " --max-regression 500").exit_code, 0);
}

TEST_F(CheckCli, ATraceAgainstItselfAndAJitteredCopyPass) {
  const fs::path base = Demo("base");
  const CommandResult self = RunOpscope("check " + Q(base) + " " + Q(base));
  EXPECT_EQ(self.exit_code, 0) << self.output;
  EXPECT_NE(self.output.find("PASS"), std::string::npos) << self.output;
  const fs::path jittered = dir_ / "jittered.json";
  WriteText(jittered, Jittered(ReadText(base), 3, 7));
  const CommandResult run = RunOpscope("check " + Q(base) + " " + Q(jittered));
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST_F(CheckCli, AnUnreadableSideIsExitTwoNamingTheFile) {
  const fs::path base = Demo("base");
  const fs::path bad = dir_ / "bad.json";
  WriteText(bad, "{\"traceEvents\": [ {\"ph\": \"X\", ");
  const fs::path junit = dir_ / "check.xml";
  const CommandResult run = RunOpscope("check " + Q(base) + " " + Q(bad) + " --junit " + Q(junit),
                                       testing::Stderr::kMerged);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find(bad.string()), std::string::npos) << run.output;
  EXPECT_NE(ReadText(junit).find("errors=\"1\""), std::string::npos);
  EXPECT_EQ(RunOpscope("check " + Q(base) + " " + Q(dir_ / "missing.json")).exit_code, 2);
  EXPECT_EQ(RunOpscope("check " + Q(base)).exit_code, 2);  // a command line it cannot use
  EXPECT_EQ(RunOpscope("check " + Q(base) + " " + Q(base) + " --metric op:no_such_op").exit_code,
            2);
}

TEST_F(CheckCli, StepsAreTestedForSignificance) {
  const fs::path a = dir_ / "a.json", noisy = dir_ / "noisy.json", slow = dir_ / "slow.json";
  WriteText(a, SteppedTrace(12, 1000, 0, 0.04, 1));
  WriteText(noisy, SteppedTrace(12, 1000, 0, 0.04, 2));
  WriteText(slow, SteppedTrace(12, 1000, 0.2, 0.04, 3));
  const CommandResult pass = RunOpscope("check " + Q(a) + " " + Q(noisy) + " --json");
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  const CommandResult fail = RunOpscope("check " + Q(a) + " " + Q(slow) + " --json");
  ASSERT_EQ(fail.exit_code, 1) << fail.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(fail.output).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["noise_estimate"].get_bool().value());
  EXPECT_EQ(doc["steps_baseline"].get_int64().value(), 12);
  // Skipping warm-up steps leaves fewer; --min-steps refuses too few.
  EXPECT_EQ(
      RunOpscope("check " + Q(a) + " " + Q(slow) + " --skip-steps 10 --min-steps 3").exit_code, 2);
  // A rise above the threshold on too few steps for the test to reach alpha is decided by the
  // threshold alone, and says so.
  const fs::path a2 = dir_ / "a2.json", slow2 = dir_ / "slow2.json";
  WriteText(a2, SteppedTrace(2, 1000, 0, 0.01, 4));
  WriteText(slow2, SteppedTrace(2, 1000, 0.3, 0.01, 5));
  EXPECT_EQ(RunOpscope("check " + Q(a2) + " " + Q(slow2)).exit_code, 1);
}

// Two runs of the simulated 4-rank job, the second with a straggler: the slowest rank's step
// time regresses on 8 steps per side with a significant rank test; the job against itself passes.
TEST_F(CheckCli, JobWithAStragglerRegressesSignificantly) {
  const std::string demo = "demo allreduce --ranks 4 --steps 8 --out ";
  ASSERT_EQ(RunOpscope(demo + Q(dir_ / "base")).exit_code, 0);
  ASSERT_EQ(RunOpscope(demo + Q(dir_ / "slow") + " --straggler 2 --delay-us 300").exit_code, 0);
  const CommandResult run =
      RunOpscope("check " + Q(dir_ / "base") + " " + Q(dir_ / "slow") + " --json");
  ASSERT_EQ(run.exit_code, 1) << run.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.output).get(doc), simdjson::SUCCESS) << run.output;
  EXPECT_TRUE(doc["noise_estimate"].get_bool().value());
  simdjson::dom::element step = doc["metrics"].at(0);
  EXPECT_EQ(std::string_view(step["metric"].get_string().value()), "step");
  EXPECT_EQ(std::string_view(step["outcome"].get_string().value()), "regression");
  EXPECT_LT(step["p_value"].get_double().value(), 0.05);
  EXPECT_EQ(RunOpscope("check " + Q(dir_ / "base") + " " + Q(dir_ / "base")).exit_code, 0);
}

TEST(MannWhitney, ExactTailMatchesTheCountedDistribution) {
  const double lo[] = {1, 2, 3}, hi[] = {4, 5, 6};
  const RankTest t = MannWhitneyGreater(std::span<const double>(lo), std::span<const double>(hi));
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 9);
  EXPECT_NEAR(t.p_value, 1.0 / 20, 1e-12);  // one ordering of C(6, 3) = 20 puts all three on top
  EXPECT_NEAR(t.min_p_value, 1.0 / 20, 1e-12);
  const RankTest same =
      MannWhitneyGreater(std::span<const double>(lo), std::span<const double>(lo));
  EXPECT_GT(same.p_value, 0.5);
  // Large samples use the normal approximation.
  std::vector<double> x(40), y(40);
  for (int i = 0; i < 40; ++i) x[i] = i, y[i] = i + 20;
  const RankTest big = MannWhitneyGreater(x, y);
  EXPECT_FALSE(big.exact);
  EXPECT_LT(big.p_value, 0.001);
}

}  // namespace
}  // namespace opscope
