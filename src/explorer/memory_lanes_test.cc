// Memory lanes: one lane per device at the top of the hardware group, the report's peak and
// holders, and per-pixel buckets that keep the peak exactly however many samples share a pixel.
#include "explorer/memory_lanes.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <tuple>

#include "explorer/trace_index.h"
#include "profiler/memory_events.h"

namespace opscope::explorer {
namespace {

// Thread 10: op aten::empty [0, 100000] and op aten::add [200000, 200100]. HIP:0 gets 1000
// allocations of 64 bytes (Addr k) at ts 1000 + k * 3 (all inside aten::empty), its "Total
// Allocated" cycling 0..699 in steps of 100, except allocation 537 which reports 1e9 + 7 (the
// peak); reserved is 2e9 throughout. CPU gets one allocation of 8 bytes at 300000, after the
// last slice.
Trace MemoryTrace() {
  Trace t;
  const uint32_t host = t.AddProcess(10, "python");
  const uint32_t thread = t.AddThreadTrack(host, 10, "main");
  for (auto [name, ts, dur] :
       {std::tuple{"aten::empty", 0, 100000}, std::tuple{"aten::add", 200000, 100}}) {
    Slice s;
    s.name = t.Intern(name);
    s.category = t.Intern("cpu_op");
    s.kind = ActivityKind::kCpuOp;
    s.track = thread;
    s.ts_ns = ts;
    s.dur_ns = dur;
    t.AddSlice(s);
  }
  auto add_memory = [&](int64_t ts, int64_t bytes, int64_t total, int64_t reserved, int type,
                        int id, int64_t addr) {
    internal::MemoryEvent e;
    e.ts_ns = ts;
    e.bytes = bytes;
    e.total_allocated = total;
    e.total_reserved = reserved;
    e.device_type = type;
    e.device_id = id;
    e.addr = static_cast<uint64_t>(addr);
    e.track = thread;
    internal::AddMemoryEvent(t, e);
  };
  for (int k = 0; k < 1000; ++k) {
    add_memory(1000 + k * 3, 64, k == 537 ? 1000000007 : (k % 7) * 100, 2000000000, 6, 0, k + 1);
  }
  add_memory(300000, 8, 8, 8, 0, -1, 99999);
  t.Finalize();
  return t;
}

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 300);
  return doc;
}

TEST(MemoryLanesTest, OneLanePerDeviceNestedAtTheTopOfTheHardwareGroup) {
  const Trace trace = MemoryTrace();
  const TraceIndex index(trace);
  JsonWriter w;
  index.WriteLanes(&w);
  const std::string json = w.Take();
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, json);
  EXPECT_EQ(uint64_t(doc["trace"]["memory_events"]), 1001u);
  // The memory samples widen the trace's extent (the CPU allocation at 300000).
  EXPECT_EQ(int64_t(doc["trace"]["end_ns"]), 300000);
  simdjson::dom::element hardware;
  for (simdjson::dom::element g : simdjson::dom::array(doc["groups"])) {
    if (std::string_view(g["key"]) == "hardware") hardware = g;
  }
  ASSERT_EQ(hardware.type(), simdjson::dom::element_type::OBJECT) << json.substr(0, 600);
  EXPECT_EQ(simdjson::dom::array(hardware["lanes"]).size(), 0u);  // no device streams
  simdjson::dom::element memory = simdjson::dom::array(hardware["groups"]).at(0);
  EXPECT_EQ(std::string_view(memory["key"]), "memory");
  EXPECT_TRUE(bool(memory["top"]));
  simdjson::dom::array lanes = memory["lanes"];
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(std::string_view(lanes.at(0)["title"]), "Memory: CPU");
  EXPECT_EQ(std::string_view(lanes.at(1)["title"]), "Memory: HIP:0");
  simdjson::dom::element hip = lanes.at(1)["memory"];
  EXPECT_EQ(int64_t(hip["peak_allocated"]), 1000000007);
  EXPECT_EQ(int64_t(hip["peak_ts_ns"]), 1000 + 537 * 3);
  EXPECT_EQ(int64_t(hip["peak_reserved"]), 2000000000);
  EXPECT_EQ(uint64_t(hip["samples"]), 1000u);
  simdjson::dom::element holder = simdjson::dom::array(hip["holders_at_peak"]).at(0);
  EXPECT_EQ(std::string_view(holder["op"]), "aten::empty");
  EXPECT_EQ(int64_t(holder["bytes"]), 538 * 64);
  EXPECT_EQ(int64_t(holder["allocations"]), 538);
  // Slice lanes keep their ids: the memory lanes come after them.
  EXPECT_EQ(index.lanes()[0].group, LaneGroup::kFramework);
  EXPECT_EQ(index.lanes().back().group, LaneGroup::kMemory);
}

