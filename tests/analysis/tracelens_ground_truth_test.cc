// Holds opscope's figures against TraceLens's own analysis of the same MI300 traces:
// gpu_timeline within 0.1 %, per-op direct kernel time within 1 % and call counts exactly,
// kernel summary sums within 1 %.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

using Case = testing::TraceLensCase;
std::vector<Case> Cases() { return testing::TraceLensMi300Cases(); }

void ExpectWithin(double actual, double expected, double relative, const std::string& what) {
  const double tolerance = std::max(std::abs(expected) * relative, 1e-3);
  EXPECT_NEAR(actual, expected, tolerance) << what;
}

class TraceLensGroundTruth : public ::testing::Test {
 protected:
  void SetUp() override {
    cases_ = Cases();
    ASSERT_FALSE(cases_.empty()) << "no TraceLens fixtures found under " << testing::FixturesDir()
                                 << " " << testing::FixturesProblem();
  }
  Trace Import(const fs::path& path) {
    Trace trace;
    ImportStats stats;
    Status st = ImportTrace(path.string(), &trace, &stats);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(stats.skipped, 0u) << path;
    return trace;
  }
  std::vector<Case> cases_;
};

TEST_F(TraceLensGroundTruth, GpuTimelineMatchesWithinATenthOfAPercent) {
  for (const Case& c : cases_) {
    SCOPED_TRACE(c.trace.filename().string());
    Trace trace = Import(c.trace);
    const DeviceTimeline tl = ComputeDeviceTimeline(trace);
    auto rows = testing::ReadCsv(c.csv_dir / "gpu_timeline.csv");
    ASSERT_GE(rows.size(), 6u);
    const std::map<std::string, int64_t> ours = {
        {"computation_time", tl.computation_ns},
        {"exposed_comm_time", tl.exposed_comm_ns},
        {"exposed_memcpy_time", tl.exposed_memcpy_ns},
        {"busy_time", tl.busy_ns},
        {"idle_time", tl.idle_ns},
        {"total_time", tl.total_ns},
        {"total_comm_time", tl.total_comm_ns},
        {"total_memcpy_time", tl.total_memcpy_ns},
    };
    int matched = 0;
    for (const auto& row : rows) {
      auto it = ours.find(row.at("type"));
      if (it == ours.end()) continue;
      const double expected_ms = std::stod(row.at("time ms"));
      ExpectWithin(static_cast<double>(it->second) / 1e6, expected_ms, 1e-3, row.at("type"));
      ++matched;
    }
    EXPECT_EQ(matched, 8);
  }
}

TEST_F(TraceLensGroundTruth, OpsSummaryDirectTimeWithinOnePercentAndCountsExact) {
  for (const Case& c : cases_) {
    SCOPED_TRACE(c.trace.filename().string());
    Trace trace = Import(c.trace);
    const OpSummary ops = ComputeOpSummary(trace);
    std::map<std::string, const OpDeviceTime*> by_name;
    for (const OpDeviceTime& r : ops.rows) by_name[r.name] = &r;
    auto rows = testing::ReadCsv(c.csv_dir / "ops_summary.csv");
    ASSERT_FALSE(rows.empty());
    for (const auto& row : rows) {
      const std::string& name = row.at("name");
      ASSERT_TRUE(by_name.count(name)) << "op missing from opscope's summary: " << name;
      const OpDeviceTime& r = *by_name[name];
      EXPECT_EQ(r.count, std::stoll(row.at("Count"))) << name;
      ExpectWithin(static_cast<double>(r.direct_device_ns) / 1e3,
                   std::stod(row.at("total_direct_kernel_time_sum")), 0.01, name + " direct");
      ExpectWithin(static_cast<double>(r.subtree_device_ns) / 1e3,
                   std::stod(row.at("total_subtree_kernel_time_sum")), 0.01, name + " subtree");
    }
    EXPECT_EQ(ops.rows.size(), rows.size()) << "opscope reports ops TraceLens does not";
  }
}

TEST_F(TraceLensGroundTruth, KernelSummarySumsWithinOnePercent) {
  for (const Case& c : cases_) {
    SCOPED_TRACE(c.trace.filename().string());
    Trace trace = Import(c.trace);
    const KernelSummary ks = ComputeKernelSummary(trace);
    std::map<std::tuple<std::string, std::string, int64_t>, const KernelStats*> ours;
    for (const KernelStats& k : ks.rows) ours[{k.parent_op, k.kernel, k.stream}] = &k;
    auto rows = testing::ReadCsv(c.csv_dir / "kernel_summary.csv");
    ASSERT_FALSE(rows.empty());
    for (const auto& row : rows) {
      const std::string& kernel = row.at("Kernel name");
      auto key = std::make_tuple(row.at("Parent cpu_op"), kernel,
                                 static_cast<int64_t>(std::stoll(row.at("Kernel stream"))));
      auto it = ours.find(key);
      ASSERT_NE(it, ours.end()) << "kernel group missing: " << row.at("Parent cpu_op") << " / "
                                << kernel.substr(0, 80);
      const KernelStats& k = *it->second;
      EXPECT_EQ(k.count, std::stoll(row.at("Kernel duration (µs)_count"))) << kernel;
      ExpectWithin(static_cast<double>(k.sum_ns) / 1e3,
                   std::stod(row.at("Kernel duration (µs)_sum")), 0.01, kernel + " sum");
      ExpectWithin(static_cast<double>(k.min_ns) / 1e3,
                   std::stod(row.at("Kernel duration (µs)_min")), 0.01, kernel + " min");
      ExpectWithin(static_cast<double>(k.max_ns) / 1e3,
                   std::stod(row.at("Kernel duration (µs)_max")), 0.01, kernel + " max");
    }
    EXPECT_EQ(ks.rows.size(), rows.size());
  }
}

}  // namespace
}  // namespace opscope
