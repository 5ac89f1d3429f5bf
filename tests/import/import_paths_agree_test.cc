// The Kineto reader's parse paths agree on inputs the import fuzzer found where they did not: the
// batched parse, the one-event-at-a-time parse and the parse on 3 threads with 1-byte chunks give
// the same status, counts, warnings and events (fuzz/import_fuzz.cc checks the same on every
// input; the inputs are kept in the shared fixtures' fuzz-crashes/ and the fuzzer's seeds).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

struct Imported {
  Trace trace;
  ImportStats stats;
  Status status;
};

void Import(const std::string& data, const ImportOptions& options, Imported* out) {
  out->status = ImportTraceFromMemory(data, &out->trace, &out->stats, options);
}

void ExpectSame(const Imported& a, const Imported& b, const std::string& what) {
  EXPECT_EQ(a.status.ok(), b.status.ok()) << what;
  EXPECT_EQ(a.status.message(), b.status.message()) << what;
  EXPECT_EQ(a.stats.events, b.stats.events) << what;
  EXPECT_EQ(a.stats.skipped, b.stats.skipped) << what;
  EXPECT_EQ(a.stats.warnings, b.stats.warnings) << what;
  const Trace& ta = a.trace;
  const Trace& tb = b.trace;
  EXPECT_EQ(ta.instants().size(), tb.instants().size()) << what;
  EXPECT_EQ(ta.counters().size(), tb.counters().size()) << what;
  EXPECT_EQ(ta.flows().size(), tb.flows().size()) << what;
  EXPECT_EQ(ta.strings().size(), tb.strings().size()) << what;
  ASSERT_EQ(ta.slices().size(), tb.slices().size()) << what;
  for (size_t i = 0; i < ta.slices().size(); ++i) {
    const Slice& x = ta.slices()[i];
    const Slice& y = tb.slices()[i];
    EXPECT_EQ(x.ts_ns, y.ts_ns) << what << " slice " << i;
    EXPECT_EQ(x.dur_ns, y.dur_ns) << what << " slice " << i;
    EXPECT_EQ(x.external_id, y.external_id) << what << " slice " << i;
    EXPECT_EQ(x.correlation, y.correlation) << what << " slice " << i;
    EXPECT_EQ(x.track, y.track) << what << " slice " << i;
    EXPECT_EQ(ta.Str(x.name), tb.Str(y.name)) << what << " slice " << i;
    EXPECT_EQ(ta.ArgsJson(x.args), tb.ArgsJson(y.args)) << what << " slice " << i;
  }
}

TEST(ImportPathsAgree, FuzzerFindings) {
  ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
  for (const char* name : {"import_check_same_1.json", "import_check_same_2.json"}) {
    const std::filesystem::path path = testing::FixturesDir() / "fuzz-crashes" / name;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    ImportOptions options;  // as the fuzz target imports
    options.max_depth = 32;
    options.threads = 1;
    Imported batched, per_event, threaded;
    Import(data, options, &batched);
    ImportOptions one_by_one = options;
    one_by_one.batch_events = false;
    Import(data, one_by_one, &per_event);
    ImportOptions chunks = options;
    chunks.threads = 3;
    chunks.chunk_bytes = 1;
    Import(data, chunks, &threaded);
    ExpectSame(batched, per_event, std::string(name) + ", per event");
    ExpectSame(batched, threaded, std::string(name) + ", 3 threads");
  }
}

}  // namespace
}  // namespace opscope