TEST(MemoryLanesTest, BucketsKeepThePeakAtAnyZoom) {
  const Trace trace = MemoryTrace();
  const TraceIndex index(trace);
  uint32_t hip_lane = kNone;
  for (uint32_t i = 0; i < index.lanes().size(); ++i) {
    if (index.lanes()[i].title == "Memory: HIP:0") hip_lane = i;
  }
  ASSERT_NE(hip_lane, kNone);
  const int64_t peak_ts = 1000 + 537 * 3;
  // From 3 px for the whole trace (every sample in one bucket) to 1 ns per pixel.
  for (int width : {3, 10, 1000, 300000}) {
    ViewportQuery q;
    q.t0 = index.start_ns();
    q.t1 = index.end_ns();
    q.width_px = width;
    q.lanes = {hip_lane};
    JsonWriter w;
    index.WriteViewport(q, &w);
    const std::string json = w.Take();
    simdjson::dom::parser parser;
    simdjson::dom::element doc = Parse(parser, json);
    simdjson::dom::array memory = doc["memory"];
    ASSERT_EQ(memory.size(), 1u);
    EXPECT_EQ(simdjson::dom::array(doc["lanes"]).size(), 0u);
    simdjson::dom::array points = memory.at(0)["points"];
    ASSERT_GT(points.size(), 0u);
    EXPECT_LE(points.size(), static_cast<size_t>(width) + 2) << width;
    int64_t highest = 0, highest_ts = -1, next_ts = INT64_MAX, lowest = INT64_MAX;
    for (size_t k = 0; k < points.size(); ++k) {
      simdjson::dom::array p = points.at(k);
      ASSERT_EQ(p.size(), 6u);
      lowest = std::min(lowest, int64_t(p.at(1)));
      EXPECT_EQ(int64_t(p.at(4)), 2000000000);
      if (int64_t(p.at(2)) > highest) {
        highest = int64_t(p.at(2));
        highest_ts = int64_t(p.at(0));
        next_ts = k + 1 < points.size() ? int64_t(points.at(k + 1).at(0)) : INT64_MAX;
      }
    }
    EXPECT_EQ(highest, 1000000007) << width;
    EXPECT_LE(highest_ts, peak_ts) << width;
    EXPECT_GT(next_ts, peak_ts) << width;
    EXPECT_EQ(lowest, 0) << width;
  }
}

TEST(MemoryLanesTest, ViewportStartsAtTheSampleInForce) {
  const Trace trace = MemoryTrace();
  const MemoryLanes lanes(trace);
  ASSERT_EQ(lanes.size(), 2u);
  JsonWriter w;
  // [1004, 1006] at 1 ns: the sample at 1003 (in force at 1004) and the one at 1006, written
  // relative to the origin.
  lanes.WritePoints(1, 1004, 1006, 1, 1000, &w);
  EXPECT_EQ(w.Take(),
            "[[3,100,100,100,2000000000,2000000000],[6,200,200,200,2000000000,2000000000]]");
}

TEST(MemoryLanesTest, NoMemoryEventsNoLanes) {
  Trace t;
  const uint32_t host = t.AddProcess(10, "python");
  Slice s;
  s.name = t.Intern("aten::add");
  s.kind = ActivityKind::kCpuOp;
  s.track = t.AddThreadTrack(host, 10, "main");
  s.dur_ns = 10;
  t.AddSlice(s);
  t.Finalize();
  const TraceIndex index(t);
  for (const Lane& lane : index.lanes()) EXPECT_NE(lane.group, LaneGroup::kMemory);
  JsonWriter w;
  index.WriteLanes(&w);
  const std::string json = w.Take();
  EXPECT_EQ(json.find("\"memory\""), std::string::npos) << json;
  EXPECT_EQ(json.find("hardware"), std::string::npos) << json;
}

}  // namespace
}  // namespace opscope::explorer
