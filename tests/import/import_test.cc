// Importer tests: every format variant the fixtures and opscope's own exporter produce, exact
// timestamps, and bad input (clear error with offset, or a counted warning; never a crash).
#include "opscope/import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "import/byte_source.h"
#include "import/import_input.h"
#include "import/kineto/json_stream.h"
#include "import/kineto/number_text.h"
#include "import/kineto/parallel_parse.h"
#include "import/kineto/slice_stage.h"
#include "opscope/analysis.h"
#include "opscope/key_averages.h"
#include "tests/common/temp_dir.h"

namespace opscope {
namespace {

std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

uint32_t FindSlice(const Trace& t, std::string_view name) {
  const StringId id = t.strings().Find(name);
  for (uint32_t i = 0; i < t.slices().size(); ++i) {
    if (t.slices()[i].name == id) return i;
  }
  return kNone;
}

// 2024 format: relative fractional-us timestamps, baseTimeNanoseconds after the events.
const char kModern[] = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "GPU"}],
  "distributedInfo": {"rank": 3},
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 10, "tid": 11,
     "ts": 100.5, "dur": 20.125, "args": {"External id": 5, "Input Dims": [[2, 3], []]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 101.000, "dur": 4.001, "args": {"External id": 5, "correlation": 42}},
    {"ph": "X", "cat": "kernel", "name": "mul_kernel", "pid": 0, "tid": 7,
     "ts": 130.999, "dur": 3.5, "args": {"device": 0, "stream": 7, "correlation": 42, "External id": 5}},
    {"ph": "s", "id": 42, "pid": 10, "tid": 11, "ts": 101.000, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 130.999, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 11, "ts": 105,
     "args": {"Bytes": 64}},
    {"ph": "C", "name": "queue", "pid": 0, "ts": 110, "args": {"depth": 3, "label": "x"}},
    {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    {"name": "process_labels", "ph": "M", "ts": 0, "pid": 10, "tid": 0, "args": {"labels": "CPU"}},
    {"name": "thread_name", "ph": "M", "ts": 0, "pid": 10, "tid": 11, "args": {"name": "main"}},
    {"ph": "X", "cat": "Trace", "ts": 90, "dur": 100, "pid": "Spans", "tid": "PyTorch Profiler",
     "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}
  ],
  "traceName": "t.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000
})J";

TEST(ImportTest, ReadsModernKinetoTraceExactly) {
  Trace t;
  ImportStats stats;
  Status st = ImportTraceFromMemory(kModern, &t, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.skipped, 0u);
  EXPECT_EQ(stats.events, 11u);
  EXPECT_EQ(stats.slices, 4u);
  EXPECT_EQ(t.metadata().base_time_ns, 1700000000000000000);
  EXPECT_EQ(t.metadata().trace_name, "t.json");
  EXPECT_EQ(t.metadata().device_type, "CUDA");
  const uint32_t op = FindSlice(t, "aten::mul");
  const uint32_t rt = FindSlice(t, "cudaLaunchKernel");
  const uint32_t k = FindSlice(t, "mul_kernel");
  ASSERT_NE(k, kNone);
  EXPECT_EQ(t.slices()[op].ts_ns, 100500);
  EXPECT_EQ(t.slices()[op].dur_ns, 20125);
  EXPECT_EQ(t.slices()[rt].dur_ns, 4001);
  EXPECT_EQ(t.slices()[k].ts_ns, 130999);
  EXPECT_EQ(t.slices()[op].kind, ActivityKind::kCpuOp);
  EXPECT_EQ(t.slices()[rt].kind, ActivityKind::kRuntime);
  EXPECT_EQ(t.slices()[k].kind, ActivityKind::kKernel);
  EXPECT_EQ(t.Str(t.slices()[op].input_shapes), "[[2, 3], []]");
  EXPECT_EQ(t.slices()[rt].parent, op);
  EXPECT_EQ(t.Link(k).op, op);
  EXPECT_EQ(t.Link(k).runtime, rt);
  ASSERT_EQ(t.flows().size(), 1u);
  EXPECT_EQ(t.flows()[0].from, rt);
  EXPECT_EQ(t.flows()[0].to, k);
  EXPECT_EQ(t.FindArg(t.slices()[k].args, "stream"), "7");
  ASSERT_EQ(t.instants().size(), 1u);
  EXPECT_EQ(t.FindArg(t.instants()[0].args, "Bytes"), "64");
  ASSERT_EQ(t.counters().size(), 1u);  // the non-numeric series is ignored
  EXPECT_EQ(t.counters()[0].value, 3.0);
  EXPECT_EQ(t.Str(t.tracks()[t.counters()[0].track].name), "queue.depth");
  // Device process and stream are marked; metadata names applied.
  const Track& stream = t.tracks()[t.slices()[k].track];
  EXPECT_EQ(stream.kind, TrackKind::kDeviceStream);
  EXPECT_TRUE(t.processes()[stream.process].is_device);
  EXPECT_EQ(t.Str(t.processes()[stream.process].name), "GPU 0");
  const Track& main_thread = t.tracks()[t.slices()[op].track];
  EXPECT_EQ(t.Str(main_thread.name), "main");
  EXPECT_EQ(t.Str(t.processes()[main_thread.process].labels), "CPU");
  // String pid/tid keep their text.
  const Track& spans = t.tracks()[t.slices()[FindSlice(t, "PyTorch Profiler (0)")].track];
  EXPECT_EQ(t.processes()[spans.process].pid_text, "Spans");
  EXPECT_EQ(spans.tid_text, "PyTorch Profiler");
  // Other top-level keys are kept as raw JSON.
  bool found = false;
  for (const auto& [key, value] : t.metadata().extra)
    found |= key == "distributedInfo" && value == "{\"rank\": 3}";
  EXPECT_TRUE(found);
}

