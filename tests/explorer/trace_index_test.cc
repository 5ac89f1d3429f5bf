// TraceIndex (lanes, rows, level-of-detail merging), JsonWriter escaping, FindTraces.
#include "explorer/trace_index.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/json_writer.h"
#include "explorer/summary.h"
#include "opscope/explorer.h"
#include "opscope/import.h"

namespace opscope::explorer {
namespace {

// One host thread: op A [0,100) holding runtime call R [10,20) and op B [30,60); a device
// kernel K [40,50) launched by R; and 1000 tiny ops C after them.
Trace SmallTrace() {
  Trace t;
  const uint32_t host = t.AddProcess(10, "python");
  const uint32_t thread = t.AddThreadTrack(host, 10, "main");
  const uint32_t gpu = t.AddProcess(0, "GPU 0", true);
  const uint32_t stream = t.AddThreadTrack(gpu, 7, "stream 7", TrackKind::kDeviceStream);
  auto add = [&](const char* name, ActivityKind kind, uint32_t track, int64_t ts, int64_t dur,
                 int64_t ext, int64_t corr) {
    Slice s;
    s.name = t.Intern(name);
    s.kind = kind;
    s.track = track;
    s.ts_ns = ts;
    s.dur_ns = dur;
    s.external_id = ext;
    s.correlation = corr;
    t.AddSlice(s);
  };
  add("A", ActivityKind::kCpuOp, thread, 0, 100, 1, 0);
  add("cudaLaunchKernel", ActivityKind::kRuntime, thread, 10, 10, 1, 5);
  add("B", ActivityKind::kCpuOp, thread, 30, 30, 2, 0);
  add("cudaDeviceSynchronize", ActivityKind::kRuntime, thread, 62, 5, 0, 0);
  add("K", ActivityKind::kKernel, stream, 40, 10, 1, 5);
  for (int i = 0; i < 1000; ++i) add("C", ActivityKind::kCpuOp, thread, 1000 + i * 3, 2, 0, 0);
  t.Finalize();
  return t;
}

TEST(TraceIndexTest, SplitsHostThreadsIntoGroupedLanes) {
  const Trace trace = SmallTrace();
  const TraceIndex index(trace);
  std::vector<LaneGroup> groups;
  for (const Lane& lane : index.lanes()) groups.push_back(lane.group);
  EXPECT_EQ(groups, (std::vector<LaneGroup>{LaneGroup::kFramework, LaneGroup::kInteraction,
                                            LaneGroup::kRuntime, LaneGroup::kHardware}));
  // The runtime lane is labelled by the device its call drives.
  EXPECT_NE(index.lanes()[2].title.find("GPU 0"), std::string::npos);
  // A and B nest in the framework lane: two rows.
  EXPECT_EQ(index.lanes()[0].rows.size(), 2u);
  EXPECT_EQ(index.lanes()[0].num_events, 1002u);
  // Split lanes get their own depth: the runtime call is on row 0 of its lane.
  const auto r = index.WithCorrelation(5);
  ASSERT_EQ(r.size(), 2u);
  for (uint32_t id : r) EXPECT_EQ(index.DepthOf(id), 0u);
}

// Kineto writes some python_function events under pid 0, which is also GPU 0's pid; stacks of
// Python frames get a lane of their own beside the thread's ops.
TEST(TraceIndexTest, PythonStacksAreHostLanesNamedByTheirThread) {
  Trace t;
  const uint32_t host = t.AddProcess(10, "python3");
  const uint32_t thread = t.AddThreadTrack(host, 10, "thread 10 (python3)");
  const uint32_t gpu = t.AddProcess(0, "python3", true);
  const uint32_t stream = t.AddThreadTrack(gpu, 7, "stream 7 ", TrackKind::kDeviceStream);
  const uint32_t gpu_thread = t.AddThreadTrack(gpu, 0, "thread 0 (python3)");
  t.metadata().device_type = "CUDA";
  auto add = [&](const char* name, ActivityKind kind, uint32_t track, int64_t ts, int64_t dur) {
    Slice s;
    s.name = t.Intern(name);
    s.kind = kind;
    s.track = track;
    s.ts_ns = ts;
    s.dur_ns = dur;
    t.AddSlice(s);
  };
  for (int d = 0; d < 30; ++d) add("frame", ActivityKind::kPythonFunction, thread, d, 1000 - 2 * d);
  add("aten::mm", ActivityKind::kCpuOp, thread, 100, 50);
  add("gemm", ActivityKind::kKernel, stream, 200, 50);
  add("threading.py: run", ActivityKind::kPythonFunction, gpu_thread, 0, 900);
  t.Finalize();
  const TraceIndex index(t);
  std::map<std::string, const Lane*> by_title;
  for (const Lane& lane : index.lanes()) by_title[lane.title] = &lane;
  ASSERT_EQ(by_title.size(), index.lanes().size()) << "titles are unique";
  ASSERT_TRUE(by_title.count("thread 10 (python3) · Python stack"));
  EXPECT_EQ(by_title["thread 10 (python3) · Python stack"]->rows.size(), 30u);
  ASSERT_TRUE(by_title.count("thread 10 (python3)"));
  EXPECT_EQ(by_title["thread 10 (python3)"]->rows.size(), 1u) << "ops are not pushed down";
  ASSERT_TRUE(by_title.count("GPU 0 · stream 7"));
  EXPECT_EQ(by_title["GPU 0 · stream 7"]->group, LaneGroup::kHardware);
  for (const Lane& lane : index.lanes()) {
    if (lane.role == LaneRole::kPython) {
      EXPECT_EQ(lane.group, LaneGroup::kFramework) << lane.title;
    }
  }
}

TEST(TraceIndexTest, ViewportMergesSubPixelSlices) {
  const Trace trace = SmallTrace();
  const TraceIndex index(trace);
  ViewportQuery q;
  q.t0 = 0;
  q.t1 = 4000;
  q.width_px = 100;  // 40 ns per pixel: the 2 ns C ops merge, A (100 ns) stays itself
  q.lanes = {0};
  JsonWriter w;
  index.WriteViewport(q, &w);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(w.str()).get(doc), simdjson::SUCCESS) << w.str();
  int64_t total = 0, merged_items = 0, singles = 0;
  for (auto item : simdjson::dom::array(simdjson::dom::array(doc["lanes"]).at(0)["items"])) {
    const int64_t count = item.at(5);
    total += count;
    if (count > 1) {
      ++merged_items;
      EXPECT_LE(int64_t(item.at(1)), 2 * 40 + 2);  // a block spans about one pixel
    } else {
      ++singles;
    }
  }
  EXPECT_EQ(total, 1002);
  EXPECT_LE(merged_items, 80);  // 3000 ns of C ops = 75 pixels
  EXPECT_GE(singles, 2);        // A and B
}

// Epoch timestamps (~1.67e18 ns) are past a double's 2^53: every time the index writes counts from
// the trace's start, exact at the nanosecond, and the start itself is written as a string.
TEST(TraceIndexTest, WritesTimesRelativeToTheTraceStart) {
  Trace t;
  const uint32_t host = t.AddProcess(10, "python");
  const uint32_t thread = t.AddThreadTrack(host, 10, "main");
  constexpr int64_t kStart = 1'670'000'000'000'000'357;
  for (int64_t at : {int64_t{0}, int64_t{1}, int64_t{257}}) {
    Slice s;
    s.name = t.Intern("op");
    s.kind = ActivityKind::kCpuOp;
    s.track = thread;
    s.ts_ns = kStart + at;
    s.dur_ns = 1;
    t.AddSlice(s);
  }
  t.Finalize();
  const TraceIndex index(t);
  EXPECT_EQ(index.ToApi(kStart + 257), 257);
  EXPECT_EQ(index.FromApi(257), kStart + 257);
  ViewportQuery q;
  q.t0 = index.FromApi(-10);
  q.t1 = index.FromApi(300);
  q.width_px = 310;
  JsonWriter w;
  index.WriteViewport(q, &w);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(w.str()).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["t0"]), -10);
  EXPECT_EQ(int64_t(doc["t1"]), 300);
  std::vector<int64_t> starts;
  for (simdjson::dom::element item : simdjson::dom::array(doc["lanes"].at(0)["items"])) {
    starts.push_back(int64_t(item.at(0)));
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 1, 257}));
  JsonWriter lanes;
  index.WriteLanes(&lanes);
  ASSERT_EQ(parser.parse(lanes.str()).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["trace"]["start_ns"]), 0);
  EXPECT_EQ(int64_t(doc["trace"]["end_ns"]), 258);
  EXPECT_EQ(std::string_view(doc["trace"]["origin_ns"]), "1670000000000000357");
}

