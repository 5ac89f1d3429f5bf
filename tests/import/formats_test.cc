// Format detection and the entry points that go through it: a profile is recognised by its content
// whatever its name, a file no reader claims gets one error naming what was tried, and a folder
// scan finds the profiles among other files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "opscope/import.h"
#include "tests/common/temp_dir.h"

namespace opscope {
namespace {

constexpr char kTrace[] = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 10, "dur": 5}
]})";

std::string Gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(FormatsTest, KinetoJsonIsRecognisedByContent) {
  EXPECT_EQ(DetectTraceFormatFromMemory(kTrace), TraceFormat::kKinetoJson);
  EXPECT_EQ(DetectTraceFormatFromMemory("\xEF\xBB\xBF  [{\"ph\": \"X\"}]"),
            TraceFormat::kKinetoJson);
  // A JSON object without traceEvents is not Kineto's: here the Neuron profiler's device profile.
  EXPECT_EQ(DetectTraceFormatFromMemory(R"({"summary": [], "instruction": []})"),
            TraceFormat::kNeuronJson);
  EXPECT_EQ(DetectTraceFormatFromMemory(R"({"summary": []})"), TraceFormat::kUnknown);
  EXPECT_EQ(DetectTraceFormatFromMemory(std::string("\x00\x01\x02\x03", 4)), TraceFormat::kUnknown);
  EXPECT_EQ(DetectTraceFormatFromMemory(""), TraceFormat::kUnknown);
  EXPECT_EQ(TraceFormatName(TraceFormat::kKinetoJson), "kineto-json");
  EXPECT_EQ(TraceFormatName(TraceFormat::kUnknown), "unknown");
}

TEST(FormatsTest, ImportGoesByContentNotByName) {
  testing::ScopedTempDir dir("opscope_formats_name");
  const std::string odd = dir.File("profile.bin");
  Write(odd, Gzip(kTrace));
  EXPECT_EQ(DetectTraceFormat(odd), TraceFormat::kKinetoJson);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTrace(odd, &trace, &stats).ok());
  EXPECT_EQ(stats.format, TraceFormat::kKinetoJson);
  ASSERT_EQ(trace.slices().size(), 1u);
  EXPECT_EQ(trace.Str(trace.slices()[0].name), "aten::mul");
}

TEST(FormatsTest, AnUnknownFileSaysWhatWasTried) {
  testing::ScopedTempDir dir("opscope_formats_unknown");
  const std::string junk = dir.File("trace.json");
  Write(junk, std::string("\x7f"
                          "ELF\x02\x01\x01",
                          7));
  Trace trace;
  const Status st = ImportTrace(junk, &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.file(), junk);
  EXPECT_NE(st.message().find(junk), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("not a profile opscope reads"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Kineto"), std::string::npos) << st.message();
  EXPECT_TRUE(trace.finalized());
}

TEST(FormatsTest, JsonThatIsNoTraceGetsTheJsonReadersError) {
  Trace trace;
  const Status st = ImportTraceFromMemory(R"({"summary": []})", &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("traceEvents"), std::string::npos) << st.message();
}

TEST(FormatsTest, FolderScanFindsProfilesAmongOtherFiles) {
  testing::ScopedTempDir dir("opscope_formats_scan");
  std::filesystem::create_directories(dir.path() / "rank1");
  Write(dir.File("b_trace.txt"), kTrace);            // a trace with an unusual name
  Write(dir.File("config.json"), R"({"lr": 0.1})");  // JSON that is no trace
  Write(dir.File("notes.md"), "# notes");
  Write(dir.File("rank1/a.pt.trace.json.gz"), Gzip(kTrace));
  std::vector<std::string> found;
  ASSERT_TRUE(FindTraces(dir.path().string(), &found).ok());
  const std::vector<std::string> expected = {dir.File("b_trace.txt"),
                                             dir.File("rank1/a.pt.trace.json.gz")};
  EXPECT_EQ(found, expected);

  testing::ScopedTempDir empty("opscope_formats_empty");
  found.clear();
  const Status st = FindTraces(empty.path().string(), &found);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("no profiles"), std::string::npos) << st.message();
  EXPECT_FALSE(FindTraces(dir.File("missing"), &found).ok());
}

}  // namespace
}  // namespace opscope