TEST(ImportTest, InputDimsReadAsPythonPrintsThemWhateverTheJsonSpacing) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
     "args": {"Input Dims": [[2, 3], []]}},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1,
     "args": {"Input Dims": [[2,3],[]]}},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 5, "dur": 1,
     "args": {"Input Dims": [
        [2,  3],
        []
     ]}},
    {"ph": "X", "cat": "cpu_op", "name": "e", "pid": 1, "tid": 1, "ts": 9, "dur": 1,
     "args": {"Input Dims": [["a,b", "c\",  d"], [1, 2]]}}
  ]})";
  Trace t;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(text, &t, &stats).ok());
  for (const char* name : {"a", "b", "c"}) {
    const uint32_t i = FindSlice(t, name);
    ASSERT_NE(i, kNone) << name;
    EXPECT_EQ(t.Str(t.slices()[i].input_shapes), "[[2, 3], []]") << name;
  }
  // Inside strings nothing changes.
  const uint32_t e = FindSlice(t, "e");
  ASSERT_NE(e, kNone);
  EXPECT_EQ(t.Str(t.slices()[e].input_shapes), R"([["a,b", "c\",  d"], [1, 2]])");
  EXPECT_EQ(t.slices()[FindSlice(t, "a")].input_shapes, t.slices()[FindSlice(t, "b")].input_shapes);
}

TEST(ImportTest, GzipAndPlainGiveTheSameTrace) {
  Trace plain, gz;
  ASSERT_TRUE(ImportTraceFromMemory(kModern, &plain).ok());
  const std::string compressed = Gzip(kModern);
  ImportStats stats;
  Status st = ImportTraceFromMemory(compressed, &gz, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.input_bytes, compressed.size());
  EXPECT_EQ(stats.json_bytes, std::string(kModern).size());
  ASSERT_EQ(plain.slices().size(), gz.slices().size());
  for (size_t i = 0; i < plain.slices().size(); ++i) {
    EXPECT_EQ(plain.slices()[i].ts_ns, gz.slices()[i].ts_ns);
    EXPECT_EQ(plain.Str(plain.slices()[i].name), gz.Str(gz.slices()[i].name));
  }
}

// The lower bound on an input's content that decides early whether the default import starts
// threads: the stored size, or for gzip the larger of it and the last member's ISIZE trailer, both
// from a file and from memory.
TEST(ImportTest, ContentSizeAtLeastReadsTheGzipTrailer) {
  const std::string json = std::string(kModern) + std::string(100000, ' ');
  const std::string gz = Gzip(json);
  ASSERT_LT(gz.size(), json.size());
  testing::ScopedTempDir dir("opscope_import_content_size");
  const std::string plain_path = dir.File("t.json"), gz_path = dir.File("t.json.gz");
  std::ofstream(plain_path, std::ios::binary) << json;
  std::ofstream(gz_path, std::ios::binary) << gz;
  std::unique_ptr<import::ImportInput> in;
  ASSERT_TRUE(import::ImportInput::OpenFile(plain_path, &in).ok());
  EXPECT_EQ(in->content_bytes_at_least(), json.size());
  ASSERT_TRUE(import::ImportInput::OpenFile(gz_path, &in).ok());
  EXPECT_TRUE(in->gzip());
  EXPECT_EQ(in->stored_bytes(), gz.size());
  EXPECT_EQ(in->content_bytes_at_least(), json.size());
  EXPECT_EQ(import::ImportInput::OpenMemory(gz)->content_bytes_at_least(), json.size());
  // Two members: the trailer is the last one's, a lower bound of the whole.
  const std::string two = Gzip(json) + Gzip("  ");
  EXPECT_EQ(import::ImportInput::OpenMemory(two)->content_bytes_at_least(), two.size());
}

// 2021 format: legacy categories, lowercase "external id", absolute integer-us timestamps,
// async_cpu_to_gpu flows with "bp": "e" on both ends; and a bare event array.
// Progress is reported as the input is read, in order, up to the whole input.
TEST(ImportTest, ProgressCountsTheInputUpToItsSize) {
  std::string text = "[";
  for (int i = 0; i < 3000; ++i) {
    text += (i ? "," : "") +
            std::string(R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1,)") +
            R"( "tid": 1, "ts": )" + std::to_string(i * 10) + R"(, "dur": 5})";
  }
  text += "]";
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  ImportOptions options;
  options.progress = [&](uint64_t read, uint64_t total) { calls.emplace_back(read, total); };
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(text, &trace, nullptr, options).ok());
  ASSERT_GE(calls.size(), 2u);  // batches of ~32 KiB
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, text.size());
    EXPECT_LE(calls[i].first, text.size());
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back().first, text.size());
  EXPECT_EQ(trace.slices().size(), 3000u);
}

