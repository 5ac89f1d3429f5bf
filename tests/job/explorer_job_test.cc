// The Explorer's job view (/api/job) on a rank set generated from the real NCCL fixture, with
// shifted and drifting clocks and one rank arriving late: the collectives land on one aligned
// axis (the injected lateness is the skew, the clock offsets are gone), each member points at its
// kernel in its rank's served trace, and the per-rank map and the job's viewport put that kernel
// where the member says.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "opscope/explorer.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "tests/job/rank_set.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

// /api/job/viewport's lane ids: a rank's position in /api/job's "ranks" << 20 | its lane's id.
constexpr int kJobLaneBits = 20;

class ExplorerJob : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(set_.ok()) << testing::FixturesProblem();
    dir_ = fs::temp_directory_path() / ("opscope_explorer_job_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Imports each rank file once: its summary for the job and its trace for the Explorer.
  void Serve(const std::vector<fs::path>& files) {
    std::vector<RankSummary> summaries;
    for (const fs::path& f : files) {
      RankFile file{f.string(), fs::file_size(f), RankFromPath(f.string())};
      Trace trace;
      ASSERT_TRUE(ImportTrace(file.path, &trace).ok()) << file.path;
      summaries.push_back(SummarizeRank(trace, file));
      explorer_.AddTrace(f.filename().string(), std::move(trace), file.path);
    }
    report_ = AnalyzeJob(std::move(summaries));
    ASSERT_TRUE(report_.error.empty()) << report_.error;
    explorer_.SetJob(report_);
    const Status started = explorer_.Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }

  std::string Get(const std::string& path, int* status = nullptr) {
    httplib::Client client("127.0.0.1", explorer_.port());
    auto res = client.Get(path);
    if (status) *status = res ? res->status : 0;
    return res ? res->body : std::string();
  }

  testing::NcclRankSet set_;
  fs::path dir_;
  Explorer explorer_{ExplorerOptions{}};
  JobReport report_;
};

