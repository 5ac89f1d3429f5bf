// `opscope report` on folders of rank traces as a user runs it: the job's JSON names, a corrupt
// rank file (reported with file and byte offset, the rest analysed, the report partial), two files
// claiming one rank, and a single trace keeping today's report byte for byte.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/analysis/test_support.h"
#include "tests/job/rank_set.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::RunOpscope;
using testing::Stderr;

class JobCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(set_.ok());
    dir_ = fs::temp_directory_path() /
           ("opscope_job_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Q(const fs::path& p) { return "'" + p.string() + "'"; }

  testing::NcclRankSet set_;
  fs::path dir_;
};

TEST_F(JobCli, JsonCarriesTheIssuesNames) {
  for (int r = 0; r < 2; ++r) set_.Write(dir_, {.rank = r}, 2);
  const CommandResult run = RunOpscope("report " + Q(dir_) + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(run.output).get(doc), simdjson::SUCCESS) << run.output.substr(0, 300);
  for (const char* key :
       {"rank", "file", "busy_us", "idle_us", "computation_us", "communication_us",
        "exposed_communication_us", "overlap_pct", "clock_offset_us"}) {
    EXPECT_EQ(doc["ranks"].at(0)[key].error(), simdjson::SUCCESS) << key;
  }
  for (const char* key : {"group", "seq", "name", "bytes", "ranks", "skew_us", "transfer_us",
                          "algbw_gbps", "busbw_gbps", "last_rank"}) {
    EXPECT_EQ(doc["collectives"].at(0)[key].error(), simdjson::SUCCESS) << key;
  }
  for (const char* key : {"rank", "times_last", "wait_caused_us"}) {
    EXPECT_EQ(doc["stragglers"].at(0)[key].error(), simdjson::SUCCESS) << key;
  }
  EXPECT_EQ(doc["partial"].get_bool().value(), false);
  // HTA's overlap on the fixture: a property of the trace, the same on every generated rank.
  EXPECT_EQ(doc["ranks"].at(0)["overlap_pct"].get_double().value(),
            doc["ranks"].at(1)["overlap_pct"].get_double().value());
}

