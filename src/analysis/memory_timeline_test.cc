// ComputeMemoryTimeline on a hand-built trace; expected values worked out by hand in comments.
#include <gtest/gtest.h>

#include <string>

#include "opscope/analysis.h"

namespace opscope {
namespace {

void AddOp(Trace& t, uint32_t track, const char* name, int64_t ts, int64_t dur) {
  Slice s;
  s.kind = ActivityKind::kCpuOp;
  s.name = t.Intern(name);
  s.track = track;
  s.ts_ns = ts;
  s.dur_ns = dur;
  t.AddSlice(s);
}

void AddMemory(Trace& t, uint32_t track, int64_t ts, const std::string& args) {
  Instant i;
  i.ts_ns = ts;
  i.name = t.Intern("[memory]");
  i.track = track;
  i.args = t.AddArgs(args);
  t.AddInstant(i);
}

// Thread 100: aten::empty [0, 100], aten::mm [200, 400] > aten::empty_strided [240, 260].
// CUDA:0: +1000 @50 (empty, total 1000), +3000 @250 (empty_strided, total 4000), -1000 @300
// (frees the first, total 3000), +500 @500 (no op, total 3500). Peak 4000 at 250; live then:
// 1000 from aten::empty and 3000 from aten::empty_strided. Reserved peaks at 8192.
// CPU: +64 @600 and -64 @700 without totals: running sum, peak 64 at 600, reserved unknown.
TEST(MemoryTimelineTest, PeakAndHoldersPerDevice) {
  Trace t;
  const uint32_t p = t.AddProcess(1, "python");
  const uint32_t th = t.AddThreadTrack(p, 100, "thread 100");
  AddOp(t, th, "aten::empty", 0, 100);
  AddOp(t, th, "aten::mm", 200, 200);
  AddOp(t, th, "aten::empty_strided", 240, 20);
  auto cuda = [](int64_t bytes, int64_t total, int64_t reserved, int addr) {
    return "{\"Total Reserved\": " + std::to_string(reserved) +
           ", \"Total Allocated\": " + std::to_string(total) +
           ", \"Bytes\": " + std::to_string(bytes) +
           ", \"Device Id\": 0, \"Device Type\": 1, \"Addr\": " + std::to_string(addr) + "}";
  };
  AddMemory(t, th, 50, cuda(1000, 1000, 2048, 1));
  AddMemory(t, th, 250, cuda(3000, 4000, 8192, 2));
  AddMemory(t, th, 300, cuda(-1000, 3000, 8192, 1));
  AddMemory(t, th, 500, cuda(500, 3500, 8192, 3));
  AddMemory(t, th, 600, "{\"Bytes\": 64, \"Device Type\": 0, \"Device Id\": -1, \"Addr\": 9}");
  AddMemory(t, th, 700, "{\"Bytes\": -64, \"Device Type\": 0, \"Device Id\": -1, \"Addr\": 9}");
  t.Finalize();

  const MemoryTimeline mt = ComputeMemoryTimeline(t);
  EXPECT_EQ(mt.events, 6u);
  ASSERT_EQ(mt.devices.size(), 2u);
  const DeviceMemory& cpu = mt.devices[0];
  EXPECT_EQ(cpu.device, "CPU");
  EXPECT_EQ(cpu.peak_allocated, 64);
  EXPECT_EQ(cpu.peak_ts_ns, 600);
  EXPECT_EQ(cpu.peak_reserved, -1);
  ASSERT_EQ(cpu.holders_at_peak.size(), 1u);
  EXPECT_EQ(cpu.holders_at_peak[0].op, "(no op)");
  ASSERT_EQ(cpu.samples.size(), 2u);
  EXPECT_EQ(cpu.samples[1].allocated, 0);

  const DeviceMemory& dev = mt.devices[1];
  EXPECT_EQ(dev.device, "CUDA:0");
  EXPECT_EQ(dev.allocations, 3);
  EXPECT_EQ(dev.frees, 1);
  EXPECT_EQ(dev.allocated_bytes, 1000 + 3000 + 500);
  EXPECT_EQ(dev.freed_bytes, 1000);
  EXPECT_EQ(dev.allocated_at_start, 0);  // 1000 total after the first +1000
  EXPECT_EQ(cpu.allocated_at_start, 0);  // no totals
  EXPECT_EQ(dev.peak_allocated, 4000);
  EXPECT_EQ(dev.peak_ts_ns, 250);
  EXPECT_EQ(dev.peak_reserved, 8192);
  ASSERT_EQ(dev.holders_at_peak.size(), 2u);
  EXPECT_EQ(dev.holders_at_peak[0].op, "aten::empty_strided");
  EXPECT_EQ(dev.holders_at_peak[0].bytes, 3000);
  EXPECT_EQ(dev.holders_at_peak[1].op, "aten::empty");
  EXPECT_EQ(dev.holders_at_peak[1].bytes, 1000);

  const std::string json = mt.ToJson();
  EXPECT_NE(json.find("\"samples\":[[50,1000,2048],[250,4000,8192]"), std::string::npos) << json;
  ReportOptions options;
  options.memory = true;
  const std::string text = FormatReport(t, options);
  EXPECT_NE(text.find("Memory timeline (6 [memory] events"), std::string::npos) << text;
  EXPECT_NE(text.find("Ops holding the most at CUDA:0's peak (3.91 Kb allocated):"),
            std::string::npos)
      << text;
}

TEST(MemoryTimelineTest, NoMemoryEvents) {
  Trace t;
  t.Finalize();
  EXPECT_TRUE(ComputeMemoryTimeline(t).devices.empty());
  ReportOptions options;
  options.memory = true;
  EXPECT_NE(FormatReport(t, options).find("no [memory] events"), std::string::npos);
}

}  // namespace
}  // namespace opscope
