// The job analyses on rank sets generated from the real NCCL fixture: shifted and drifting
// clocks, late arrivals, missing ranks. Every expected figure is computed here from the fixture's
// own numbers and the injected changes (skew = last start - first start, sync wait = last start -
// own start, transfer = earliest end - last start, bus bandwidth with NCCL's factors).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "tests/job/rank_set.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using testing::NcclRankSet;
using testing::RankSpec;

class JobGroundTruth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { set_ = new NcclRankSet(); }
  static void TearDownTestSuite() { delete set_; }
  void SetUp() override {
    ASSERT_TRUE(set_->ok()) << "the NCCL fixture could not be read";
    dir_ = fs::temp_directory_path() /
           ("opscope_job_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobReport Analyze(const std::vector<RankSpec>& specs, int world_size, JobOptions options = {}) {
    std::vector<RankSummary> summaries;
    for (const RankSpec& spec : specs) {
      const fs::path path = set_->Write(dir_, spec, world_size);
      RankFile file{path.string(), fs::file_size(path), RankFromPath(path.filename().string())};
      summaries.push_back(LoadRankSummary(file));
    }
    return AnalyzeJob(std::move(summaries), options);
  }

  static NcclRankSet* set_;
  fs::path dir_;
};
NcclRankSet* JobGroundTruth::set_ = nullptr;

// The index of the first allreduce at or after `from` (long enough to arrive late in).
size_t AllReduceAt(const NcclRankSet& set, size_t from) {
  while (set.collectives()[from].collective != "allreduce") ++from;
  return from;
}

