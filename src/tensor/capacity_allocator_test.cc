// CapacityAllocator under profile_memory: each allocation and free is one "[memory]" event on the
// calling thread with Kineto's args, and the totals follow the allocator's bookkeeping. Expected
// values are computed here from the requested sizes and the documented rules (sizes rounded up
// to the 64-byte alignment; reserved = allocated + cached + retired-but-unreleased).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/device.h"
#include "opscope/profiler.h"

namespace opscope {
namespace {

struct Event {
  int64_t bytes, total_allocated, total_reserved, device_type, device_id;
  uint64_t addr;
};

int64_t Arg(const Trace& t, uint32_t args, std::string_view key) {
  std::optional<std::string> v = t.FindArg(args, key);
  EXPECT_TRUE(v.has_value()) << key;
  return v ? std::stoll(*v) : INT64_MIN;
}

std::vector<Event> MemoryEventsOf(const Trace& t) {
  std::vector<Event> out;
  for (const Instant& i : t.instants()) {
    if (t.Str(i.name) != "[memory]") continue;
    EXPECT_EQ(t.Str(i.category), "cpu_instant_event");
    out.push_back({Arg(t, i.args, "Bytes"), Arg(t, i.args, "Total Allocated"),
                   Arg(t, i.args, "Total Reserved"), Arg(t, i.args, "Device Type"),
                   Arg(t, i.args, "Device Id"),
                   static_cast<uint64_t>(std::stoull(*t.FindArg(i.args, "Addr")))});
  }
  return out;
}

int64_t Round64(int64_t n) { return (n + 63) / 64 * 64; }

ProfilerOptions MemoryOptions() {
  ProfilerOptions o;
  o.profile_memory = true;
  return o;
}

TEST(CapacityAllocatorMemoryEvents, KnownSequenceGivesBytesAndTotalsPerEvent) {
  CapacityAllocator alloc(Device(DeviceType::kPrivateUse1, 1), int64_t{64} << 20);
  alloc.set_cache_limit(int64_t{2} << 20);  // blocks >= 256 KiB are cached up to 2 MiB
  const std::vector<int64_t> sizes = {100, 4096, 1 << 20, 3000};
  Profiler prof(MemoryOptions());
  prof.Start();
  std::vector<void*> blocks;
  for (int64_t n : sizes) blocks.push_back(alloc.Allocate(size_t(n)));
  alloc.Free(blocks[2], size_t(sizes[2]));         // 1 MiB: goes to the cache (still reserved)
  alloc.Free(blocks[0], size_t(sizes[0]));         // 128 bytes: returned to the system
  void* again = alloc.Allocate(size_t(sizes[2]));  // the cached block comes back
  alloc.Retire(blocks[1], size_t(sizes[1]));       // freed, but queued work may use it
  prof.Stop();
  alloc.Release(blocks[1], size_t(sizes[1]));

  // Expected, from the sizes alone.
  struct Step {
    int64_t bytes;
    void* addr;
  };
  const std::vector<Step> steps = {
      {Round64(sizes[0]), blocks[0]},  {Round64(sizes[1]), blocks[1]},
      {Round64(sizes[2]), blocks[2]},  {Round64(sizes[3]), blocks[3]},
      {-Round64(sizes[2]), blocks[2]}, {-Round64(sizes[0]), blocks[0]},
      {Round64(sizes[2]), again},      {-Round64(sizes[1]), blocks[1]}};
  const std::vector<Event> events = MemoryEventsOf(prof.trace());
  ASSERT_EQ(events.size(), steps.size());
  int64_t allocated = 0, cached = 0, retired = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    SCOPED_TRACE(k);
    const int64_t b = steps[k].bytes;
    allocated += b;
    if (k == 4) cached += -b;  // the 1 MiB free is cached
    if (k == 6) cached -= b;   // and reused
    if (k == 7) retired += -b;
    EXPECT_EQ(events[k].bytes, b);
    EXPECT_EQ(events[k].total_allocated, allocated);
    EXPECT_EQ(events[k].total_reserved, allocated + cached + retired);
    EXPECT_EQ(events[k].device_type, 20);  // c10::DeviceType::PrivateUse1
    EXPECT_EQ(events[k].device_id, 1);
    EXPECT_EQ(events[k].addr, reinterpret_cast<uintptr_t>(steps[k].addr));
  }
  EXPECT_EQ(again, blocks[2]);
  EXPECT_EQ(alloc.stats().reserved_bytes, size_t(allocated + cached));  // retired is released
  alloc.Free(again, size_t(sizes[2]));
  alloc.Free(blocks[3], size_t(sizes[3]));
}

TEST(CapacityAllocatorMemoryEvents, HostMemoryIsCpuWithDeviceIdMinusOne) {
  CapacityAllocator alloc(Device(DeviceType::kCPU), int64_t{1} << 20);
  Profiler prof(MemoryOptions());
  prof.Start();
  void* p = alloc.Allocate(10);
  alloc.Free(p, 10);
  prof.Stop();
  const std::vector<Event> events = MemoryEventsOf(prof.trace());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].device_type, 0);  // c10::DeviceType::CPU
  EXPECT_EQ(events[0].device_id, -1);
  EXPECT_EQ(events[0].bytes, 64);
  EXPECT_EQ(events[1].bytes, -64);
  EXPECT_EQ(events[1].total_allocated, 0);
}

