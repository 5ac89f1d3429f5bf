// The CLI's limits end to end (issue 35): no write fails silently, no parameter exhausts the
// machine, no input blocks or grows without bound. Each case runs `opscope` as a user would.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;

// `opscope ARGS` with stderr merged, stopped after 60 s (exit code 124) should it wait forever.
CommandResult Opscope(const std::string& args) {
  return testing::RunCommand("timeout 60 " + testing::OpscopeCommand() + " " + args + " 2>&1");
}

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

// The largest peak RSS of the children this process has waited for, in KiB.
long ChildrenPeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss;
}

// --threads beyond what the work can use runs on at most opscope::kMaxThreads threads, with the
// same report, and per-thread state that does not grow with the count's square: 3000 threads on
// a 9.7 MB trace stay within a few times one thread's memory (before the cap, 400 threads took
// 137 MB against 14 MB for one, and 3000 threads of a 0.4 MB trace 6.8 GB). A negative count or
// one that is not a number is refused, saying what is expected.
TEST_F(CliLimitsTest, ThreadCountsAreCappedAndChecked) {
  const std::string trace = "'" +
                            (testing::FixturesDir() / "traces" / "tracelens" / "mi300" /
                             "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
                                .string() +
                            "'";
  const CommandResult one = testing::RunOpscope("report " + trace + " --json --threads 1");
  ASSERT_EQ(one.exit_code, 0);
  for (const char* threads : {"3000", "100000", "99999999999999999999999"}) {
    const CommandResult many =
        testing::RunOpscope("report " + trace + " --json --threads " + threads);
    EXPECT_EQ(many.exit_code, 0) << threads;
    EXPECT_TRUE(many.output == one.output) << threads;
  }
  if (!testing::kSanitized) {
    EXPECT_LT(ChildrenPeakRssKib(), 200 * 1024);
  }
  for (const char* threads : {"-1", "x", "1e3", ""}) {
    const CommandResult bad = Opscope("report " + trace + " --threads '" + threads + "'");
    EXPECT_NE(bad.exit_code, 0) << threads;
    EXPECT_NE(bad.output.find("--threads: expected 0 (the cores available) or a count of threads "
                              "(at most 256 are used), got '" +
                              std::string(threads) + "'"),
              std::string::npos)
        << bad.output;
  }
}

// Small inputs (--device-spec, --graph, --device-config) are read under their 1 MiB limit whatever
// the path names, and a named pipe is refused at once, not waited on (`timeout` turns a wait into
// exit code 124).
TEST_F(CliLimitsTest, SmallInputsAreBoundedAndNeverBlock) {
  const std::string trace = "'" + Trace() + "'";
  CommandResult r = Opscope("report " + trace + " --device-spec /dev/zero");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("device spec '/dev/zero' is larger than 1048576 bytes"),
            std::string::npos)
      << r.output;
  const fs::path fifo =
      fs::temp_directory_path() / ("opscope_cli_fifo_" + std::to_string(getpid()));
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = Opscope("model --graph '" + fifo.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("graph file '" + fifo.string() + "' is a named pipe"), std::string::npos)
      << r.output;
  r = Opscope("model add --shape 4,4 --device-config '" + fifo.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is a named pipe"), std::string::npos) << r.output;
  r = Opscope("report " + trace + " --device-spec '" + fifo.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is a named pipe"), std::string::npos) << r.output;
  // A trace from a pipe nobody writes to: an error after a few seconds, for diff as for report.
  for (const std::string& command :
       {"diff " + trace + " '" + fifo.string() + "'", "report '" + fifo.string() + "'"}) {
    r = Opscope(command);
    EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("cannot open " + fifo.string() +
                            ": a named pipe that no program wrote to within 5 s"),
              std::string::npos)
        << r.output;
  }
  fs::remove(fifo);
  // A pipe with a writer is read as the stream it is.
  r = testing::RunCommand("bash -c \"" + testing::OpscopeCommand() + " diff " + trace + " <(zcat " +
                          trace + ") --json\" 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// `demo rmsnorm` refuses a shape that cannot fit this process's memory before allocating (under a
// 1 GB address-space limit here; it was a bare std::bad_alloc, or the OOM killer without one), and
// an --iters whose trace events would grow without bound.
TEST_F(CliLimitsTest, DemoSizesThatCannotFitAreRefused) {
  CommandResult r;
  if (!testing::kSanitized) {
    r = testing::RunCommand("ulimit -v 1000000; " + testing::OpscopeCommand() +
                            " demo rmsnorm --shape 8192,8192 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("--shape 8192,8192 does not fit: the demo holds 6 copies of the [8192, "
                            "8192] f32 tensor x (256.0 MiB each"),
              std::string::npos)
        << r.output;
  }
  r = Opscope("demo rmsnorm --iters 2147483647");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--iters: Value 2147483647 not in range 1 to 1000"), std::string::npos)
      << r.output;
}

// `demo allreduce --straggler -1` is refused (it was taken as "no straggler"), and a trace folder
// that cannot be made reports why (a file in the way), not the write's ENOENT.
TEST_F(CliLimitsTest, DemoArgumentsAndFoldersSayWhatIsWrong) {
  CommandResult r = Opscope("demo allreduce --ranks 2 --steps 1 --straggler -1");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--straggler: expected a rank, 0 or more, got '-1'"), std::string::npos)
      << r.output;
  const fs::path file =
      fs::temp_directory_path() / ("opscope_cli_file_" + std::to_string(getpid()));
  { std::ofstream(file) << "x"; }
  for (const char* demo : {"allreduce --ranks 2 --steps 1", "rmsnorm --shape 4,64 --iters 1"}) {
    r = Opscope(std::string("demo ") + demo + " --out '" + (file / "out").string() + "'");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("cannot create trace directory '" + (file / "out").string()),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("Not a directory"), std::string::npos) << r.output;
  }
  fs::remove(file);
}

}  // namespace
}  // namespace opscope