TEST_F(JobGroundTruth, ClocksLateArrivalsAndStragglers) {
  const auto& fixture = set_->collectives();
  const size_t a = AllReduceAt(*set_, 2), b = AllReduceAt(*set_, a + 1),
               c = AllReduceAt(*set_, b + 1), d = AllReduceAt(*set_, c + 1);
  std::vector<RankSpec> specs(4);
  for (int r = 0; r < 4; ++r) specs[r].rank = r;
  specs[1].offset_ns = 2'500'000;   // 2.5 ms ahead
  specs[2].offset_ns = -7'000'000;  // 7 ms behind, drifting 30 ppm
  specs[2].drift = 30e-6;
  specs[3].offset_ns = 40'000'000'000;  // another host: 40 s off, drifting -15 ppm
  specs[3].drift = -15e-6;
  specs[2].late_ns = {{a, 150'000}, {b, 150'000}, {c, 150'000}};
  specs[3].late_ns = {{d, 40'000}};
  specs[1].late_ns = {{c, 20'000}};  // two late ranks at c: rank 2 is last, rank 1 waits less
  const JobReport job = Analyze(specs, 4);
  ASSERT_TRUE(job.error.empty()) << job.error;
  EXPECT_TRUE(job.warnings.empty());
  ASSERT_EQ(job.ranks.size(), 4u);
  EXPECT_EQ(job.reference_rank, 0);
  for (int r = 1; r < 4; ++r) {
    // Offsets are stated at the first collective's end, where the generator states them.
    EXPECT_NEAR(job.ranks[r].clock_offset_ns, static_cast<double>(specs[r].offset_ns), 5) << r;
    EXPECT_NEAR(job.ranks[r].clock_drift_ppm, specs[r].drift * 1e6, 0.01) << r;
  }
  ASSERT_EQ(job.collectives.size(), fixture.size());
  for (size_t k = 0; k < fixture.size(); ++k) {
    const CollectiveInstance& in = job.collectives[k];
    ASSERT_EQ(in.group, "0");
    ASSERT_EQ(in.seq, static_cast<int64_t>(k));
    std::vector<int64_t> late(4, 0);
    for (int r = 0; r < 4; ++r) {
      if (auto it = specs[r].late_ns.find(k); it != specs[r].late_ns.end()) late[r] = it->second;
    }
    const int64_t max_late = *std::max_element(late.begin(), late.end());
    const int64_t min_late = *std::min_element(late.begin(), late.end());
    EXPECT_EQ(in.name, fixture[k].collective);
    EXPECT_EQ(in.bytes, NcclRankSet::Bytes(fixture[k]));
    EXPECT_EQ(in.ranks, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_NEAR(static_cast<double>(in.skew_ns), static_cast<double>(max_late - min_late), 3) << k;
    const int64_t transfer = fixture[k].dur_ns - max_late;
    EXPECT_NEAR(static_cast<double>(in.transfer_ns), static_cast<double>(transfer), 3) << k;
    for (int r = 0; r < 4; ++r) {
      EXPECT_NEAR(static_cast<double>(in.wait_ns[r]), static_cast<double>(max_late - late[r]), 3);
    }
    const double algbw = static_cast<double>(NcclRankSet::Bytes(fixture[k])) / transfer;
    const double factor = fixture[k].collective == "allreduce" ? 2.0 * 3 / 4 : 1.0;
    EXPECT_NEAR(in.algbw_gbps, algbw, algbw * 1e-5) << k;
    EXPECT_NEAR(in.busbw_gbps, algbw * factor, algbw * 1e-5) << k;
    if (max_late > 0) {
      EXPECT_EQ(in.last_rank, std::max_element(late.begin(), late.end()) - late.begin());
    }
  }
  // Rank 2 was last 3 times: 150 us x 3 other ranks at a and b, 150 + 150 + 130 us at c.
  ASSERT_GE(job.stragglers.size(), 2u);
  EXPECT_EQ(job.stragglers[0].rank, 2);
  EXPECT_EQ(job.stragglers[0].times_last, 3);
  EXPECT_NEAR(static_cast<double>(job.stragglers[0].wait_caused_ns), 450'000 * 2 + 430'000, 10);
  EXPECT_EQ(job.stragglers[1].rank, 3);
  EXPECT_NEAR(static_cast<double>(job.stragglers[1].wait_caused_ns), 120'000, 10);
  ASSERT_FALSE(job.findings.empty());
  EXPECT_NE(job.findings[0].find("rank 2 is the top straggler"), std::string::npos)
      << job.findings[0];
}

TEST_F(JobGroundTruth, WithoutAlignmentSkewIsTheClockOffset) {
  std::vector<RankSpec> specs(2);
  specs[0].rank = 0;
  specs[1].rank = 1;
  specs[1].offset_ns = 2'500'000;
  JobOptions options;
  options.align_clocks = false;
  const JobReport job = Analyze(specs, 2, options);
  ASSERT_TRUE(job.error.empty()) << job.error;
  EXPECT_FALSE(job.clocks_aligned);
  for (const CollectiveInstance& in : job.collectives) {
    EXPECT_EQ(in.skew_ns, 2'500'000);
    EXPECT_EQ(in.last_rank, 1);
  }
}

// A small rank trace: a step of a computation kernel then an all_reduce, `shift_ns` later on
// rank `rank`'s clock.
std::string SmallRankTrace(int rank, int64_t shift_ns) {
  auto us = [&](int64_t ns) {
    return std::to_string((ns + shift_ns) / 1000) + "." +
           std::to_string(1000 + (ns + shift_ns) % 1000).substr(1);
  };
  return "{\"distributedInfo\": {\"rank\": " + std::to_string(rank) +
         ", \"world_size\": 4}, \"traceEvents\": [\n"
         "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#0\", "
         "\"pid\": 1, \"tid\": 1, \"ts\": " +
         us(0) +
         ", \"dur\": 100},\n"
         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, "
         "\"ts\": " +
         us(10'000) +
         ", \"dur\": 30, \"args\": {\"stream\": 7}},\n"
         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32\", "
         "\"pid\": 0, \"tid\": 20, \"ts\": " +
         us(50'000) +
         ", \"dur\": 20, \"args\": "
         "{\"stream\": 20, \"Collective name\": \"allreduce\", \"Process Group Name\": \"0\", "
         "\"dtype\": \"Float\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, "
         "\"Group size\": 4}}\n]}\n";
}

// Several rank files imported at once (one per worker) give the summaries, in the files' order,
// that importing them one by one gives; a corrupt file among them is its own error.
TEST(JobLoading, ConcurrentLoadingIsTheSameAsOneByOne) {
  const fs::path dir =
      fs::temp_directory_path() / ("opscope_job_loading_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<RankFile> files;
  for (int r = 0; r < 3; ++r) {
    const fs::path path = dir / ("rank" + std::to_string(r) + ".json");
    std::ofstream(path) << SmallRankTrace(r, r * 7'000);
    files.push_back({path.string(), fs::file_size(path), r});
  }
  const fs::path broken = dir / "rank3.json";
  std::ofstream(broken) << "{\"traceEvents\": [{\"ph\": \"X\",";
  files.push_back({broken.string(), fs::file_size(broken), 3});
  std::vector<RankSummary> one_by_one;
  for (const RankFile& f : files) one_by_one.push_back(LoadRankSummary(f));
  ASSERT_EQ(one_by_one[1].collectives.size(), 1u);
  ASSERT_EQ(one_by_one[1].steps.size(), 1u);
  const std::string expected = SerializeRankSummaries(one_by_one);
  for (const int threads : {1, 2, 8}) {
    const std::vector<RankSummary> loaded = LoadRankSummaries(files, threads);
    ASSERT_EQ(loaded.size(), files.size());
    EXPECT_EQ(SerializeRankSummaries(loaded), expected) << threads << " threads";
    EXPECT_FALSE(loaded.back().error.empty());
    EXPECT_EQ(loaded.back().file, broken.string());
  }
  fs::remove_all(dir);
}

// A rank's summary keeps only the collectives' args from the import (on the NCCL kernels and on
// record_param_comms in the fixture): it is the summary of the trace imported whole.
TEST_F(JobGroundTruth, SummaryOfOnlyTheCollectivesArgsIsTheWholeTracesSummary) {
  RankSpec spec;
  spec.rank = 1;
  const fs::path path = set_->Write(dir_, spec, 2);
  const RankFile file{path.string(), fs::file_size(path), 1};
  Trace whole;
  ASSERT_TRUE(ImportTrace(path.string(), &whole).ok());
  const RankSummary expected = SummarizeRank(whole, file);
  ASSERT_EQ(expected.collectives.size(), set_->collectives().size());
  ASSERT_GT(expected.collectives.front().in_nelems, 0);
  const RankSummary filtered = LoadRankSummary(file);
  EXPECT_EQ(SerializeRankSummaries({filtered}), SerializeRankSummaries({expected}));

  // What the filter leaves out is not stored: no cpu op but record_param_comms keeps its args.
  ImportOptions options;
  std::mutex asked_mu;  // keep_args_of is called from every import thread at once
  std::vector<std::string> asked;
  options.keep_args_of = [&](ActivityKind kind, std::string_view name) {
    if (kind == ActivityKind::kCpuOp) {
      std::lock_guard<std::mutex> lock(asked_mu);
      asked.emplace_back(name);
    }
    return kind == ActivityKind::kCpuOp && name == "record_param_comms";
  };
  Trace some;
  ASSERT_TRUE(ImportTrace(path.string(), &some, nullptr, options).ok());
  EXPECT_FALSE(asked.empty());
  size_t with_args = 0;
  for (const Slice& s : some.slices()) {
    if (s.args == kNone) continue;
    ++with_args;
    EXPECT_EQ(s.kind, ActivityKind::kCpuOp);
    EXPECT_EQ(some.Str(s.name), "record_param_comms");
    EXPECT_NE(some.ArgsJson(s.args).find("Collective name"), std::string::npos);
  }
  EXPECT_GT(with_args, 0u);
}

TEST_F(JobGroundTruth, MissingRanksAndWorldSizes) {
  std::vector<RankSpec> specs(3);
  specs[0].rank = 0;
  specs[1].rank = 1;
  specs[2].rank = 3;
  const JobReport job = Analyze(specs, 4);
  ASSERT_TRUE(job.error.empty()) << job.error;
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_NE(job.warnings[0].find("rank 2 missing (world size 4)"), std::string::npos)
      << job.warnings[0];
  EXPECT_EQ(job.collectives.front().ranks, (std::vector<int>{0, 1, 3}));
  // Group size comes from the args (4), not from the ranks present: NCCL's factor is 2(n-1)/n.
  EXPECT_EQ(job.collectives.front().group_size, 4);
}

TEST_F(JobGroundTruth, RanksFromFileNamesAndStreamOrder) {
  // No distributedInfo and no process group args: ranks from the names, collectives matched by
  // their order on the communication stream.
  std::vector<RankSpec> specs(2);
  for (int r = 0; r < 2; ++r) {
    specs[r].rank = r;
    specs[r].distributed_info = false;
    specs[r].process_group_args = false;
    specs[r].file_name = "worker-rank_" + std::to_string(r) + ".json";
  }
  specs[1].late_ns = {{AllReduceAt(*set_, 0), 70'000}};
  const JobReport job = Analyze(specs, 2);
  ASSERT_TRUE(job.error.empty()) << job.error;
  ASSERT_EQ(job.collectives.size(), set_->collectives().size());
  EXPECT_EQ(job.collectives.front().group, "stream 0");
  ASSERT_FALSE(job.stragglers.empty());
  EXPECT_EQ(job.stragglers[0].rank, 1);
  EXPECT_NEAR(static_cast<double>(job.stragglers[0].wait_caused_ns), 70'000, 3);
}

TEST_F(JobGroundTruth, DuplicateRankIsAnErrorNamingBothFiles) {
  std::vector<RankSpec> specs(2);
  specs[0].rank = 1;
  specs[0].file_name = "a.json";
  specs[1].rank = 1;
  specs[1].file_name = "b.json";
  const JobReport job = Analyze(specs, 2);
  EXPECT_NE(job.error.find("rank 1 is claimed by two traces"), std::string::npos) << job.error;
  EXPECT_NE(job.error.find("a.json"), std::string::npos);
  EXPECT_NE(job.error.find("b.json"), std::string::npos);
}

}  // namespace
}  // namespace opscope