TEST(ImportTest, ReadsLegacyCategoriesAndIntegerTimestamps) {
  const char json[] = R"([
    {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 1, "tid": 1,
     "ts": 1694039968955744, "dur": 41, "args": {"external id": 9}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
     "ts": 1694039968955750, "dur": 5, "args": {"external id": 9, "correlation": 3}},
    {"ph": "X", "cat": "Kernel", "name": "add_kernel", "pid": 0, "tid": "stream 7 ",
     "ts": 1694039968955800, "dur": 2, "args": {"correlation": 3, "external id": 9}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": "stream 7 ",
     "ts": 1694039968955900, "dur": 1, "args": {}},
    {"ph": "X", "cat": "Memset", "name": "Memset", "pid": 0, "tid": "stream 7 ",
     "ts": 1694039968955910, "dur": 1},
    {"ph": "s", "id": 3, "pid": 1, "tid": 1, "ts": 1694039968955750, "cat": "async_cpu_to_gpu", "name": "async_gpu", "bp": "e"},
    {"ph": "f", "id": 3, "pid": 0, "tid": "stream 7 ", "ts": 1694039968955800, "cat": "async_cpu_to_gpu", "name": "async_gpu", "bp": "e"}
  ])";
  Trace t;
  ImportStats stats;
  Status st = ImportTraceFromMemory(json, &t, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.skipped, 0u);
  const uint32_t op = FindSlice(t, "aten::add"), k = FindSlice(t, "add_kernel");
  EXPECT_EQ(t.slices()[op].ts_ns, 1694039968955744000);
  EXPECT_EQ(t.slices()[op].external_id, 9);
  EXPECT_EQ(t.slices()[op].kind, ActivityKind::kCpuOp);
  EXPECT_EQ(t.slices()[k].kind, ActivityKind::kKernel);
  EXPECT_EQ(t.slices()[FindSlice(t, "Memcpy HtoD")].kind, ActivityKind::kMemcpy);
  EXPECT_EQ(t.slices()[FindSlice(t, "Memset")].kind, ActivityKind::kMemset);
  EXPECT_EQ(t.Link(k).op, op);
  EXPECT_EQ(t.Link(k).runtime, FindSlice(t, "cudaLaunchKernel"));
  EXPECT_EQ(t.tracks()[t.slices()[k].track].tid_text, "stream 7 ");
  ASSERT_EQ(t.flows().size(), 1u);
  EXPECT_EQ(t.flows()[0].to, k);
  EXPECT_EQ(t.metadata().device_type, "CUDA");
}

TEST(ImportTest, NanosecondFractionsAndLargeEpochsAreExact) {
  const char json[] = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495519689.047, "dur": 63.813},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 0.0015, "dur": 1e1},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 7, "dur": -1}
  ]})";
  Trace t;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t, &stats).ok());
  EXPECT_EQ(t.slices()[FindSlice(t, "a")].ts_ns, 1712195495519689047);
  EXPECT_EQ(t.slices()[FindSlice(t, "a")].dur_ns, 63813);
  EXPECT_EQ(t.slices()[FindSlice(t, "b")].ts_ns, 2);  // 1.5 ns rounds half up
  EXPECT_EQ(t.slices()[FindSlice(t, "b")].dur_ns, 10000);
  EXPECT_EQ(t.slices()[FindSlice(t, "c")].dur_ns, 0);  // negative clamped, with a warning
  EXPECT_EQ(stats.skipped, 0u);
  EXPECT_EQ(stats.warnings.size(), 1u);
}

// Args keep their exact text whether they come last (as Kineto writes them) or not.
TEST(ImportTest, ArgsKeepTheirTextWhereverTheyAre) {
  const char json[] = R"J({"traceEvents": [
    {"args": {"External id": 3, "s": "}\"{", "n": [1, {"x": []}]}, "ph": "X", "cat": "cpu_op",
     "name": "first", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "middle", "args": {"External id": 4} , "pid": 1,
     "tid": 1, "ts": 2, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "last", "pid": 1, "tid": 1, "ts": 3, "dur": 1,
     "args": {"External id": 5, "correlation": 9}   }
  ]})J";
  Trace t;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t).ok());
  const Slice& first = t.slices()[FindSlice(t, "first")];
  EXPECT_EQ(t.ArgsJson(first.args), R"({"External id": 3, "s": "}\"{", "n": [1, {"x": []}]})");
  EXPECT_EQ(first.external_id, 3);
  EXPECT_EQ(t.ArgsJson(t.slices()[FindSlice(t, "middle")].args), R"({"External id": 4})");
  const Slice& last = t.slices()[FindSlice(t, "last")];
  EXPECT_EQ(t.ArgsJson(last.args), R"({"External id": 5, "correlation": 9})");
  EXPECT_EQ(last.correlation, 9);
}

// keep_args_of decides by kind and name: the same name under another kind is asked again, and a
// name is asked once per chunk of events, not per event, at any thread count.
TEST(ImportTest, KeepArgsOfIsAskedPerKindAndNameNotPerEvent) {
  std::string json = R"({"traceEvents": [)";
  constexpr int kRounds = 3000;
  for (int i = 0; i < kRounds; ++i) {
    json += fmt::format(
        R"({}{{"ph": "X", "cat": "cpu_op", "name": "keep", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"External id": {}}}}},)"
        R"({{"ph": "X", "cat": "cpu_op", "name": "drop", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"n": {}}}}},)"
        R"({{"ph": "X", "cat": "kernel", "name": "drop", "pid": 0, "tid": 7, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}})",
        i == 0 ? "" : ",", 10 * i, i + 1, 10 * i + 2, i, 10 * i + 4, i + 1);
  }
  json += "]}";
  for (int threads : {1, 3}) {
    std::atomic<int> asked{0};
    ImportOptions options;
    options.threads = threads;
    options.chunk_bytes = 16 << 10;
    options.keep_args_of = [&](ActivityKind kind, std::string_view name) {
      ++asked;
      return (kind == ActivityKind::kCpuOp && name == "keep") || kind == ActivityKind::kKernel;
    };
    Trace t;
    ASSERT_TRUE(ImportTraceFromMemory(json, &t, nullptr, options).ok()) << threads;
    ASSERT_EQ(t.slices().size(), size_t{3} * kRounds);
    for (const Slice& s : t.slices()) {
      const bool kept = s.kind == ActivityKind::kKernel || t.Str(s.name) == "keep";
      ASSERT_EQ(s.args != kNone, kept) << t.Str(s.name) << " at " << s.ts_ns;
      if (kept) {
        EXPECT_EQ(t.ArgsJson(s.args).front(), '{');
      }
    }
    // Three (kind, name) pairs, asked at most once each per chunk: far fewer than the 9,000
    // events with args.
    EXPECT_GE(asked.load(), 3) << threads;
    EXPECT_LT(asked.load(), kRounds) << threads;
  }
}

