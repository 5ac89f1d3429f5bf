// The report's analyses on several threads, in process (so sanitizer builds check the threads):
// ReportJson and FormatReport, plain and grouped by input shape, are the same at 1 and 3 threads
// on every fixture, and with the default count (a fixture of 32,768 slices or more has its
// analyses run side by side, each on one thread). cli_test checks the same through the CLI at 1,
// 2, 3 and 8 threads.
#include <gtest/gtest.h>

#include "opscope/analysis.h"
#include "tests/analysis/fixture_traces.h"

namespace opscope {
namespace {
TEST(ReportThreadsTest, ReportIsTheSameAtOneAndThreeThreads) {
  testing::ForEachFixtureTrace([](const std::filesystem::path& path, const Trace& trace) {
    ReportOptions one, three;
    one.threads = 1;
    three.threads = 3;
    one.rows = three.rows = -1;
    EXPECT_EQ(ReportJson(trace, one), ReportJson(trace, three)) << path;
    EXPECT_EQ(FormatReport(trace, one), FormatReport(trace, three)) << path;
    ReportOptions by_default = one;
    by_default.threads = 0;
    EXPECT_EQ(ReportJson(trace, one), ReportJson(trace, by_default)) << path;
    EXPECT_EQ(FormatReport(trace, one), FormatReport(trace, by_default)) << path;
    three.group_by_input_shape = one.group_by_input_shape = true;
    EXPECT_EQ(FormatReport(trace, one), FormatReport(trace, three)) << path;
  });
}
}  // namespace
}  // namespace opscope
