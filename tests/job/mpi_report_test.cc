// `mpirun --oversubscribe -n 3 opscope report DIR --json` against one process: the same bytes.
// The rank sets are a simulated job with a straggler (the allreduce demo) and ranks generated from
// the real NCCL fixture with shifted clocks and late arrivals. A build without MPI must say so
// when an MPI launcher starts it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "opscope/job_mpi.h"
#include "tests/analysis/test_support.h"
#include "tests/job/rank_set.h"
#include "tools/demo_allreduce.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::RunCommand;

std::string Opscope() { return testing::OpscopeCommand(); }

// mpirun as the tests need it: more processes than cores, and as root inside containers.
std::string MpiRun(int processes) {
  return std::string(OPSCOPE_MPIEXEC) + " --oversubscribe" +
         (::geteuid() == 0 ? " --allow-run-as-root" : "") + " -n " + std::to_string(processes) +
         " ";
}

class MpiReport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opscope_mpi_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One process's and three processes' JSON reports of `job`; both must succeed.
  void ExpectSameReport(const fs::path& job) {
    const std::string args = " report '" + job.string() + "' --json 2>/dev/null";
    const CommandResult one = RunCommand(Opscope() + args);
    ASSERT_EQ(one.exit_code, 0) << one.output;
    ASSERT_NE(one.output.find("\"collectives\""), std::string::npos);
    const CommandResult three = RunCommand(MpiRun(3) + Opscope() + args);
    ASSERT_EQ(three.exit_code, 0) << three.output;
    EXPECT_EQ(one.output, three.output);
  }

  fs::path dir_;
};

TEST_F(MpiReport, ThreeProcessesGiveTheSameBytesAsOne) {
  if (!MpiBuilt()) GTEST_SKIP() << "built without MPI (the next test covers that build)";
  tools::AllReduceDemoOptions demo;
  demo.ranks = 7;
  demo.steps = 3;
  demo.straggler = 5;
  demo.delay_us = 120;
  demo.m = demo.n = 32;
  demo.k = 64;
  demo.out_dir = (dir_ / "demo").string();
  tools::RunAllReduceDemo(demo);
  ExpectSameReport(dir_ / "demo");

  testing::NcclRankSet set;
  ASSERT_TRUE(set.ok());
  fs::create_directories(dir_ / "nccl");
  for (int r = 0; r < 4; ++r) {
    testing::RankSpec spec;
    spec.rank = r;
    spec.offset_ns = r * 1'500'000;
    spec.drift = r * 5e-6;
    if (r == 2) spec.late_ns = {{4, 90'000}, {9, 60'000}};
    set.Write(dir_ / "nccl", spec, 4);
  }
  ExpectSameReport(dir_ / "nccl");
}

// A rank file cut in half: whichever process reads it, the MPI run prints the file's error with
// its byte offset, analyses the other ranks and says the report is partial, exactly as one
// process does (the error and its offset travel in the rank's summary).
TEST_F(MpiReport, CorruptRankFileIsReportedAsOneProcessReportsIt) {
  if (!MpiBuilt()) GTEST_SKIP() << "built without MPI";
  testing::NcclRankSet set;
  ASSERT_TRUE(set.ok());
  const fs::path job = dir_ / "job";
  fs::create_directories(job);
  for (int r = 0; r < 4; ++r) set.Write(job, {.rank = r}, 4);
  const fs::path bad = job / "rank2.json";
  fs::resize_file(bad, fs::file_size(bad) / 2);
  const std::string report = " report '" + job.string() + "'";
  const CommandResult one = RunCommand(Opscope() + report + " --json 2>/dev/null");
  const CommandResult three = RunCommand(MpiRun(3) + Opscope() + report + " --json 2>/dev/null");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_EQ(one.output, three.output);
  EXPECT_NE(three.output.find("\"partial\":true"), std::string::npos) << three.output;
  EXPECT_NE(three.output.find("\"errors\":[{\"file\":\"" + bad.string() + "\""), std::string::npos);
  const CommandResult text = RunCommand(MpiRun(3) + Opscope() + report + " 2>&1");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find(bad.string() + ": byte "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("the report is partial"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Partial report"), std::string::npos) << text.output;
  for (const char* rank : {"rank0.json", "rank1.json", "rank3.json"}) {
    EXPECT_NE(text.output.find(rank), std::string::npos) << rank << " is analysed";
  }
}

// Without OpenMPI's OMPI_COMM_WORLD_LOCAL_SIZE (as under launchers that do not set it) a process
// cannot choose its share before MPI_Init: it starts MPI first and process 0 hands the files out.
// Same bytes.
TEST_F(MpiReport, WithoutTheLaunchersRankInTheEnvironmentFilesAreHandedOut) {
  if (!MpiBuilt()) GTEST_SKIP() << "built without MPI";
  testing::NcclRankSet set;
  ASSERT_TRUE(set.ok());
  for (int r = 0; r < 4; ++r) set.Write(dir_, {.rank = r, .offset_ns = r * 700'000}, 4);
  const std::string args = " report '" + dir_.string() + "' --json 2>/dev/null";
  const CommandResult one = RunCommand(Opscope() + args);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const CommandResult three =
      RunCommand(MpiRun(3) + "env -u OMPI_COMM_WORLD_LOCAL_SIZE " + Opscope() + args);
  ASSERT_EQ(three.exit_code, 0) << three.output;
  EXPECT_EQ(one.output, three.output);
}

// A process imports the share its environment's rank gives it while MPI_Init runs; when MPI then
// says it is another process, the job stops with both ranks named instead of a wrong report.
TEST_F(MpiReport, EnvironmentRankThatMpiContradictsStopsTheJob) {
  if (!MpiBuilt()) GTEST_SKIP() << "built without MPI";
  testing::NcclRankSet set;
  ASSERT_TRUE(set.ok());
  for (int r = 0; r < 2; ++r) set.Write(dir_, {.rank = r}, 2);
  const CommandResult run = RunCommand(MpiRun(2) + "env OMPI_COMM_WORLD_RANK=0 " + Opscope() +
                                       " report '" + dir_.string() + "' --json 2>&1");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("MPI says this is process 1 of 2, but the launcher's environment"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("\"collectives\""), std::string::npos) << "no report";
}

TEST_F(MpiReport, ShareIsBalancedBySize) {
  std::vector<RankFile> files;
  for (int i = 0; i < 10; ++i) files.push_back({"f" + std::to_string(i), 100u + i * 10u, i});
  std::vector<int> seen(10, 0);
  std::vector<uint64_t> load;
  for (int p = 0; p < 3; ++p) {
    uint64_t bytes = 0;
    for (const RankFile& f : ShareOf(files, p, 3)) {
      seen[f.name_rank] += 1;
      bytes += f.bytes;
    }
    load.push_back(bytes);
  }
  EXPECT_EQ(seen, std::vector<int>(10, 1));  // every file exactly once
  const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*hi - *lo, 190u);  // within the largest file of each other
}

TEST_F(MpiReport, ABuildWithoutMpiSaysSo) {
  if (MpiBuilt()) GTEST_SKIP() << "built with MPI";
  // What an MPI launcher puts in the environment of each process it starts.
  const CommandResult run = RunCommand("OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0 " +
                                       Opscope() + " report '" + dir_.string() + "' 2>&1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("built without MPI"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace opscope