// ImportStats' stage times: each stage that ran has a time, and together they fit inside the
// import's own wall time (the stages never overlap on the calling thread with one thread; with
// threads the merge is one thread at a time).
TEST(ImportTest, StatsTimeTheStages) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < 4000; ++i) {
    json += fmt::format(
        R"({}{{"ph": "X", "cat": "cpu_op", "name": "op{}", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"External id": {}}}}})",
        i == 0 ? "" : ",", i % 5, 10 * i, i + 1);
  }
  json += "]}";
  for (int threads : {1, 3}) {
    ImportOptions options;
    options.threads = threads;
    options.chunk_bytes = 16 << 10;
    Trace t;
    ImportStats stats;
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(ImportTraceFromMemory(json, &t, &stats, options).ok());
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GT(stats.read_seconds, 0) << threads;
    EXPECT_GT(stats.merge_seconds, 0) << threads;
    EXPECT_GT(stats.finish_seconds, 0) << threads;
    if (threads == 1) {
      EXPECT_GT(stats.parse_seconds, 0);
    }
    EXPECT_LE(stats.read_seconds + stats.finish_seconds, wall) << threads;
    if (threads == 1) {
      EXPECT_LE(
          stats.read_seconds + stats.parse_seconds + stats.merge_seconds + stats.finish_seconds,
          wall);
    }
  }
}

TEST(ImportTest, BeginEndPairsBecomeSlices) {
  const char json[] = R"({"traceEvents": [
    {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 21}
  ]})";
  Trace t;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t, &stats).ok());
  ASSERT_EQ(t.slices().size(), 2u);
  EXPECT_EQ(t.slices()[FindSlice(t, "outer")].dur_ns, 10000);
  EXPECT_EQ(t.slices()[FindSlice(t, "inner")].parent, FindSlice(t, "outer"));
  EXPECT_EQ(stats.skipped, 1u);  // the unmatched "E"
}

TEST(ImportTest, DroppedEventsAndDeviceTypeFromOpscopeExports) {
  const char json[] = R"({"schemaVersion": 1, "droppedEvents": {"buffer_full": 12},
    "deviceType": "NEURON", "traceEvents": []})";
  Trace t;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t).ok());
  ASSERT_EQ(t.metadata().dropped.size(), 1u);
  EXPECT_EQ(t.metadata().dropped[0].first, "buffer_full");
  EXPECT_EQ(t.metadata().dropped[0].second, 12u);
  EXPECT_EQ(t.metadata().device_type, "NEURON");
}

// ---- Bad input ----

Status ImportText(const std::string& text, ImportStats* stats = nullptr) {
  Trace t;
  return ImportTraceFromMemory(text, &t, stats);
}

TEST(ImportErrorTest, EmptyInput) {
  Status st = ImportText("");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("empty input"), std::string::npos) << st.message();
  EXPECT_FALSE(ImportText("   \n ").ok());
}

TEST(ImportErrorTest, TruncatedFileNamesOffsetAndKeepsEarlierEvents) {
  std::string text = kModern;
  text.resize(text.find("\"ph\": \"s\"") + 3);  // cut inside the fourth event
  Trace t;
  Status st = ImportTraceFromMemory(text, &t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unexpected end of input"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
  EXPECT_EQ(st.offset(), text.size());
  // What was read before the cut is kept, finalized.
  EXPECT_EQ(t.slices().size(), 3u);
  EXPECT_TRUE(t.finalized());
}

TEST(ImportErrorTest, GzipCutInHalf) {
  std::string big = "{\"traceEvents\": [";
  for (int i = 0; i < 5000; ++i) {
    if (i) big += ",";
    big += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(i % 97) +
           "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i * 10) + ", \"dur\": 5}";
  }
  big += "]}";
  std::string gz = Gzip(big);
  Status st = ImportText(gz.substr(0, gz.size() / 2));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("gzip"), std::string::npos) << st.message();
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  // Corrupt bytes in the middle of the stream.
  std::string bad = gz;
  for (size_t i = bad.size() / 3; i < bad.size() / 3 + 64; ++i) bad[i] = static_cast<char>(0xAA);
  EXPECT_FALSE(ImportText(bad).ok());
}

TEST(ImportErrorTest, StructuralErrorsNameTheByteOffset) {
  const std::string text = R"({"traceEvents": [{"ph": "X"} x])";
  Status st = ImportText(text);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.offset(), text.find('x'));
  EXPECT_NE(st.message().find("expected ',' or ']'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("byte " + std::to_string(text.find('x'))), std::string::npos);

  st = ImportText(R"({"traceEvents": [{"ph": "X", "args": {"a": [1}}]})");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("expected ']'"), std::string::npos) << st.message();

  EXPECT_FALSE(ImportText(R"({"traceEvents": [{"ph":"i","ts":1,"pid":1,"tid":1},]})").ok());
  EXPECT_FALSE(ImportText(R"({"traceEvents": []} trailing)").ok());
  EXPECT_FALSE(ImportText(R"({"notEvents": 1})").ok());
  EXPECT_FALSE(ImportText("\"just a string\"").ok());
  EXPECT_FALSE(ImportText(R"({"traceEvents" 1})").ok());
}

TEST(ImportErrorTest, DeepNestingIsAnErrorNotARecursion) {
  std::string deep = R"({"traceEvents": [{"ph": "X", "args": )";
  for (int i = 0; i < 100000; ++i) deep += "[";
  Status st = ImportText(deep);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nested deeper"), std::string::npos) << st.message();
}

