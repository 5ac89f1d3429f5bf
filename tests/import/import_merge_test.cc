// The merge of chunk-local translations (chunk_translation.h, EventTranslator::Merge): with one
// event per chunk and with a few events per chunk, on 2, 3 and 8 threads, the trace is the one a
// one-thread import builds: string ids in first-use order, processes and tracks in first-sight
// order (also those first seen in a later chunk), arg handles, "B"/"E" pairs whose ends lie in
// different chunks, and warnings from middle chunks with their global entry index and byte offset.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/import.h"

namespace opscope {
namespace {

// Entry indices (0-based) are noted beside the events the expectations name.
const char kTrace[] = R"J({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
   "args": {"External id": 3, "Input Dims": [[2,3],[3,4]]}},
  {"ph": "B", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 5,
   "args": {"k": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20,
   "dur": 5, "args": {"correlation": 9, "External id": 3}},
  {"ph": "s", "id": 9, "pid": 1, "tid": 1, "ts": 20, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "cpu_op", "name": "aten::bad", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
  {"ph": "E", "pid": 1, "tid": 2, "ts": 70},
  {"ph": "X", "cat": "kernel", "name": "mm_kernel", "pid": "GPU 0", "tid": "stream 7", "ts": 40,
   "dur": 8, "args": {"correlation": 9, "External id": 3}},
  {"ph": "f", "id": 9, "pid": "GPU 0", "tid": "stream 7", "ts": 40, "cat": "ac2g", "name": "ac2g",
   "bp": "e"},
  {"ph": "C", "name": "mem", "pid": 1, "ts": 30, "args": {"used": 5, "free": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::neg", "pid": 1, "tid": 3, "ts": 80, "dur": -2},
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 3, "args": {"name": "late thread"}},
  {"ph": "i", "name": "marker", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 90, "s": "t",
   "args": {"note": "x"}},
  {"ph": "E", "pid": 1, "tid": 1, "ts": 100},
  {"ph": "Q", "pid": 1, "tid": 1, "ts": 1},
  {"ph": "B", "cat": "cpu_op", "name": "open", "pid": 1, "tid": 4, "ts": 110},
  {"ph": "M", "name": "process_name", "pid": "GPU 0", "args": {"name": "device"}}
]})J";

Trace ImportWith(int threads, size_t chunk_bytes, ImportStats* stats) {
  ImportOptions options;
  options.threads = threads;
  options.chunk_bytes = chunk_bytes;
  Trace t;
  EXPECT_TRUE(ImportTraceFromMemory(kTrace, &t, stats, options).ok());
  return t;
}

void ExpectSame(const Trace& a, const ImportStats& sa, const Trace& b, const ImportStats& sb) {
  ASSERT_EQ(a.strings().size(), b.strings().size());
  for (StringId i = 0; i < a.strings().size(); ++i) EXPECT_EQ(a.Str(i), b.Str(i)) << i;
  ASSERT_EQ(a.processes().size(), b.processes().size());
  for (size_t i = 0; i < a.processes().size(); ++i) {
    EXPECT_EQ(a.processes()[i].pid, b.processes()[i].pid);
    EXPECT_EQ(a.processes()[i].pid_text, b.processes()[i].pid_text);
    EXPECT_EQ(a.processes()[i].name, b.processes()[i].name);
    EXPECT_EQ(a.processes()[i].is_device, b.processes()[i].is_device);
  }
  ASSERT_EQ(a.tracks().size(), b.tracks().size());
  for (size_t i = 0; i < a.tracks().size(); ++i) {
    EXPECT_EQ(a.tracks()[i].process, b.tracks()[i].process);
    EXPECT_EQ(a.tracks()[i].tid, b.tracks()[i].tid);
    EXPECT_EQ(a.tracks()[i].tid_text, b.tracks()[i].tid_text);
    EXPECT_EQ(a.tracks()[i].name, b.tracks()[i].name);
    EXPECT_EQ(a.tracks()[i].kind, b.tracks()[i].kind);
  }
  ASSERT_EQ(a.slices().size(), b.slices().size());
  for (size_t i = 0; i < a.slices().size(); ++i) {
    const Slice& x = a.slices()[i];
    const Slice& y = b.slices()[i];
    EXPECT_EQ(x.ts_ns, y.ts_ns);
    EXPECT_EQ(x.dur_ns, y.dur_ns);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.category, y.category);
    EXPECT_EQ(x.track, y.track);
    EXPECT_EQ(x.args, y.args);
    EXPECT_EQ(a.ArgsJson(x.args), b.ArgsJson(y.args));  // args packed on the parse threads
    EXPECT_EQ(x.input_shapes, y.input_shapes);
    EXPECT_EQ(x.parent, y.parent);
    EXPECT_EQ(a.Link(static_cast<uint32_t>(i)).op, b.Link(static_cast<uint32_t>(i)).op);
  }
  ASSERT_EQ(a.instants().size(), b.instants().size());
  for (size_t i = 0; i < a.instants().size(); ++i) {
    EXPECT_EQ(a.instants()[i].args, b.instants()[i].args);
    EXPECT_EQ(a.instants()[i].track, b.instants()[i].track);
  }
  ASSERT_EQ(a.counters().size(), b.counters().size());
  for (size_t i = 0; i < a.counters().size(); ++i) {
    EXPECT_EQ(a.counters()[i].track, b.counters()[i].track);
    EXPECT_EQ(a.counters()[i].value, b.counters()[i].value);
  }
  ASSERT_EQ(a.flows().size(), b.flows().size());
  for (size_t i = 0; i < a.flows().size(); ++i) {
    EXPECT_EQ(a.flows()[i].from, b.flows()[i].from);
    EXPECT_EQ(a.flows()[i].to, b.flows()[i].to);
  }
  EXPECT_EQ(sa.warnings, sb.warnings);
  EXPECT_EQ(sa.events, sb.events);
  EXPECT_EQ(sa.skipped, sb.skipped);
  EXPECT_EQ(sa.slices, sb.slices);
  EXPECT_EQ(sa.counters, sb.counters);
  EXPECT_EQ(a.metadata().device_type, b.metadata().device_type);
}

