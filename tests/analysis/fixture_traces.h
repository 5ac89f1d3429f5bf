// Running a check on every shared fixture trace, imported: the loop many end-to-end tests share.
#ifndef OPSCOPE_TESTS_ANALYSIS_FIXTURE_TRACES_H_
#define OPSCOPE_TESTS_ANALYSIS_FIXTURE_TRACES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope::testing {

// Imports every trace under FixturesDir()/traces (sorted) and calls check(path, trace) on each,
// with the file's name in any failure's trace. Missing fixtures, or none found, fail the test: a
// check that ran on nothing must not pass.
inline void ForEachFixtureTrace(
    const std::function<void(const std::filesystem::path&, const Trace&)>& check) {
  ASSERT_FALSE(FixturesDir().empty()) << FixturesProblem();
  const auto traces = TraceFiles(FixturesDir() / "traces");
  ASSERT_FALSE(traces.empty()) << "no traces under " << FixturesDir() / "traces";
  for (const std::filesystem::path& path : traces) {
    SCOPED_TRACE(path.filename().string());
    Trace trace;
    const Status st = ImportTrace(path.string(), &trace);
    ASSERT_TRUE(st.ok()) << path << ": " << st.message();
    check(path, trace);
  }
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_ANALYSIS_FIXTURE_TRACES_H_