TEST(ImportErrorTest, BadEventsAreSkippedAndCounted) {
  const std::string text = std::string(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "good", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "string ts", "pid": 1, "tid": 1, "ts": "1", "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "huge ts", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "big int", "pid": 1, "tid": 1, "ts": 99999999999999999999999, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "no dur", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "X", "cat": "cpu_op", "name": "no ts", "pid": 1, "tid": 1, "dur": 1},
    {"cat": "cpu_op", "name": "no ph", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": 17, "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "bad pid", "pid": [1], "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "bad )") +
                           "\xff\xfe" + R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "Q", "name": "unknown phase", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "X", "cat": "cpu_op", "name": "malformed" "pid": 1},
    42,
    {"ph": "X", "cat": "cpu_op", "name": "good2", "pid": 1, "tid": 1, "ts": 2, "dur": 1}
  ]})";
  ImportStats stats;
  Trace t;
  Status st = ImportTraceFromMemory(text, &t, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.events, 14u);
  EXPECT_EQ(stats.slices, 2u);
  EXPECT_EQ(stats.skipped, 12u);
  EXPECT_EQ(t.metadata().skipped_events, 12u);
  ASSERT_FALSE(stats.warnings.empty());
  EXPECT_NE(stats.warnings[0].find("traceEvents entry 1 at byte"), std::string::npos)
      << stats.warnings[0];
}

TEST(ImportErrorTest, MissingFileIsAClearError) {
  Trace t;
  Status st = ImportTrace("/nonexistent/trace.json", &t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/trace.json"), std::string::npos);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.file(), "/nonexistent/trace.json");
}

TEST(ImportErrorTest, FileErrorsNameTheFileAndTheByte) {
  const std::string path = ::testing::TempDir() + "/opscope_import_bad.json";
  const std::string text = R"({"traceEvents": [{"ph": "X"} x])";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  Trace t;
  Status st = ImportTrace(path, &t);
  std::remove(path.c_str());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.file(), path);
  EXPECT_EQ(st.offset(), text.find('x'));
  EXPECT_EQ(st.message(), path + ": byte " + std::to_string(text.find('x')) +
                              ": expected ',' or ']' after traceEvents entry 0, found 'x'");
}

// Errors for paths that are not readable trace files name the path.
TEST(ImportErrorTest, DirectoriesAndUnreadableFilesNameThePath) {
  Trace t;
  const std::string dir = std::filesystem::temp_directory_path().string();
  Status st = ImportTrace(dir, &t);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(dir + ": is a folder, not a profile"), std::string::npos)
      << st.message();
  st = ImportTrace("/proc/self/mem", &t);  // opens, but reading fails
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/proc/self/mem"), std::string::npos) << st.message();
}

// Memory is not reserved from the file's size: a 40 GB file (sparse: all zeros) and a "4 GB" gzip
// file fail at their first bytes with a message naming them, not with std::bad_alloc.
TEST(ImportErrorTest, HugeFilesFailOnTheirContentNotOnTheirSize) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string plain = (dir / ("opscope_huge_" + std::to_string(getpid()) + ".json")).string();
  const std::string gz = plain + ".gz";
  {
    std::ofstream(plain) << "";
    std::ofstream(gz, std::ios::binary) << "\x1f\x8b";
  }
  std::filesystem::resize_file(plain, uint64_t{40} << 30);
  std::filesystem::resize_file(gz, uint64_t{4} << 30);
  Trace t;
  const Status a = ImportTrace(plain, &t);
  const Status b = ImportTrace(gz, &t);
  std::filesystem::remove(plain);
  std::filesystem::remove(gz);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.message().find(plain), std::string::npos) << a.message();
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find(gz), std::string::npos) << b.message();
  EXPECT_NE(b.message().find("gzip"), std::string::npos) << b.message();
}

// Hostile inputs that held in an adversarial pass, kept as tests (smaller, to stay fast): a cut
// anywhere (plain and gzip), nesting a million deep, a long name, NaN / 1e400 times, a
// gzip bomb of whitespace.
// Every third offset (each import of a tiny input costs the importer's full setup, ~1.5 ms).
TEST(HostileInputTest, CutAnywhere) {
  const std::string full = kModern;
  for (size_t cut = 0; cut + 1 < full.size(); cut += 3) {
    Trace t;
    EXPECT_FALSE(ImportTraceFromMemory(full.substr(0, cut), &t).ok()) << "cut at " << cut;
  }
  const std::string gz = Gzip(full);
  for (size_t cut = 1; cut < gz.size(); cut += 3) {
    Trace t;
    EXPECT_FALSE(ImportTraceFromMemory(gz.substr(0, cut), &t).ok()) << "gzip cut at " << cut;
  }
}

TEST(HostileInputTest, MillionDeepNesting) {
  EXPECT_FALSE(
      ImportText(R"({"traceEvents": [{"ph": "X", "args": )" + std::string(1000000, '[')).ok());
}

TEST(HostileInputTest, HugeName) {
  const std::string name(4 << 20, 'n');
  Trace t;
  ASSERT_TRUE(ImportTraceFromMemory(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": ")" +
                                        name + R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})",
                                    &t)
                  .ok());
  ASSERT_EQ(t.slices().size(), 1u);
  EXPECT_EQ(t.Str(t.slices()[0].name).size(), name.size());
}

TEST(HostileInputTest, NanAndInfiniteTimes) {
  Trace t;
  ImportStats stats;
  const Status st = ImportTraceFromMemory(
      R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": NaN, "dur": 1},
                          {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1e400, "dur": 1},
                          {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 1, "dur": -1e400}]})",
      &t, &stats);
  EXPECT_TRUE(!st.ok() || stats.skipped >= 2) << st.message();
}

// 16 MB of whitespace in 16 KB of gzip: streamed through, never held.
TEST(HostileInputTest, GzipBombOfWhitespace) {
  std::string bomb = R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, )"
                     R"("tid": 1, "ts": 1, "dur": 1},)";
  bomb.append(size_t{16} << 20, ' ');
  bomb += R"({"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1}]})";
  const std::string compressed = Gzip(bomb);
  bomb.clear();
  bomb.shrink_to_fit();
  EXPECT_LT(compressed.size(), size_t{1} << 20);
  Trace t;
  const Status st = ImportTraceFromMemory(compressed, &t);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(t.slices().size(), 2u);
}

