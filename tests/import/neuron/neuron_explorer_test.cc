// End-to-end tests of the Neuron Explorer reader: profile directories written at test time by an
// independent Parquet writer (parquet-wasm, write_profile.mjs, field types from the documented
// schema) from the JSON descriptions in specs/, opened through ImportTrace. Needs node (skipped
// with a message without it); installs the writer with `npm ci` here when node_modules lacks it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "opscope/import.h"
#include "opscope/trace.h"
#include "tests/import/neuron/profile_writer.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

const fs::path kHere = OPSCOPE_NEURON_TEST_DIR;

// Writes specs/<name>.json as a profile directory; "" when the writer cannot run (`why` says).
std::string WriteProfile(const std::string& name, std::string* why) {
  const fs::path out =
      fs::temp_directory_path() / ("opscope_neuron_" + name + "_" + std::to_string(::getpid()));
  if (!testing::WriteNeuronProfile(kHere / "specs" / (name + ".json"), out, why)) return "";
  return out.string();
}

// Slices per track name.
std::map<std::string, int> SlicesByTrack(const Trace& trace) {
  std::map<std::string, int> count;
  for (const Slice& s : trace.slices())
    ++count[std::string(trace.Str(trace.tracks()[s.track].name))];
  return count;
}

TEST(NeuronExplorerTest, OpensLanesPerEngineAndDmaQueue) {
  std::string why;
  const std::string dir = WriteProfile("two_executions", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(DetectTraceFormat(dir), TraceFormat::kNeuronExplorer);
  Trace trace;
  ImportStats stats;
  Status st = ImportTrace(dir, &trace, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.format, TraceFormat::kNeuronExplorer);
  const std::map<std::string, int> lanes = SlicesByTrack(trace);
  std::string names;
  for (const auto& [name, n] : lanes) names += name + "=" + std::to_string(n) + " ";
  // 4 instructions on 3 engines, 2 executions, 2 DMA transfers on one queue.
  int instructions = 0, engines = 0;
  for (const auto& [name, n] : lanes) {
    if (name.find("TensorMatrix") != std::string::npos) {
      EXPECT_EQ(n, 2) << names;
    }
    if (name.find("TensorMatrix") != std::string::npos ||
        name.find("Vector") != std::string::npos || name.find("Scalar") != std::string::npos) {
      instructions += n;
      ++engines;
    }
  }
  EXPECT_EQ(engines, 3) << names;
  EXPECT_EQ(instructions, 4) << names;
  bool dma = false;
  for (const auto& [name, n] : lanes) dma |= name.find("qSyncIO") != std::string::npos && n == 2;
  EXPECT_TRUE(dma) << names;
  // Times stay exact: the first instruction 100 ns after the first hardware timestamp's execution.
  int64_t first_matmul = -1;
  for (const Slice& s : trace.slices()) {
    if (trace.Str(s.name) == "MATMUL" && first_matmul < 0) first_matmul = s.ts_ns;
  }
  int64_t first_exec = INT64_MAX;
  for (const Slice& s : trace.slices()) {
    const std::string_view track = trace.Str(trace.tracks()[s.track].name);
    if (track.find("TensorMatrix") == std::string_view::npos) continue;
    first_exec = std::min(first_exec, s.ts_ns);
  }
  EXPECT_EQ(first_matmul, first_exec);
  fs::remove_all(dir);
}

// A table split in parts whose second part is corrupt where only the slices pass reads it (its
// first row group's start_ts pages, the file's first bytes after the magic; the lanes pass reads
// engine, further on): the error names the part and the column, and the slices of the part before
// it are kept, finalized.
TEST(NeuronExplorerTest, ACorruptPartKeepsTheRowsBeforeIt) {
  std::string why;
  const std::string dir = WriteProfile("two_executions", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  {
    std::fstream f(dir + "/Instruction_1.parquet", std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open());
    const std::string garbage(16, '\xff');
    f.seekp(4);
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  Trace trace;
  const Status st = ImportTrace(dir, &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Instruction_1.parquet"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("start_ts"), std::string::npos) << st.message();
  EXPECT_TRUE(trace.finalized());
  // Instruction_0 holds the first two rows: a MATMUL and a TENSOR_TENSOR; Instruction_1 the
  // ACTIVATE and the second MATMUL.
  std::map<std::string, int> ops;
  for (const Slice& s : trace.slices()) ++ops[std::string(trace.Str(s.name))];
  EXPECT_EQ(ops["MATMUL"], 1);
  EXPECT_EQ(ops["TENSOR_TENSOR"], 1);
  EXPECT_EQ(ops["ACTIVATE"], 0);
  fs::remove_all(dir);
}

// A MAJOR version past the documented one is read when every field opscope needs is there, with a
// warning naming the version; a field it needs that is missing is an error naming the table.
// Flow rows join the slices their ids name, whichever engine or queue lane the two rows land on
// and however the rows of the lanes interleave in the table (slices reach the trace per lane).
TEST(NeuronExplorerTest, FlowRowsJoinTheirInstructionsAndPackets) {
  std::string why;
  const std::string dir = WriteProfile("flows", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  Trace trace;
  const Status st = ImportTrace(dir, &trace);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<std::pair<int64_t, int64_t>> edges;  // (from, to) start times, ns past the base
  for (const Flow& f : trace.flows()) {
    if (f.from == kNone || f.to == kNone) continue;
    edges.emplace_back(trace.slices()[f.from].ts_ns, trace.slices()[f.to].ts_ns);
  }
  std::sort(edges.begin(), edges.end());
  const std::vector<std::pair<int64_t, int64_t>> want = {{210, 410}, {300, 110}, {500, 310}};
  EXPECT_EQ(edges, want);
  for (const Flow& f : trace.flows()) {
    if (f.from == kNone || f.to == kNone) continue;
    const Slice& from = trace.slices()[f.from];
    if (from.ts_ns == 210) {
      EXPECT_EQ(trace.Str(from.name), "TENSOR_SCALAR");
      EXPECT_EQ(trace.ArgsJson(trace.slices()[f.to].args), "{\"bytes\": 8192}");
    }
  }
  fs::remove_all(dir);
}

TEST(NeuronExplorerTest, MajorVersionChangeWarnsAndChecksFields) {
  std::string why;
  const std::string dir = WriteProfile("major_version", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  Trace trace;
  Status st = ImportTrace(dir, &trace);
  ASSERT_TRUE(st.ok()) << st.message();
  bool warned = false;
  for (const std::string& w : trace.metadata().warnings) {
    warned |= w.find("8.0.0") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  fs::remove_all(dir);
}

TEST(NeuronExplorerTest, MissingRequiredFieldNamesTableAndColumn) {
  std::string why;
  const std::string dir = WriteProfile("missing_field", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  Trace trace;
  Status st = ImportTrace(dir, &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Instruction"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("opcode"), std::string::npos) << st.message();
  fs::remove_all(dir);
}

TEST(NeuronExplorerTest, UnknownFieldsAreIgnoredAndCounted) {
  std::string why;
  const std::string dir = WriteProfile("unknown_table", &why);
  if (dir.empty()) GTEST_SKIP() << why;
  Trace trace;
  ImportStats stats;
  Status st = ImportTrace(dir, &trace, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  bool warned = false;
  for (const std::string& w : trace.metadata().warnings) {
    warned |= w.find("future_field") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(trace.slices().size() >= 1, true);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opscope
