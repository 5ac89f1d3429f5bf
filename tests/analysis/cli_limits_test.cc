// The CLI's limits end to end (issue 35): no write fails silently, no parameter exhausts the
// machine, no input blocks or grows without bound. Each case runs `opscope` as a user would.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;

std::string Trace() {
  return (testing::FixturesDir() / "traces" / "hta" / "cpu_only" /
          "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
      .string();
}

class CliLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(testing::OpscopeBinary())) << testing::OpscopeBinary() << " not built";
    ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
    ASSERT_TRUE(fs::exists(Trace())) << Trace();
  }
};

// A full disk under stdout is an error with exit code 1 and a message, for every command that
// prints a result; the same commands succeed when stdout can be written.
TEST_F(CliLimitsTest, FailedWritesToStdoutAreErrors) {
  const std::string trace = "'" + Trace() + "'";
  for (const std::string& command : std::vector<std::string>{
           "report " + trace + " --json", "report " + trace, "diff " + trace + " " + trace,
           "diff " + trace + " " + trace + " --json", "model add --shape 64,64 --json",
           "model rmsnorm --shape 64,64", "demo rmsnorm --shape 4,64 --iters 1 --warmup 0 --json",
           "report --help"}) {
    const CommandResult ok =
        testing::RunCommand(testing::OpscopeCommand() + " " + command + " > /dev/null 2>&1");
    EXPECT_EQ(ok.exit_code, 0) << command;
    const CommandResult full =
        testing::RunCommand(testing::OpscopeCommand() + " " + command + " 2>&1 > /dev/full");
    EXPECT_EQ(full.exit_code, 1) << command << "\n" << full.output;
    EXPECT_NE(full.output.find("writing the output to stdout failed: No space left on device"),
              std::string::npos)
        << command << "\n"
        << full.output;
  }
}

}  // namespace
}  // namespace opscope