// Every scanner kernel this CPU runs; each test below runs them all.
std::vector<internal::JsonScanKernel> Kernels() {
  using K = internal::JsonScanKernel;
  std::vector<K> out;
  for (K k : {K::kGeneric, K::kAvx2, K::kAvx512}) {
    if (internal::JsonScanKernelSupported(k)) out.push_back(k);
  }
  return out;
}

// The stream must hand out identical values however the input is split into reads.
TEST(JsonStreamTest, ValuesSurviveEveryBufferBoundary) {
  const std::string text = R"( {"a": "x\"}]{[", "b": [1, {"c": "\\"}]}  "tail\\"  -12.5e3 )";
  for (size_t run = 0; run < Kernels().size() * 23; ++run) {
    const auto kernel = Kernels()[run / 23];
    const size_t buffer = 1 + run % 23;
    auto source = import::OpenMemorySource(text);
    import::JsonStream stream(source.get(), 8, buffer, kernel);
    std::string_view v;
    ASSERT_TRUE(stream.ReadValue(&v).ok()) << buffer;
    EXPECT_EQ(v, R"({"a": "x\"}]{[", "b": [1, {"c": "\\"}]})") << buffer;
    ASSERT_TRUE(stream.ReadValue(&v).ok()) << buffer;
    EXPECT_EQ(v, R"("tail\\")") << buffer;
    ASSERT_TRUE(stream.ReadValue(&v).ok()) << buffer;
    EXPECT_EQ(v, "-12.5e3") << buffer;
    int c = 0;
    ASSERT_TRUE(stream.Peek(&c).ok());
    EXPECT_EQ(c, -1);
  }
}

// Values longer than the 64-byte blocks the scanner's fast path reads: brackets and escaped
// quotes inside strings, strings and escapes spanning block edges, deep-ish nesting.
TEST(JsonStreamTest, LongValuesScanLikeShortOnes) {
  std::string value =
      R"({"name": ")" + std::string(70, 'n') + R"({[}]\"quoted\" \\", "args": {"a": [)";
  for (int i = 0; i < 40; ++i)
    value += (i ? ", " : "") + std::string("[\"]}\\\"") + std::to_string(i) + "\"]";
  value += R"(], "b": ")" + std::string(63, 'x') + R"(\\"}, "tail": "}]"})";
  const std::string text = " " + value + " , " + value + " ";
  for (auto kernel : Kernels()) {
    for (size_t buffer : {1, 7, 63, 64, 65, 100, 128, 4096}) {
      auto source = import::OpenMemorySource(text);
      import::JsonStream stream(source.get(), 8, buffer, kernel);
      std::string_view v;
      ASSERT_TRUE(stream.ReadValue(&v).ok()) << buffer;
      EXPECT_EQ(v, value) << buffer;
      int c = 0;
      ASSERT_TRUE(stream.Peek(&c).ok());
      ASSERT_EQ(c, ',');
      stream.Skip();
      ASSERT_TRUE(stream.ReadValue(&v).ok()) << buffer;
      EXPECT_EQ(v, value) << buffer;
    }
  }
  // A mismatched bracket far into a long value is still found, with its offset.
  std::string bad = "{\"a\": [" + std::string(100, ' ') + "}]";
  for (auto kernel : Kernels()) {
    auto source = import::OpenMemorySource(bad);
    import::JsonStream stream(source.get(), 8, 4096, kernel);
    std::string_view v;
    Status st = stream.ReadValue(&v);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.offset(), bad.find('}'));
  }
}

// Batches: every element exactly once, in order, whatever the buffer size; each batch is one
// JSON array of its elements; the stream's own bytes are intact afterwards.
TEST(JsonStreamTest, ElementBatchesCoverTheArrayExactly) {
  std::vector<std::string> elements;
  std::string text = "[";
  for (int i = 0; i < 300; ++i) {
    std::string e = "{\"i\": " + std::to_string(i) + ", \"s\": \"" + std::string(i % 90, 'x') +
                    (i % 7 == 0 ? "\\\"]}" : "") + "\", \"a\": [" + std::to_string(i) + "]}";
    if (i % 11 == 0) e = std::to_string(i);  // scalars are elements too
    elements.push_back(e);
    text += (i ? (i % 3 ? ",\n  " : ",") : "") + e;
  }
  text += " ] , \"after\"";
  for (auto kernel : Kernels()) {
    for (size_t buffer : {1, 16, 100, 1000, 1 << 16}) {
      for (size_t max_bytes : {1, 500, 1 << 20}) {
        auto source = import::OpenMemorySource(text);
        import::JsonStream stream(source.get(), 8, buffer, kernel);
        int c = 0;
        ASSERT_TRUE(stream.Peek(&c).ok());
        ASSERT_EQ(c, '[');
        stream.Skip();
        import::JsonStream::Batch batch;
        size_t seen = 0;
        bool end = false;
        while (!end) {
          Status st = stream.ReadElements(max_bytes, "entry", seen, &batch, &end);
          ASSERT_TRUE(st.ok()) << st.message();
          if (!end) {
            ASSERT_FALSE(batch.elements.empty());
          }
          for (size_t k = 0; k < batch.elements.size(); ++k) {
            ASSERT_LT(seen + k, elements.size());
            EXPECT_EQ(batch.elements[k], elements[seen + k]) << buffer << " " << max_bytes;
            EXPECT_EQ(text.substr(batch.offsets[k], batch.elements[k].size()), elements[seen + k]);
          }
          if (!batch.elements.empty()) {
            EXPECT_EQ(batch.array.front(), '[');
            EXPECT_EQ(batch.array.back(), ']');
            EXPECT_EQ(batch.array.substr(1, batch.elements[0].size()), batch.elements[0]);
          }
          seen += batch.elements.size();
        }
        EXPECT_EQ(seen, elements.size());
        // The byte the last batch's ']' replaced is back.
        ASSERT_TRUE(stream.Peek(&c).ok());
        EXPECT_EQ(c, ',');
        stream.Skip();
        std::string_view v;
        ASSERT_TRUE(stream.ReadValue(&v).ok());
        EXPECT_EQ(v, "\"after\"");
      }
    }
  }
}