TEST_F(ExplorerJob, CollectivesOnOneAlignedAxisPointAtTheirKernels) {
  constexpr int64_t kLateNs = 60'000;
  constexpr size_t kLateCollective = 4;
  std::vector<fs::path> files;
  files.push_back(set_.Write(dir_, {.rank = 0}, 3));
  files.push_back(set_.Write(dir_, {.rank = 1, .offset_ns = 5'000'000}, 3));
  files.push_back(set_.Write(
      dir_,
      {.rank = 2, .offset_ns = -3'000'000, .drift = 30e-6, .late_ns = {{kLateCollective, kLateNs}}},
      3));
  Serve(files);

  simdjson::dom::parser parser;
  simdjson::dom::element info;
  ASSERT_EQ(parser.parse(Get("/api/info")).get(info), simdjson::SUCCESS);
  EXPECT_TRUE(info["job"].get_bool().value());

  const std::string body = Get("/api/job");
  simdjson::dom::parser job_parser;
  simdjson::dom::element job;
  ASSERT_EQ(job_parser.parse(body).get(job), simdjson::SUCCESS) << body.substr(0, 300);
  EXPECT_EQ(job["world_size"].get_int64().value(), 3);
  EXPECT_TRUE(job["clocks_aligned"].get_bool().value());
  simdjson::dom::array ranks = job["ranks"].get_array().value();
  ASSERT_EQ(ranks.size(), 3u);
  // The fitted offsets and drift are the injected ones.
  EXPECT_NEAR(ranks.at(1)["clock_offset_us"].get_double().value(), 5000, 0.01);
  EXPECT_NEAR(ranks.at(2)["clock_offset_us"].get_double().value(), -3000, 0.01);
  EXPECT_NEAR(ranks.at(2)["clock_drift_ppm"].get_double().value(), 30, 0.01);

  simdjson::dom::array collectives = job["collectives"].get_array().value();
  ASSERT_EQ(collectives.size(), set_.collectives().size());
  // compact=1 (what the page asks for): the same document but each collective's members, which
  // are "first_ns" and "m" (7 numbers a member, start relative to the first arrival, end to the
  // start) and give back the full answer's members exactly.
  {
    simdjson::dom::parser compact_parser;
    simdjson::dom::element compact;
    ASSERT_EQ(compact_parser.parse(Get("/api/job?compact=1")).get(compact), simdjson::SUCCESS);
    EXPECT_EQ(simdjson::to_string(compact["ranks"]), simdjson::to_string(job["ranks"]));
    EXPECT_EQ(simdjson::to_string(compact["steps"]), simdjson::to_string(job["steps"]));
    simdjson::dom::array compact_collectives = compact["collectives"].get_array().value();
    ASSERT_EQ(compact_collectives.size(), collectives.size());
    for (size_t i = 0; i < collectives.size(); ++i) {
      simdjson::dom::element full = collectives.at(i);
      simdjson::dom::element c = compact_collectives.at(i);
      EXPECT_EQ(c["seq"].get_int64().value(), full["seq"].get_int64().value());
      EXPECT_TRUE(c["members"].error() == simdjson::NO_SUCH_FIELD);
      simdjson::dom::array members = full["members"].get_array().value();
      simdjson::dom::array m = c["m"].get_array().value();
      ASSERT_EQ(m.size(), members.size() * 7);
      const int64_t first = c["first_ns"].get_int64().value();
      int64_t earliest = INT64_MAX;
      for (size_t k = 0; k < members.size(); ++k) {
        simdjson::dom::array want = members.at(k).get_array().value();
        const int64_t start = first + m.at(7 * k + 4).get_int64().value();
        earliest = std::min(earliest, start);
        for (size_t f : {0, 1, 2, 3, 6}) {
          EXPECT_EQ(m.at(7 * k + f).get_int64().value(), want.at(f).get_int64().value());
        }
        EXPECT_EQ(start, want.at(4).get_int64().value());
        EXPECT_EQ(start + m.at(7 * k + 5).get_int64().value(), want.at(5).get_int64().value());
      }
      if (members.size() > 0) {
        EXPECT_EQ(earliest, first);
      }
    }
  }
  int checked_members = 0;
  int late_instances = 0;
  for (simdjson::dom::element c : collectives) {
    simdjson::dom::array members = c["members"].get_array().value();
    ASSERT_EQ(members.size(), 3u);
    std::vector<int64_t> starts;
    for (simdjson::dom::element m : members) {
      const int64_t rank = m.at(0).get_int64().value();
      const int64_t slice = m.at(1).get_int64().value();
      const int64_t lane = m.at(2).get_int64().value();
      const int64_t start = m.at(4).get_int64().value();
      const int64_t end = m.at(5).get_int64().value();
      starts.push_back(start);
      ASSERT_GE(slice, 0);
      simdjson::dom::element r = ranks.at(static_cast<size_t>(rank)).value();
      const int64_t trace = r["trace"].get_int64().value();
      simdjson::dom::parser slice_parser;
      simdjson::dom::element s;
      const std::string path =
          "/api/trace/" + std::to_string(trace) + "/slice/" + std::to_string(slice);
      ASSERT_EQ(slice_parser.parse(Get(path)).get(s), simdjson::SUCCESS) << path;
      EXPECT_EQ(std::string(s["name"].get_string().value()).rfind("nccl", 0), 0u);
      // The rank's map (what the page draws with) puts the kernel where the member says.
      const double axis =
          r["axis_at_start_ns"].get_double().value() +
          r["scale"].get_double().value() *
              static_cast<double>(s["ts"].get_int64().value() - r["start_ns"].get_int64().value());
      EXPECT_NEAR(axis, static_cast<double>(start), 2.0);
      EXPECT_NEAR(
          static_cast<double>(end - start),
          r["scale"].get_double().value() * static_cast<double>(s["dur"].get_int64().value()), 2.0);
      // The job viewport draws the kernel's bar on the axis exactly where the member says, with
      // every rank's clock fit (rank 2 drifts), at a 1 us window.
      const std::string view_path =
          fmt::format("/api/job/viewport?t0={}&t1={}&width=1000&lanes={}", start - 300, start + 700,
                      (rank << kJobLaneBits) | lane);
      simdjson::dom::parser view_parser;
      simdjson::dom::element view;
      ASSERT_EQ(view_parser.parse(Get(view_path)).get(view), simdjson::SUCCESS) << view_path;
      bool drawn = false;
      for (simdjson::dom::element l : view["lanes"].get_array()) {
        EXPECT_EQ(l["lane"].get_int64().value(), (rank << kJobLaneBits) | lane);
        for (simdjson::dom::element item : l["items"].get_array()) {
          if (item.at(4).get_int64().value() != slice) continue;
          drawn = true;
          EXPECT_EQ(item.at(0).get_int64().value(), start) << view_path;
          EXPECT_EQ(item.at(0).get_int64().value() + item.at(1).get_int64().value(), end);
        }
      }
      EXPECT_TRUE(drawn) << view_path;
      // compact=1 (what the page asks for): the same items, each its first six values.
      simdjson::dom::parser compact_parser;
      simdjson::dom::element compact;
      ASSERT_EQ(compact_parser.parse(Get(view_path + "&compact=1")).get(compact),
                simdjson::SUCCESS);
      simdjson::dom::array full_lanes = view["lanes"].get_array().value();
      simdjson::dom::array compact_lanes = compact["lanes"].get_array().value();
      ASSERT_EQ(compact_lanes.size(), full_lanes.size());
      for (size_t l = 0; l < full_lanes.size(); ++l) {
        simdjson::dom::array full_items = full_lanes.at(l)["items"].get_array().value();
        simdjson::dom::array compact_items = compact_lanes.at(l)["items"].get_array().value();
        ASSERT_EQ(compact_items.size(), full_items.size());
        for (size_t i = 0; i < full_items.size(); ++i) {
          simdjson::dom::array item = compact_items.at(i).get_array().value();
          ASSERT_EQ(item.size(), 6u);
          for (size_t k = 0; k < 6; ++k) {
            EXPECT_EQ(item.at(k).get_int64().value(), full_items.at(i).at(k).get_int64().value());
          }
        }
      }
      // flat=1 as well: each lane's compact items one after another, "stride" 6.
      simdjson::dom::parser flat_parser;
      simdjson::dom::element flat;
      ASSERT_EQ(flat_parser.parse(Get(view_path + "&compact=1&flat=1")).get(flat),
                simdjson::SUCCESS);
      EXPECT_EQ(flat["stride"].get_int64().value(), 6);
      simdjson::dom::array flat_lanes = flat["lanes"].get_array().value();
      ASSERT_EQ(flat_lanes.size(), full_lanes.size());
      for (size_t l = 0; l < full_lanes.size(); ++l) {
        simdjson::dom::array full_items = full_lanes.at(l)["items"].get_array().value();
        simdjson::dom::array numbers = flat_lanes.at(l)["items"].get_array().value();
        ASSERT_EQ(numbers.size(), full_items.size() * 6);
        for (size_t i = 0; i < full_items.size(); ++i) {
          for (size_t k = 0; k < 6; ++k) {
            EXPECT_EQ(numbers.at(i * 6 + k).get_int64().value(),
                      full_items.at(i).at(k).get_int64().value());
          }
        }
      }
      bool lane_listed = false;
      const simdjson::dom::array lanes = r["lanes"].get_array().value();
      for (simdjson::dom::element l : lanes) {
        if (l["id"].get_int64().value() == lane) {
          lane_listed = true;
          EXPECT_EQ(std::string(l["group"].get_string().value()), "hardware");
        }
      }
      EXPECT_TRUE(lane_listed) << "lane " << lane;
      ++checked_members;
    }
    // Aligned: the ranks start together except where rank 2 was made late.
    const int64_t skew = c["skew_ns"].get_int64().value();
    if (skew > 1000) {
      ++late_instances;
      EXPECT_NEAR(static_cast<double>(skew), kLateNs, 5);
      EXPECT_EQ(c["last_rank"].get_int64().value(), 2);
      EXPECT_NEAR(static_cast<double>(starts[2] - starts[0]), kLateNs, 5);
      EXPECT_NEAR(static_cast<double>(members.at(0).at(6).get_int64().value()), kLateNs, 5);
    } else {
      EXPECT_LE(std::abs(starts[1] - starts[0]), 5);
      EXPECT_LE(std::abs(starts[2] - starts[0]), 5);
    }
  }
  EXPECT_EQ(late_instances, 1);
  EXPECT_EQ(checked_members, 3 * static_cast<int>(set_.collectives().size()));

  // The straggler links to where it made the others wait.
  simdjson::dom::element top = job["stragglers"].at(0).value();
  EXPECT_EQ(top["rank"].get_int64().value(), 2);
  EXPECT_GE(top["worst_seq"].get_int64().value(), 0);
  // Ranks x steps: the same ProfilerStep# on every rank, the same duration (copies of one trace).
  simdjson::dom::element steps = job["steps"].value();
  ASSERT_GT(steps["numbers"].get_array().size(), 0u);
  const double d0 = steps["ranks"].at(0)["dur"].at(0).get_double().value();
  EXPECT_GT(d0, 0);
  for (size_t r = 1; r < 3; ++r) {
    EXPECT_NEAR(steps["ranks"].at(r)["dur"].at(0).get_double().value(), d0, 5);
  }
  // The page itself is served.
  int status = 0;
  EXPECT_NE(Get("/job.html", &status).find("job.js"), std::string::npos);
  EXPECT_EQ(status, 200);
}

TEST_F(ExplorerJob, ApiJobIsNotFoundWithoutAJob) {
  const fs::path file = set_.Write(dir_, {.rank = 0}, 1);
  Trace trace;
  ASSERT_TRUE(ImportTrace(file.string(), &trace).ok());
  explorer_.AddTrace("rank0", std::move(trace), file.string());
  const Status started = explorer_.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  int status = 0;
  EXPECT_NE(Get("/api/job", &status).find("not opened as one job"), std::string::npos);
  EXPECT_EQ(status, 404);
  EXPECT_NE(Get("/api/info").find("\"job\":false"), std::string::npos);
}

}  // namespace
}  // namespace opscope
