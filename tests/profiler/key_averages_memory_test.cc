// key_averages memory columns: "[memory]" events attributed as PyTorch's _parse_kineto_results
// does (every host event whose [start, end] holds the event, on any thread; self = total minus
// the children's), expected values worked out by hand below.
#include <gtest/gtest.h>

#include <string>

#include "opscope/key_averages.h"
#include "opscope/trace.h"
#include "profiler/memory_events.h"

namespace opscope {
namespace {

void AddOp(Trace& t, uint32_t track, const char* name, int64_t ts, int64_t dur) {
  Slice s;
  s.kind = ActivityKind::kCpuOp;
  s.name = t.Intern(name);
  s.category = t.Intern("cpu_op");
  s.track = track;
  s.ts_ns = ts;
  s.dur_ns = dur;
  t.AddSlice(s);
}

void AddMemory(Trace& t, uint32_t track, int64_t ts, int64_t bytes, int device_type) {
  internal::MemoryEvent e;
  e.ts_ns = ts;
  e.bytes = bytes;
  e.device_type = device_type;
  e.device_id = 0;
  e.addr = 1;
  e.track = track;
  internal::AddMemoryEvent(t, e);
}

// Thread 100: linear [0, 1000] > matmul [100, 600] > mm [200, 500]; add [700, 900] under linear;
// foo [2000, 3000] with its only child foo [2100, 2900] (merged into it).
// Thread 200: copy_ [650, 750].
// Memory: 200 CPU +1000 (mm's start, inclusive), 300 HIP +4096, 500 CPU -200 (mm's end),
// 720 CPU +64 (add, copy_ on the other thread, and linear), 1500 CPU +8 (no op), 1600 XPU +999
// (no op, counted in neither column), 2050 CPU +10 (the outer foo only).
Trace MakeTrace() {
  Trace t;
  uint32_t p = t.AddProcess(1, "python");
  uint32_t a = t.AddThreadTrack(p, 100, "thread 100");
  uint32_t b = t.AddThreadTrack(p, 200, "thread 200");
  AddOp(t, a, "aten::linear", 0, 1000);
  AddOp(t, a, "aten::matmul", 100, 500);
  AddOp(t, a, "aten::mm", 200, 300);
  AddOp(t, a, "aten::add", 700, 200);
  AddOp(t, b, "aten::copy_", 650, 100);
  AddOp(t, a, "foo", 2000, 1000);
  AddOp(t, a, "foo", 2100, 800);
  AddMemory(t, a, 200, 1000, 0);
  AddMemory(t, a, 300, 4096, 6);
  AddMemory(t, a, 500, -200, 0);
  AddMemory(t, b, 720, 64, 0);
  AddMemory(t, a, 1500, 8, 0);
  AddMemory(t, a, 1600, 999, 12);
  AddMemory(t, a, 2050, 10, 0);
  t.metadata().device_type = "CUDA";
  t.Finalize();
  return t;
}

const KeyAverage& Row(const KeyAverages& avg, const std::string& key) {
  for (const KeyAverage& r : avg.rows()) {
    if (r.key == key) return r;
  }
  ADD_FAILURE() << "no row " << key;
  static KeyAverage none;
  return none;
}

TEST(KeyAveragesMemoryTest, AttributesMemoryEventsAsPyTorch) {
  const Trace t = MakeTrace();
  const KeyAverages avg = KeyAverages::FromTrace(t);
  ASSERT_TRUE(avg.has_memory());
  struct Want {
    const char* key;
    int64_t count, cpu, self_cpu, dev, self_dev;
  };
  // linear: 1000 + 4096 - 200 + 64 -> cpu 864, dev 4096; self = 864 - (matmul 800 + add 64).
  const Want want[] = {
      {"aten::linear", 1, 864, 0, 4096, 0},  {"aten::matmul", 1, 800, 0, 4096, 0},
      {"aten::mm", 1, 800, 800, 4096, 4096}, {"aten::add", 1, 64, 64, 0, 0},
      {"aten::copy_", 1, 64, 64, 0, 0},      {"foo", 1, 10, 10, 0, 0},
      {"[memory]", 2, 8, 8, 0, 0},
  };
  EXPECT_EQ(avg.rows().size(), std::size(want));
  for (const Want& w : want) {
    const KeyAverage& r = Row(avg, w.key);
    EXPECT_EQ(r.count, w.count) << w.key;
    EXPECT_EQ(r.cpu_memory_usage, w.cpu) << w.key;
    EXPECT_EQ(r.self_cpu_memory_usage, w.self_cpu) << w.key;
    EXPECT_EQ(r.device_memory_usage, w.dev) << w.key;
    EXPECT_EQ(r.self_device_memory_usage, w.self_dev) << w.key;
  }
}

TEST(KeyAveragesMemoryTest, TableShowsMemoryColumnsAndSortsByThem) {
  const Trace t = MakeTrace();
  const std::string table = KeyAverages::FromTrace(t).Table("self_cuda_memory_usage", 2);
  // Header: memory columns after the CPU ones, 12 wide, device name from the trace.
  EXPECT_NE(table.find("CPU time avg       CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem  "
                       "  # of Calls"),
            std::string::npos)
      << table;
  // mm first (self device memory 4096 = "4.00 Kb"), then the rest in order of appearance.
  EXPECT_NE(table.find("aten::mm  "), std::string::npos);
  EXPECT_LT(table.find("aten::mm"), table.find("aten::linear")) << table;
  EXPECT_NE(table.find("       800 b         800 b       4.00 Kb       4.00 Kb             1"),
            std::string::npos)
      << table;
  const std::string json = KeyAverages::FromTrace(t).ToJson("cpu_memory_usage", 1);
  EXPECT_NE(json.find("\"name\": \"aten::linear\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cpu_memory_usage\": 864, \"self_cpu_memory_usage\": 0, "
                      "\"device_memory_usage\": 4096, \"self_device_memory_usage\": 0"),
            std::string::npos)
      << json;
}

TEST(KeyAveragesMemoryTest, NoMemoryEventsNoColumns) {
  Trace t;
  uint32_t p = t.AddProcess(1, "python");
  AddOp(t, t.AddThreadTrack(p, 1, "t"), "aten::mm", 0, 10);
  t.Finalize();
  const KeyAverages avg = KeyAverages::FromTrace(t);
  EXPECT_FALSE(avg.has_memory());
  EXPECT_EQ(avg.Table().find("Mem"), std::string::npos);
}

TEST(KeyAveragesMemoryTest, TimeRangeSeesOnlyItsMemoryEvents) {
  const Trace t = MakeTrace();
  // The two foo slices only: the event at 2050; none is left outside an op.
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < t.slices().size(); ++i) {
    if (t.Str(t.slices()[i].name) == "foo") ids.push_back(i);
  }
  const KeyAverages avg = KeyAverages::FromSlices(t, ids);
  ASSERT_EQ(avg.rows().size(), 1u);
  EXPECT_EQ(avg.rows()[0].cpu_memory_usage, 10);
  EXPECT_TRUE(avg.has_memory());
}

// The one writer and the reader agree on every field, at the edges of their ranges, and the args
// are Kineto's, in Kineto's order.
TEST(KeyAveragesMemoryTest, MemoryEventWriterAndReaderAgree) {
  Trace t;
  const uint32_t thread = t.AddThreadTrack(t.AddProcess(1, "python"), 7, "thread 7");
  internal::MemoryEvent a;
  a.ts_ns = 2000;
  a.bytes = -(int64_t{1} << 40);
  a.total_allocated = 0;
  a.total_reserved = INT64_MAX;
  a.device_type = 20;
  a.device_id = 3;
  a.addr = 0x7fffdeadbeef;
  a.track = thread;
  internal::MemoryEvent b = a;
  b.ts_ns = 1000;
  b.bytes = 64;
  b.device_type = 0;
  b.device_id = -1;
  b.addr = 0x7f00;
  internal::AddMemoryEvent(t, a);
  internal::AddMemoryEvent(t, b);
  t.Finalize();
  EXPECT_EQ(t.Str(t.instants()[0].category), "cpu_instant_event");
  ASSERT_EQ(t.instants()[1].ts_ns, 2000);  // Finalize sorted the instants by time
  EXPECT_EQ(t.ArgsJson(t.instants()[1].args),
            "{\"Total Reserved\": 9223372036854775807, \"Total Allocated\": 0, \"Bytes\": "
            "-1099511627776, \"Device Id\": 3, \"Device Type\": 20, \"Addr\": "
            "140736929316591}");
  const internal::MemoryEvents read(t);
  ASSERT_EQ(read.events().size(), 2u);
  for (const auto& [got, want] : {std::pair{read.events()[0], b}, std::pair{read.events()[1], a}}) {
    EXPECT_EQ(got.ts_ns, want.ts_ns);
    EXPECT_EQ(got.bytes, want.bytes);
    EXPECT_EQ(got.total_allocated, want.total_allocated);
    EXPECT_EQ(got.total_reserved, want.total_reserved);
    EXPECT_EQ(got.device_type, want.device_type);
    EXPECT_EQ(got.device_id, want.device_id);
    EXPECT_EQ(got.track, want.track);
  }
  EXPECT_EQ(read.events()[0].addr, 0x7f00u);
  EXPECT_EQ(read.events()[1].addr, 0x7fffdeadbeefu);
  EXPECT_EQ(read.CpuBytes(0, 2), 64);
  EXPECT_EQ(read.DeviceBytes(0, 2), -(int64_t{1} << 40));
}

}  // namespace
}  // namespace opscope