// An error after complete elements: those elements first, then the error, with its offset.
TEST(JsonStreamTest, ElementBatchReturnsGoodElementsBeforeAnError) {
  const std::string text = R"([{"a": 1}, {"b": 2} x {"c": 3}])";
  auto source = import::OpenMemorySource(text);
  import::JsonStream stream(source.get(), 8, 4096);
  int c = 0;
  ASSERT_TRUE(stream.Peek(&c).ok());
  stream.Skip();
  import::JsonStream::Batch batch;
  bool end = false;
  ASSERT_TRUE(stream.ReadElements(1 << 20, "entry", 0, &batch, &end).ok());
  ASSERT_EQ(batch.elements.size(), 2u);
  EXPECT_FALSE(end);
  Status st = stream.ReadElements(1 << 20, "entry", 2, &batch, &end);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.offset(), text.find('x'));
  EXPECT_NE(st.message().find("expected ',' or ']' after entry 1"), std::string::npos)
      << st.message();
}

// The batch parse and the per-event parse build the same trace, bad events included.
TEST(ImportTest, BatchedAndPerEventParsesAgree) {
  std::string text = "{\"traceEvents\": [";
  for (int i = 0; i < 2000; ++i) {
    if (i) text += ",";
    if (i == 700) {
      text += R"({"ph": "X", "name": "wrong type", "pid": [1], "tid": 1, "ts": 1, "dur": 1})";
      continue;
    }
    if (i == 1500) {
      text += R"({"ph": "X", "name": "missing comma" "pid": 1})";
      continue;
    }
    text += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(i % 13) +
            "\", \"pid\": 1, \"tid\": " + std::to_string(i % 3) +
            ", \"ts\": " + std::to_string(i * 10) +
            ".5, \"dur\": 4, \"args\": {\"External id\": " + std::to_string(i) +
            ", \"Input Dims\": [[2, " + std::to_string(i % 5) + "]]}}";
  }
  text += "]}";
  ImportOptions per_event;
  per_event.batch_events = false;
  Trace a, b;
  ImportStats sa, sb;
  ASSERT_TRUE(ImportTraceFromMemory(text, &a, &sa).ok());
  ASSERT_TRUE(ImportTraceFromMemory(text, &b, &sb, per_event).ok());
  EXPECT_EQ(sa.events, 2000u);
  EXPECT_EQ(sa.skipped, 2u);
  EXPECT_EQ(sa.warnings, sb.warnings);
  ASSERT_EQ(a.slices().size(), b.slices().size());
  for (size_t i = 0; i < a.slices().size(); ++i) {
    EXPECT_EQ(a.slices()[i].ts_ns, b.slices()[i].ts_ns);
    EXPECT_EQ(a.Str(a.slices()[i].name), b.Str(b.slices()[i].name));
    EXPECT_EQ(a.Str(a.slices()[i].input_shapes), b.Str(b.slices()[i].input_shapes));
    EXPECT_EQ(a.ArgsJson(a.slices()[i].args), b.ArgsJson(b.slices()[i].args));
  }
}

}  // namespace
}  // namespace opscope

