// `opscope demo allreduce` as ground truth: a straggler whose compute is D us longer every step
// makes each of the other N-1 ranks wait D at every all_reduce, so `opscope report` on the demo's
// traces must name it as the top straggler with (N-1) x D of waiting caused per step (within 5 %).
#include "tools/demo_allreduce.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

std::string ReportJson(const std::string& dir, int* exit_code) {
  testing::CommandResult r = testing::RunOpscope("report '" + dir + "' --json");
  *exit_code = r.exit_code;
  return std::move(r.output);
}

class DemoAllReduce : public ::testing::TestWithParam<std::tuple<int, int, double>> {};

TEST_P(DemoAllReduce, ReportNamesTheStragglerAndTheWaitItCauses) {
  const auto [ranks, straggler, delay_us] = GetParam();
  const fs::path out =
      fs::temp_directory_path() /
      ("opscope_demo_allreduce_" + std::to_string(::getpid()) + "_" + std::to_string(ranks));
  fs::remove_all(out);
  tools::AllReduceDemoOptions o;
  o.ranks = ranks;
  o.steps = 3;
  o.straggler = straggler;
  o.delay_us = delay_us;
  o.m = 64;
  o.k = 128;
  o.n = 64;
  o.out_dir = out.string();
  const tools::AllReduceDemoResult result = tools::RunAllReduceDemo(o);
  ASSERT_EQ(result.trace_paths.size(), static_cast<size_t>(ranks));
  EXPECT_LT(result.max_abs_error, 1e-3);  // the ring really summed the gradients
  int exit_code = -1;
  const std::string json = ReportJson(out.string(), &exit_code);
  ASSERT_EQ(exit_code, 0) << json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 300);
  EXPECT_EQ(std::string(doc["device_type"].get_string().value()), "NEURON");
  EXPECT_EQ(doc["world_size"].get_int64().value(), ranks);
  EXPECT_EQ(doc["steps"].get_int64().value(), 3);
  const auto top = doc["stragglers"].at(0);
  EXPECT_EQ(top["rank"].get_int64().value(), straggler);
  EXPECT_EQ(top["times_last"].get_int64().value(), 3);
  const double expected_us = (ranks - 1) * delay_us;
  EXPECT_NEAR(top["wait_caused_per_step_us"].get_double().value(), expected_us, 0.05 * expected_us);
  // Ranks x steps of sync wait: every other rank waits D in every step, the straggler ~0.
  ASSERT_EQ(doc["step_numbers"].get_array().size(), 3u);
  ASSERT_EQ(doc["step_wait"].get_array().size(), static_cast<size_t>(ranks));
  for (const auto row : doc["step_wait"].get_array()) {
    const int64_t rank = row["rank"].get_int64().value();
    ASSERT_EQ(row["wait_us"].get_array().size(), 3u);
    for (const auto wait : row["wait_us"].get_array()) {
      const double us = wait.get_double().value();
      if (rank == straggler) {
        EXPECT_LT(us, 0.05 * delay_us) << "rank " << rank;
      } else {
        EXPECT_NEAR(us, delay_us, 0.05 * delay_us) << "rank " << rank;
      }
    }
  }
  const std::string finding(doc["findings"].at(0).get_string().value());
  EXPECT_NE(finding.find("rank " + std::to_string(straggler) + " is the top straggler"),
            std::string::npos)
      << finding;
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Ranks, DemoAllReduce,
                         ::testing::Values(std::make_tuple(4, 2, 300.0),
                                           std::make_tuple(7, 0, 75.0)));

TEST(DemoAllReduceOptions, BadOptionsAreRefused) {
  tools::AllReduceDemoOptions o;
  o.ranks = 4;
  o.straggler = 4;
  EXPECT_THROW(tools::RunAllReduceDemo(o), std::invalid_argument);
  o.straggler = 1;
  o.delay_us = -1;
  EXPECT_THROW(tools::RunAllReduceDemo(o), std::invalid_argument);
  o.delay_us = 0;
  o.ranks = 0;
  EXPECT_THROW(tools::RunAllReduceDemo(o), std::invalid_argument);
  o.ranks = 4;
  o.steps = 2'000'000'000;  // would run for days: refused, naming the limit
  try {
    tools::RunAllReduceDemo(o);
    ADD_FAILURE() << "--steps 2000000000 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--steps must be 1 to 25000 with 4 ranks"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace opscope