TEST_F(JobCli, CorruptRankFileIsReportedAndTheRestAnalysed) {
  for (int r = 0; r < 3; ++r) set_.Write(dir_, {.rank = r}, 3);
  const fs::path bad = dir_ / "rank1.json";
  const auto size = fs::file_size(bad);
  fs::resize_file(bad, size / 2);
  const CommandResult text = RunOpscope("report " + Q(dir_), Stderr::kMerged);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find(bad.string() + ": byte "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Partial report"), std::string::npos) << text.output;
  const CommandResult json = RunOpscope("report " + Q(dir_) + " --json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.output).get(doc), simdjson::SUCCESS);
  EXPECT_TRUE(doc["partial"].get_bool().value());
  EXPECT_EQ(std::string(doc["errors"].at(0)["file"].get_string().value()), bad.string());
  EXPECT_GT(doc["errors"].at(0)["offset"].get_uint64().value(), 0u);
  EXPECT_EQ(doc["ranks"].get_array().size(), 2u);
}

TEST_F(JobCli, TwoFilesClaimingOneRankIsAnError) {
  set_.Write(dir_, {.rank = 0}, 2);
  set_.Write(dir_, {.rank = 0, .file_name = "copy.json"}, 2);
  const CommandResult run = RunOpscope("report " + Q(dir_), Stderr::kMerged);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.output.find("rank 0 is claimed by two traces"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("copy.json"), std::string::npos);
  EXPECT_NE(run.output.find("rank0.json"), std::string::npos);
}

TEST_F(JobCli, SingleTraceKeepsTodaysReport) {
  const fs::path file = testing::FixturesDir() / "traces/hta/nccl_parser_config/nccl_data.json.gz";
  fs::copy_file(file, dir_ / "only.json.gz");
  for (const char* flags : {"", " --json"}) {
    const CommandResult direct = RunOpscope("report " + Q(dir_ / "only.json.gz") + flags);
    const CommandResult folder = RunOpscope("report " + Q(dir_) + flags);
    ASSERT_EQ(direct.exit_code, 0);
    EXPECT_EQ(direct.output, folder.output);
    EXPECT_NE(direct.output.find(flags[0] ? "\"key_averages\"" : "Self CUDA"), std::string::npos);
  }
}

TEST_F(JobCli, RankPrintsThatRanksKeyAverages) {
  for (int r = 0; r < 2; ++r) set_.Write(dir_, {.rank = r}, 2);
  const CommandResult run = RunOpscope("report " + Q(dir_) + " --rank 1 --rows 5");
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.output.find("Rank 1: " + (dir_ / "rank1.json").string()), std::string::npos);
  EXPECT_NE(run.output.find("Self CUDA"), std::string::npos) << run.output;
  EXPECT_EQ(RunOpscope("report " + Q(dir_) + " --rank 7").exit_code, 1);
}

// Two jobs compared: B's rank 1 arrives 80 us late at one collective and B has a third rank. The
// diff pairs ranks and collectives and shows the injected lateness as that instance's skew.
TEST_F(JobCli, DiffComparesTwoJobsRankByRankAndCollectiveByCollective) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  constexpr int64_t kLateNs = 80'000;
  for (int r = 0; r < 2; ++r) set_.Write(a, {.rank = r}, 2);
  for (int r = 0; r < 3; ++r) {
    testing::RankSpec spec{.rank = r};
    if (r == 1) spec.late_ns = {{2, kLateNs}};
    set_.Write(b, spec, 3);
  }
  const CommandResult json = RunOpscope("diff " + Q(a) + " " + Q(b) + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.output).get(doc), simdjson::SUCCESS) << json.output.substr(0, 300);
  simdjson::dom::array ranks = doc["ranks"].get_array().value();
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks.at(2)["rank"].get_int64().value(), 2);
  EXPECT_TRUE(ranks.at(2)["a"].is_null());
  EXPECT_GT(ranks.at(2)["b"]["busy_us"].get_double().value(), 0);
  // Identical copies of the fixture: the same rank has the same timeline in both jobs.
  EXPECT_EQ(ranks.at(0)["a"]["computation_us"].get_double().value(),
            ranks.at(0)["b"]["computation_us"].get_double().value());
  // Every collective of A is matched in B; the late one comes first (largest change).
  EXPECT_EQ(doc["collectives"].get_array().size(), set_.collectives().size());
  simdjson::dom::element first = doc["collectives"].at(0);
  EXPECT_NEAR(first["skew_us_a"].get_double().value(), 0, 0.01);
  EXPECT_NEAR(first["skew_us_b"].get_double().value(), kLateNs / 1e3, 0.01);
  EXPECT_EQ(first["last_rank_a"].get_int64().value(), -1);
  EXPECT_EQ(first["last_rank_b"].get_int64().value(), 1);
  simdjson::dom::element top_b = doc["stragglers"]["b"].at(0);
  EXPECT_EQ(top_b["rank"].get_int64().value(), 1);
  EXPECT_EQ(top_b["times_last"].get_int64().value(), 1);
  // Ranks 0 and 2 each waited the 80 us.
  EXPECT_NEAR(top_b["wait_caused_us"].get_double().value(), 2 * kLateNs / 1e3, 0.01);

  const CommandResult text = RunOpscope("diff " + Q(a) + " " + Q(b));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("Jobs: 2 ranks"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Top straggler: none -> rank 1 (160.000us caused over 1 collectives)"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("only in job B"), std::string::npos) << text.output;
  // A file against a folder is a job diff too; a missing folder is an error.
  EXPECT_EQ(RunOpscope("diff " + Q(a / "rank0.json") + " " + Q(b) + " --json").exit_code, 0);
  EXPECT_EQ(RunOpscope("diff " + Q(dir_ / "none") + " " + Q(b)).exit_code, 1);
}

// `opscope explore DIR` on a folder of rank traces opens them as one job (the job page), and on
// a folder of traces without ranks opens them one by one as before.
TEST_F(JobCli, ExploreOpensAFolderOfRanksAsOneJob) {
  for (int r = 0; r < 2; ++r) set_.Write(dir_, {.rank = r}, 2);
  const CommandResult job = RunOpscope("explore " + Q(dir_) + " --port 0 --exit-after 1");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("opened a job: 2 ranks of 2"), std::string::npos) << job.output;
  EXPECT_NE(job.output.find("/job.html"), std::string::npos) << job.output;
  set_.Write(dir_, {.rank = 1, .file_name = "again.json"}, 2);
  const CommandResult two = RunOpscope("explore " + Q(dir_) + " --port 0 --exit-after 1");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("not one job (rank 1 is claimed by two traces"), std::string::npos)
      << two.output;
  EXPECT_NE(two.output.find("serving 3 traces"), std::string::npos) << two.output;
}

}  // namespace
}  // namespace opscope