TEST(ImportMergeTest, OneThreadReadsTheTraceAsWritten) {
  ImportStats stats;
  const Trace t = ImportWith(1, size_t{256} << 10, &stats);
  EXPECT_EQ(stats.events, 16u);
  // Skipped: entry 4 (bad ts), 5 ("E" on a thread with no "B"), 13 (phase "Q").
  EXPECT_EQ(stats.skipped, 3u);
  // Strings in first-use order: entry 0's category, name, shapes; entry 1's category, name.
  EXPECT_EQ(t.Str(1), "cpu_op");
  EXPECT_EQ(t.Str(2), "aten::mm");
  EXPECT_EQ(t.Str(3), "[[2, 3], [3, 4]]");
  EXPECT_EQ(t.Str(4), "user_annotation");
  EXPECT_EQ(t.Str(5), "step");
  // Tracks in first-sight order; the string-named device stream is first seen at entry 6, the
  // counter series at entry 8, thread 3 at entry 9.
  ASSERT_GE(t.tracks().size(), 6u);
  EXPECT_EQ(t.tracks()[0].tid, 1);
  EXPECT_EQ(t.tracks()[1].tid, 2);
  EXPECT_EQ(t.tracks()[2].tid_text, "stream 7");
  EXPECT_EQ(t.tracks()[2].kind, TrackKind::kDeviceStream);
  EXPECT_EQ(t.tracks()[3].kind, TrackKind::kCounter);
  EXPECT_EQ(t.tracks()[4].kind, TrackKind::kCounter);
  EXPECT_EQ(t.Str(t.tracks()[5].name), "late thread");
  EXPECT_EQ(t.processes()[1].pid_text, "GPU 0");
  EXPECT_EQ(t.Str(t.processes()[1].name), "device");
  EXPECT_TRUE(t.processes()[1].is_device);
  // Warnings in stream order with their entry index (and byte offset when skipped).
  ASSERT_EQ(stats.warnings.size(), 5u);
  EXPECT_NE(stats.warnings[0].find("traceEvents entry 4 at byte "), std::string::npos);
  EXPECT_NE(stats.warnings[1].find("traceEvents entry 5 at byte "), std::string::npos);
  EXPECT_NE(stats.warnings[1].find("without a matching \"B\""), std::string::npos);
  EXPECT_EQ(stats.warnings[2], "traceEvents entry 9: negative dur clamped to 0");
  EXPECT_NE(stats.warnings[3].find("traceEvents entry 13 at byte "), std::string::npos);
  EXPECT_NE(stats.warnings[4].find("\"B\" event at ts 110000 ns never ended"), std::string::npos);
  // "B" at entry 1 ends at entry 12: 5 us to 100 us.
  const StringId step = t.strings().Find("step");
  bool found = false;
  for (const Slice& s : t.slices()) {
    if (s.name == step) {
      found = true;
      EXPECT_EQ(s.ts_ns, 5000);
      EXPECT_EQ(s.dur_ns, 95000);
      EXPECT_EQ(t.ArgsJson(s.args), "{\"k\": 1}");
    }
  }
  EXPECT_TRUE(found);
  ASSERT_EQ(t.flows().size(), 1u);
  EXPECT_EQ(t.counters().size(), 2u);
}

TEST(ImportMergeTest, EveryChunkingAndThreadCountGivesTheSameTrace) {
  ImportStats one_stats;
  const Trace one = ImportWith(1, size_t{256} << 10, &one_stats);
  for (size_t chunk : {size_t{1}, size_t{300}, size_t{700}}) {
    for (int threads : {2, 3, 8}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, chunks of " + std::to_string(chunk));
      ImportStats stats;
      const Trace many = ImportWith(threads, chunk, &stats);
      ExpectSame(one, one_stats, many, stats);
    }
  }
}

// Warnings past the kept number are still counted, in the same order, when they come from many
// chunks.
TEST(ImportMergeTest, WarningLimitCountsAcrossChunks) {
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 200; ++i) {
    json += i ? "," : "";
    json += i % 3 == 0
                ? "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": \"bad\"}"
                : "{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": " + std::to_string(i % 5) +
                      ", \"ts\": " + std::to_string(i) + ", \"dur\": 1}";
  }
  json += "]}";
  ImportOptions one;
  one.threads = 1;
  ImportStats s1;
  Trace t1;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t1, &s1, one).ok());
  EXPECT_EQ(s1.skipped, 67u);
  ASSERT_EQ(s1.warnings.size(), one.max_warning_messages);
  EXPECT_NE(s1.warnings[1].find("traceEvents entry 3 at byte"), std::string::npos);
  ImportOptions many = one;
  many.threads = 3;
  many.chunk_bytes = 200;
  ImportStats s3;
  Trace t3;
  ASSERT_TRUE(ImportTraceFromMemory(json, &t3, &s3, many).ok());
  ExpectSame(t1, s1, t3, s3);
}

}  // namespace
}  // namespace opscope