namespace opscope {
namespace {

// Staged slices come out grouped by track, in insertion order within each track, none lost,
// across chunk boundaries; slices without a valid track come last.
TEST(SliceStageTest, HandsOverGroupedByTrackInInsertionOrder) {
  Trace trace;
  for (int t = 0; t < 5; ++t) trace.AddThreadTrack(trace.FindOrAddProcess(1), t, "");
  std::vector<std::vector<int64_t>> expected(6);
  {
    import::SliceStage stage;
    for (int i = 0; i < 200000; ++i) {
      Slice s;
      // Track 0 is busy, 1-3 interleave, 4 gets one slice, some have no track.
      const int t = i % 7 == 0 ? 0 : (i % 1000 == 1 ? 4 : (i % 5000 == 3 ? -1 : 1 + i % 3));
      s.track = t < 0 ? kNone : static_cast<uint32_t>(t);
      s.ts_ns = i;
      stage.Add(s);
      expected[t < 0 ? 5 : t].push_back(i);
    }
    stage.MoveTo(&trace);
  }
  std::vector<int64_t> want;
  for (const auto& v : expected) want.insert(want.end(), v.begin(), v.end());
  ASSERT_EQ(trace.slices().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(trace.slices()[i].ts_ns, want[i]) << i;
}

// A trace with a great many one-slice threads costs a small chunk each, not a page mapping each
// (the mapping count is limited), and nothing is lost.
TEST(SliceStageTest, ManyShortTracks) {
  Trace trace;
  import::SliceStage stage;
  for (uint32_t i = 0; i < 300000; ++i) {
    Slice s;
    s.track = i;
    s.ts_ns = i;
    stage.Add(s);
  }
  stage.MoveTo(&trace);
  ASSERT_EQ(trace.slices().size(), 300000u);
  EXPECT_EQ(trace.slices().back().ts_ns, 299999);
}

}  // namespace
}  // namespace opscope

namespace opscope {
namespace {

// Timestamps parse exactly: every digit count the eight-at-a-time path and the digit-by-digit
// path split differently, fractions rounded half up at the nanosecond, overflow refused.
TEST(NumberTextTest, MicrosToNanosIsExact) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 200000; ++round) {
    const int whole_digits = 1 + static_cast<int>(next() % 20);
    std::string text = std::to_string(1 + next() % 9);
    for (int d = 1; d < whole_digits; ++d) text += static_cast<char>('0' + next() % 10);
    if (next() % 8 == 0) text = "0";
    const int frac_digits = static_cast<int>(next() % 10);
    std::string frac;
    for (int d = 0; d < frac_digits; ++d) frac += static_cast<char>('0' + next() % 10);
    const bool negative = next() % 5 == 0;
    std::string full = (negative ? "-" : "") + text + (frac.empty() ? "" : "." + frac);
    if (next() % 4 == 0) full += " \n";
    // Reference in 128-bit arithmetic.
    unsigned __int128 whole = 0;
    for (char c : text) whole = whole * 10 + static_cast<unsigned>(c - '0');
    // The picoseconds (six decimals, rounded half up by the seventh), then the nanoseconds.
    unsigned ps = 0;
    for (int d = 0; d < 6; ++d) ps = ps * 10 + (d < frac_digits ? frac[d] - '0' : 0);
    if (frac_digits > 6 && frac[6] >= '5') ++ps;
    const unsigned ns = ps / 1000 + (ps % 1000 >= 500 ? 1 : 0);
    const unsigned __int128 total = whole * 1000 + ns;
    const bool fits = whole <= static_cast<unsigned __int128>(INT64_MAX / 1000 - 1);
    int64_t got = 0;
    const bool ok = import::ParseMicrosToNanos(full, &got);
    ASSERT_EQ(ok, fits) << full;
    // The padded variant reads past the token: followed by digits, a quote, anything.
    const std::string padded = full + (round % 3 == 0 ? "123456789" : ",\"x\": 9}") + "        ";
    int64_t got_padded = 0;
    ASSERT_EQ(import::ParseMicrosToNanosPadded(std::string_view(padded).substr(0, full.size()),
                                               &got_padded),
              fits)
        << full;
    if (fits) {
      ASSERT_EQ(got_padded, got) << full;
    }
    if (ok) {
      const int64_t want = negative ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
      ASSERT_EQ(got, want) << full;
    }
    int64_t as_int = 0;
    if (frac.empty() && whole <= static_cast<unsigned __int128>(INT64_MAX / 10)) {
      ASSERT_TRUE(import::ParseInt64(full, &as_int)) << full;
      ASSERT_EQ(as_int, negative ? -static_cast<int64_t>(whole) : static_cast<int64_t>(whole));
    }
  }
  int64_t v = 0;
  EXPECT_FALSE(import::ParseMicrosToNanos("0123", &v));  // leading zero
  EXPECT_FALSE(import::ParseMicrosToNanos("12345678x", &v));
  EXPECT_FALSE(import::ParseMicrosToNanos("1234567890123456789012", &v));
  EXPECT_FALSE(import::ParseMicrosToNanos("1.", &v));
  EXPECT_TRUE(import::ParseMicrosToNanos("1.5e3", &v));
  EXPECT_EQ(v, 1500000);
  // XProf's %.17g of ps / 1e6: 3000500 ps is a half ns, rounded up; 1020123456 ps + noise.
  EXPECT_TRUE(import::ParseMicrosToNanos("3.0004999999999999", &v));
  EXPECT_EQ(v, 3001);
  EXPECT_TRUE(import::ParseMicrosToNanos("1020.1234560000001", &v));
  EXPECT_EQ(v, 1020123);
  EXPECT_TRUE(import::ParseMicrosToNanos("0.99999999", &v));  // 1000000 ps: carried
  EXPECT_EQ(v, 1000);
  EXPECT_FALSE(import::ParseInt64("99999999999999999999", &v));
  EXPECT_TRUE(import::ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_FALSE(import::ParseInt64("9223372036854775808", &v));
  EXPECT_TRUE(import::ParseInt64("-9223372036854775807", &v));
  EXPECT_EQ(v, -INT64_MAX);
  EXPECT_TRUE(import::ParseInt64("12345678901234567.000", &v));
  EXPECT_EQ(v, 12345678901234567);
}

}  // namespace
}  // namespace opscope

namespace opscope {
namespace {

// Timestamps at the edges of what JSON allows: events outside +-2^62 ns are skipped with a
// warning, and every analysis over the rest runs without overflow (the sanitizer build checks).
TEST(ImportErrorTest, ExtremeTimestampsAreBoundedAndAnalysesDoNotOverflow) {
  std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "far past", "pid": 1, "tid": 1, "ts": -4611686018427387, "dur": 1, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "too far", "pid": 1, "tid": 1, "ts": -9000000000000000, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "too long", "pid": 1, "tid": 1, "ts": 4000000000000000, "dur": 900000000000000},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": -4611686018427387, "dur": 1, "args": {"External id": 1, "correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4611686018427386, "dur": 1, "args": {"External id": 1, "correlation": 5}})";
  for (int i = 0; i < 8; ++i) {
    text +=
        R"(, {"ph": "X", "cat": "cpu_op", "name": "long", "pid": 1, "tid": 2, "ts": 0, "dur": 4611686018427386})";
  }
  text += "]}";
  Trace t;
  ImportStats stats;
  ASSERT_TRUE(ImportTraceFromMemory(text, &t, &stats).ok());
  EXPECT_EQ(stats.skipped, 2u);
  EXPECT_EQ(stats.slices, 11u);
  const KeyAverages avg = KeyAverages::FromTrace(t);
  EXPECT_FALSE(avg.Table("self_cpu_time_total", 10).empty());
  const DeviceTimeline tl = ComputeDeviceTimeline(t, kNone, true);
  EXPECT_GE(tl.total_ns, tl.busy_ns);
  (void)ComputeOpSummary(t).ToJson();
  (void)ComputeKernelSummary(t).ToJson();
  const LaunchStatistics launch = ComputeLaunchStatistics(t);
  EXPECT_GT(launch.launch_delay.max_ns, 0);
  (void)DiffTraces(t, t).ToJson();
}

}  // namespace
}  // namespace opscope