TEST(TraceIndexTest, DescendantsStayInsideTheSlice) {
  const Trace trace = SmallTrace();
  const TraceIndex index(trace);
  const auto a = index.WithExternalId(1);
  uint32_t op = kNone;
  for (uint32_t id : a)
    if (index.IsHostOp(id)) op = id;
  ASSERT_NE(op, kNone);
  std::vector<std::string> names;
  for (uint32_t d : index.Descendants(op, 100))
    names.emplace_back(trace.Str(trace.slices()[d].name));
  EXPECT_EQ(names, (std::vector<std::string>{"cudaLaunchKernel", "B", "cudaDeviceSynchronize"}));
}

// Five repetitions of ops A, B, C, each launching one kernel through a runtime call.
TEST(SummaryTest, FindsRepeatedOpSequencesThatFusionWouldShorten) {
  Trace t;
  const uint32_t thread = t.AddThreadTrack(t.AddProcess(10, "python"), 10, "main");
  const uint32_t stream = t.AddThreadTrack(t.AddProcess(0, "NeuronCore 0", true), 0, "nc_exec",
                                           TrackKind::kDeviceStream);
  int64_t ts = 0, ext = 1;
  for (int r = 0; r < 5; ++r) {
    for (const char* name : {"A", "B", "C"}) {
      Slice op;
      op.name = t.Intern(name);
      op.kind = ActivityKind::kCpuOp;
      op.track = thread;
      op.ts_ns = ts;
      op.dur_ns = 100;
      op.external_id = ext;
      Slice rt = op;
      rt.name = t.Intern("nrta_execute_schedule");
      rt.kind = ActivityKind::kRuntime;
      rt.ts_ns = ts + 10;
      rt.dur_ns = 50;
      rt.correlation = ext;
      Slice k = rt;
      k.name = t.Intern("nc_exec_running");
      k.kind = ActivityKind::kKernel;
      k.track = stream;
      k.ts_ns = ts + 70;
      k.dur_ns = 200;
      t.AddSlice(op);
      t.AddSlice(rt);
      t.AddSlice(k);
      ts += 300;  // 100 ns idle between executions
      ++ext;
    }
  }
  t.Finalize();
  const TraceIndex index(t);
  JsonWriter w;
  WriteSummary(index, &w);
  EXPECT_NE(w.str().find("A sequence of 3 ops (A, B, C) repeats 5 times and takes 3 device "
                         "executions each time"),
            std::string::npos)
      << w.str();
  EXPECT_NE(w.str().find("remove 2 launches and ~200 ns of device idle time"), std::string::npos)
      << w.str();
}