TEST(CapacityAllocatorMemoryEvents, OffRecordsNoMemoryEvent) {
  CapacityAllocator alloc(Device(DeviceType::kPrivateUse1, 0), int64_t{1} << 20);
  ProfilerOptions o;  // profile_memory off
  Profiler prof(o);
  prof.Start();
  {
    OPSCOPE_SCOPE("my_op");
    alloc.Free(alloc.Allocate(1000), 1000);
  }
  prof.Stop();
  EXPECT_TRUE(MemoryEventsOf(prof.trace()).empty());
  EXPECT_EQ(prof.trace().slices().size(), 1u);  // the op itself was recorded
  // And nothing is recorded outside a session.
  EXPECT_FALSE(MemoryProfilingActive());
}

TEST(CapacityAllocatorMemoryEvents, EventsInsideAnOpAreItsSelfMemory) {
  CapacityAllocator alloc(Device(DeviceType::kPrivateUse1, 0), int64_t{1} << 20);
  Profiler prof(MemoryOptions());
  prof.Start();
  void* kept = nullptr;
  {
    OPSCOPE_SCOPE("outer");
    {
      OPSCOPE_SCOPE("inner");
      kept = alloc.Allocate(1000);             // 1024 bytes
      alloc.Free(alloc.Allocate(5000), 5000);  // +5056 - 5056
    }
    void* tmp = alloc.Allocate(200);  // 256 bytes, in outer only
    alloc.Free(tmp, 200);
  }
  prof.Stop();
  alloc.Free(kept, 1000);
  const KeyAverages ka = prof.key_averages();
  EXPECT_TRUE(ka.has_memory());
  const KeyAverage* inner = nullptr;
  const KeyAverage* outer = nullptr;
  for (const KeyAverage& r : ka.rows()) {
    if (r.key == "inner") inner = &r;
    if (r.key == "outer") outer = &r;
  }
  ASSERT_NE(inner, nullptr);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(inner->device_memory_usage, 1024);
  EXPECT_EQ(inner->self_device_memory_usage, 1024);
  EXPECT_EQ(outer->device_memory_usage, 1024);
  EXPECT_EQ(outer->self_device_memory_usage, 0);
  EXPECT_EQ(outer->cpu_memory_usage, 0);
}

// A full buffer drops a memory event whole (its two records together) and counts it; what was
// recorded before stays.
TEST(CapacityAllocatorMemoryEvents, FullBufferDropsWholeEventsAndCountsThem) {
  CapacityAllocator alloc(Device(DeviceType::kPrivateUse1, 0), int64_t{1} << 20);
  ProfilerOptions o = MemoryOptions();
  o.thread_buffer_records = 5;  // two events of two records fit, the third does not
  Profiler prof(o);
  prof.Start();
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(alloc.Allocate(64));
  prof.Stop();
  for (void* p : blocks) alloc.Free(p, 64);
  const std::vector<Event> events = MemoryEventsOf(prof.trace());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].total_allocated, 64);
  EXPECT_EQ(events[1].total_allocated, 128);
  uint64_t dropped = 0;
  for (const auto& [reason, n] : prof.trace().metadata().dropped) {
    if (reason == "thread_buffer_full") dropped = n;
  }
  EXPECT_EQ(dropped, 2u);
}

}  // namespace
}  // namespace opscope
