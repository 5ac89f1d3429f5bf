// Tests of the record path's internals: records, per-thread buffers, session collection.
#include "trace/recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <thread>
#include <vector>

#include "opscope/record.h"

namespace opscope::internal {
namespace {

uint64_t CountRanges(const Recording& r, uint32_t name) {
  uint64_t n = 0;
  for (const auto& t : r.threads) {
    for (const auto& rec : t.records) n += rec.type() == RecordType::kRange && rec.name == name;
  }
  return n;
}

TEST(RecorderTest, NothingIsRecordedWithoutASession) {
  uint32_t name = InternName("idle_op");
  EXPECT_FALSE(ProfilingActive());
  {
    RecordScope scope(name);
    EXPECT_EQ(scope.correlation(), 0u);
  }
  StartRecording({});
  Recording r = StopRecording();
  EXPECT_EQ(CountRanges(r, name), 0u);
}

TEST(RecorderTest, NestedScopesExposeTheInnermostCorrelation) {
  uint32_t outer_name = InternName("outer");
  uint32_t inner_name = InternName("inner");
  StartRecording({});
  uint64_t outer_corr = 0, inner_corr = 0, seen_inner = 0, seen_after = 0;
  {
    RecordScope outer(outer_name);
    outer_corr = outer.correlation();
    {
      RecordScope inner(inner_name);
      inner_corr = inner.correlation();
      seen_inner = CurrentOpCorrelation();
    }
    seen_after = CurrentOpCorrelation();
  }
  EXPECT_EQ(CurrentOpCorrelation(), 0u);
  Recording r = StopRecording();
  EXPECT_NE(outer_corr, 0u);
  EXPECT_NE(inner_corr, outer_corr);
  EXPECT_EQ(seen_inner, inner_corr);
  EXPECT_EQ(seen_after, outer_corr);
  ASSERT_EQ(r.threads.size(), 1u);
  ASSERT_EQ(r.threads[0].records.size(), 2u);
  // Records are written when ranges close: inner first.
  EXPECT_EQ(r.threads[0].records[0].name, inner_name);
  EXPECT_EQ(r.threads[0].records[0].correlation(), inner_corr);
  EXPECT_EQ(r.threads[0].records[1].correlation(), outer_corr);
  EXPECT_LE(r.threads[0].records[1].start_ticks, r.threads[0].records[0].start_ticks);
  EXPECT_GE(r.threads[0].records[1].end_ticks, r.threads[0].records[0].end_ticks);
}

TEST(RecorderTest, SixteenThreadsUnderCapacityLoseNothing) {
  constexpr int kThreads = 16;
  constexpr int kOps = 5000;
  uint32_t name = InternName("mt_op");
  RecorderConfig config;
  config.buffer_records = 8192;
  StartRecording(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([name] {
      for (int i = 0; i < kOps; ++i) RecordScope scope(name);
    });
  }
  for (auto& t : threads) t.join();
  Recording r = StopRecording();
  EXPECT_EQ(CountRanges(r, name), uint64_t{kThreads} * kOps);
  std::set<uint64_t> tids, correlations;
  for (const auto& t : r.threads) {
    EXPECT_EQ(t.dropped, 0u);
    tids.insert(t.tid);
    for (const auto& rec : t.records) correlations.insert(rec.correlation());
  }
  EXPECT_EQ(tids.size(), size_t{kThreads});
  EXPECT_EQ(correlations.size(), size_t{kThreads} * kOps) << "correlation ids must be unique";
}

TEST(RecorderTest, SixteenThreadsOverCapacityReportExactDrops) {
  constexpr int kThreads = 16;
  constexpr uint32_t kCapacity = 1000;
  constexpr int kOps = 1700;
  uint32_t name = InternName("mt_drop_op");
  RecorderConfig config;
  config.buffer_records = kCapacity;
  StartRecording(config);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([name] {
      for (int i = 0; i < kOps; ++i) RecordScope scope(name);
    });
  }
  for (auto& t : threads) t.join();
  Recording r = StopRecording();
  uint64_t dropped = 0;
  for (const auto& t : r.threads) {
    EXPECT_EQ(t.records.size(), kCapacity);
    dropped += t.dropped;
  }
  EXPECT_EQ(CountRanges(r, name), uint64_t{kThreads} * kCapacity);
  EXPECT_EQ(dropped, uint64_t{kThreads} * (kOps - kCapacity));
}

TEST(RecorderTest, RestartedRecordingStartsEmpty) {
  uint32_t name = InternName("restart_op");
  StartRecording({});
  { RecordScope a(name); }
  Recording first = StopRecording();
  StartRecording({});
  { RecordScope b(name); }
  { RecordScope c(name); }
  Recording second = StopRecording();
  EXPECT_EQ(CountRanges(first, name), 1u);
  EXPECT_EQ(CountRanges(second, name), 2u);
  EXPECT_THROW(({
                 StartRecording({});
                 StartRecording({});
               }),
               std::logic_error);
  StopRecording();
}

TEST(RecorderTest, ShapesAreStoredOnlyWithRecordShapes) {
  uint32_t name = InternName("shaped_op");
  std::array<int64_t, 2> dims = {2, 3};
  std::array<InputShape, 3> shapes = {InputShape{dims.data(), 2, true},
                                      InputShape{nullptr, 0, false},
                                      InputShape{dims.data(), 1, true}};
  RecorderConfig config;
  config.record_shapes = true;
  StartRecording(config);
  { RecordScope op(name, shapes); }
  Recording r = StopRecording();
  ASSERT_EQ(r.threads.size(), 1u);
  ASSERT_EQ(r.threads[0].records.size(), 1u);
  ASSERT_NE(r.threads[0].records[0].shapes, 0u);
  EXPECT_EQ(DecodeShapes(r.threads[0].shape_words, r.threads[0].records[0].shapes - 1),
            "[[2, 3], [], [2]]");

  StartRecording({});
  { RecordScope op(name, shapes); }
  Recording plain = StopRecording();
  ASSERT_EQ(plain.threads.size(), 1u);
  EXPECT_EQ(plain.threads[0].records[0].shapes, 0u);
}

TEST(RecorderTest, DeviceActivityIsCountedWhenNobodyRecords) {
  DeviceActivity a;
  a.name = "nc_exec_running";
  ReportDeviceActivity(a);
  RecorderConfig config;
  config.device = true;
  config.max_events_per_device = 2;
  StartRecording(config);
  EXPECT_TRUE(DeviceActivityEnabled());
  for (int i = 0; i < 3; ++i) ReportDeviceActivity(a);
  Recording r = StopRecording();
  EXPECT_FALSE(DeviceActivityEnabled());
  EXPECT_EQ(r.device.size(), 2u);
  EXPECT_EQ(r.device_dropped_per_core, 1u);
  EXPECT_GE(r.device_dropped_no_session, 1u);
}

}  // namespace
}  // namespace opscope::internal