TEST(JsonWriterTest, EscapesEverythingIntoValidJson) {
  JsonWriter w;
  w.BeginObject();
  w.Field("quote\"key", std::string_view("a\"b\\c\n\t\x01\x7f"));
  w.Field("bad_utf8", std::string_view("x\xff\xc3(y\xe2\x82"));
  w.Field("utf8", std::string_view("\xce\xbcs \xe2\x86\x92"));
  w.Field("nan", std::numeric_limits<double>::quiet_NaN());
  w.Key("list");
  w.BeginArray();
  w.Int(-5);
  w.Uint(18446744073709551615ull);
  w.Bool(false);
  w.Null();
  w.EndArray();
  w.EndObject();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(w.str()).get(doc), simdjson::SUCCESS) << w.str();
  EXPECT_EQ(std::string_view(doc["quote\"key"]), "a\"b\\c\n\t\x01\x7f");
  EXPECT_EQ(std::string_view(doc["utf8"]), "\xce\xbcs \xe2\x86\x92");
  EXPECT_TRUE(doc["nan"].is_null());
  EXPECT_EQ(simdjson::dom::array(doc["list"]).size(), 4u);
}

TEST(FindTracesTest, FindsTracesInAProfileDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("opscope_find_{}", getpid());
  fs::create_directories(dir / "inst_pid_1" / "123");
  std::ofstream(dir / "inst_pid_1" / "123" / "trace.json") << R"({"traceEvents": []})";
  std::ofstream(dir / "inst_pid_1" / "123" / "other.json") << R"({"config": 1})";
  std::ofstream(dir / "b.pt.trace.json.gz") << "x";
  std::vector<std::string> files;
  Status st = FindTraces(dir.string(), &files);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].find("b.pt.trace.json.gz"), std::string::npos);
  EXPECT_NE(files[1].find("trace.json"), std::string::npos);
  files.clear();
  st = FindTraces((dir / "missing").string(), &files);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.file(), (dir / "missing").string());
  EXPECT_NE(st.message().find("no such file"), std::string::npos);
  fs::create_directories(dir / "empty");
  st = FindTraces((dir / "empty").string(), &files);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("no profiles"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opscope::explorer
