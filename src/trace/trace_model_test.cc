// Unit tests for the trace model: string interning, sorting, nesting and lanes, flow binding,
// device links and the arg store.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "opscope/trace.h"
#include "trace/packed_args.h"

namespace opscope {
namespace {

TEST(StringTableTest, InternsDenselyAndKeepsViewsStable) {
  StringTable t;
  EXPECT_EQ(t.Get(0), "");
  EXPECT_EQ(t.Intern(""), 0u);
  const StringId a = t.Intern("aten::mul");
  std::string_view view = t.Get(a);
  EXPECT_EQ(t.Intern("aten::mul"), a);
  EXPECT_EQ(t.Find("aten::mul"), a);
  EXPECT_EQ(t.Find("aten::add"), kNone);
  // Many more strings, including large ones, must not move earlier text.
  for (int i = 0; i < 20000; ++i) t.Intern("name_" + std::to_string(i));
  const std::string big(100000, 'k');
  const StringId b = t.Intern(big);
  EXPECT_EQ(t.Get(b), big);
  EXPECT_EQ(view.data(), t.Get(a).data());
  EXPECT_EQ(t.Get(a), "aten::mul");
  EXPECT_EQ(t.size(), 20000u + 3u);
}

TEST(StringTableTest, AppendStoresWithoutIndexing) {
  StringTable t;
  const StringId x = t.Append("{\"a\": 1}");
  const StringId y = t.Append("{\"a\": 1}");
  EXPECT_NE(x, y);
  EXPECT_EQ(t.Get(x), t.Get(y));
  EXPECT_EQ(t.Find("{\"a\": 1}"), kNone);
}

// A small trace: one host thread with ProfilerStep > aten::mul > cudaLaunchKernel, one device
// stream with the kernel the launch started.
struct SmallTrace {
  Trace trace;
  uint32_t host_track, device_track;
  SmallTrace() {
    uint32_t host = trace.AddProcess(100, "python");
    uint32_t dev = trace.AddProcess(0, "GPU 0", /*is_device=*/true);
    host_track = trace.AddThreadTrack(host, 100, "main");
    device_track = trace.AddThreadTrack(dev, 7, "stream 7", TrackKind::kDeviceStream);
  }
  Slice Make(uint32_t track, std::string_view name, ActivityKind kind, int64_t ts, int64_t dur,
             int64_t external_id = 0, int64_t correlation = 0) {
    Slice s;
    s.track = track;
    s.name = trace.Intern(name);
    s.kind = kind;
    s.ts_ns = ts;
    s.dur_ns = dur;
    s.external_id = external_id;
    s.correlation = correlation;
    return s;
  }
  uint32_t Add(uint32_t track, std::string_view name, ActivityKind kind, int64_t ts, int64_t dur,
               int64_t external_id = 0, int64_t correlation = 0) {
    return trace.AddSlice(Make(track, name, kind, ts, dur, external_id, correlation));
  }
  uint32_t Find(std::string_view name) const {
    const StringId id = trace.strings().Find(name);
    for (uint32_t i = 0; i < trace.slices().size(); ++i) {
      if (trace.slices()[i].name == id) return i;
    }
    return kNone;
  }
};

TEST(TraceTest, FinalizeSortsByTrackThenTimeLongerFirst) {
  SmallTrace t;
  t.Add(t.device_track, "kernel", ActivityKind::kKernel, 500, 10);
  t.Add(t.host_track, "inner", ActivityKind::kCpuOp, 100, 50);
  t.Add(t.host_track, "outer", ActivityKind::kCpuOp, 100, 200);
  t.Add(t.host_track, "first", ActivityKind::kCpuOp, 10, 5);
  t.trace.Finalize();
  const auto& s = t.trace.slices();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(t.trace.Str(s[0].name), "first");
  EXPECT_EQ(t.trace.Str(s[1].name), "outer");
  EXPECT_EQ(t.trace.Str(s[2].name), "inner");
  EXPECT_EQ(t.trace.Str(s[3].name), "kernel");
  EXPECT_EQ(t.trace.TrackSlices(t.host_track), std::make_pair(0u, 3u));
  EXPECT_EQ(t.trace.TrackSlices(t.device_track), std::make_pair(3u, 4u));
  EXPECT_EQ(t.trace.TrackSlices(99), std::make_pair(0u, 0u));
}

// AddSlices(vector&&) takes the array's storage into an empty trace (no copy) and appends to one
// that holds slices; either way the argument is left empty and Finalize orders the whole.
TEST(TraceTest, AddSlicesByMoveTakesTheStorageOnlyWhenEmpty) {
  SmallTrace t;
  auto make = [&](std::string_view name, int64_t ts) {
    return t.Make(t.host_track, name, ActivityKind::kCpuOp, ts, 5);
  };
  std::vector<Slice> first = {make("b", 20), make("a", 10)};
  const Slice* storage = first.data();
  t.trace.AddSlices(std::move(first));
  EXPECT_TRUE(first.empty());
  ASSERT_EQ(t.trace.slices().size(), 2u);
  EXPECT_EQ(t.trace.slices().data(), storage);
  std::vector<Slice> more = {make("c", 5)};
  t.trace.AddSlices(std::move(more));
  EXPECT_TRUE(more.empty());
  t.trace.Finalize();
  const auto& s = t.trace.slices();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(t.trace.Str(s[0].name), "c");
  EXPECT_EQ(t.trace.Str(s[1].name), "a");
  EXPECT_EQ(t.trace.Str(s[2].name), "b");
}

// AppendSlices hands an importer room to write slices in place after those the trace holds;
// TruncateSlices drops what it did not write. Finalize then orders them as if added one by one.
TEST(TraceTest, SlicesWrittenInPlaceAndTruncated) {
  SmallTrace t;
  t.Add(t.host_track, "before", ActivityKind::kCpuOp, 30, 5);
  Slice* room = t.trace.AppendSlices(3);
  ASSERT_EQ(t.trace.slices().size(), 4u);
  EXPECT_EQ(room, t.trace.slices().data() + 1);
  room[0] = t.Make(t.device_track, "k2", ActivityKind::kKernel, 20, 5);
  room[1] = t.Make(t.device_track, "k1", ActivityKind::kKernel, 10, 5);
  t.trace.TruncateSlices(3);  // the third was never written
  t.trace.TruncateSlices(7);  // past the end: nothing
  t.trace.Finalize();
  const auto& s = t.trace.slices();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(t.trace.Str(s[0].name), "before");
  EXPECT_EQ(t.trace.Str(s[1].name), "k1");
  EXPECT_EQ(t.trace.Str(s[2].name), "k2");
  EXPECT_EQ(t.trace.TrackSlices(t.device_track), std::make_pair(1u, 3u));
}

// Per-track order is (ts, longer first, insertion order) whatever the input order: sorted, nearly
// sorted (a few events out of place, as real traces are), random.
TEST(TraceTest, FinalizeOrderMatchesAStableSortForAnyInputOrder) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int pattern = 0; pattern < 3; ++pattern) {
    SmallTrace t;
    struct Item {
      uint32_t track;
      int64_t ts, dur;
      int id;
    };
    std::vector<Item> items;
    for (int i = 0; i < 5000; ++i) {
      int64_t ts = i * 10;
      if (pattern == 1 && next() % 100 == 0) ts -= static_cast<int64_t>(next() % 20000);
      if (pattern == 2) ts = static_cast<int64_t>(next() % 3000);
      items.push_back(
          {next() % 3 ? t.host_track : t.device_track, ts, static_cast<int64_t>(next() % 4), i});
      t.Add(items.back().track, std::to_string(i), ActivityKind::kCpuOp, ts, items.back().dur);
    }
    t.trace.Finalize();
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      if (a.track != b.track) return a.track < b.track;
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.dur > b.dur;
    });
    ASSERT_EQ(t.trace.slices().size(), items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      ASSERT_EQ(t.trace.Str(t.trace.slices()[i].name), std::to_string(items[i].id))
          << "pattern " << pattern << " at " << i;
    }
  }
}

TEST(TraceTest, NestsAndPutsOverlapsThatDoNotNestOnExtraLanes) {
  SmallTrace t;
  t.Add(t.host_track, "a", ActivityKind::kCpuOp, 0, 100);
  t.Add(t.host_track, "b", ActivityKind::kCpuOp, 10, 20);  // inside a
  t.Add(t.host_track, "c", ActivityKind::kCpuOp, 15, 5);   // inside b
  t.Add(t.host_track, "d", ActivityKind::kCpuOp, 90, 30);  // overlaps a's end: no nesting
  t.Add(t.host_track, "e", ActivityKind::kCpuOp, 30, 0);   // zero length at b's end
  t.trace.Finalize();
  const auto& s = t.trace.slices();
  ASSERT_EQ(s.size(), 5u);  // nothing dropped
  const uint32_t a = t.Find("a"), b = t.Find("b"), c = t.Find("c"), d = t.Find("d");
  EXPECT_EQ(s[a].parent, kNone);
  EXPECT_EQ(s[a].depth, 0);
  EXPECT_EQ(s[b].parent, a);
  EXPECT_EQ(s[b].depth, 1);
  EXPECT_EQ(s[c].parent, b);
  EXPECT_EQ(s[c].depth, 2);
  EXPECT_EQ(s[a].lane, 0);
  EXPECT_EQ(s[d].lane, 1);
  EXPECT_EQ(s[d].parent, kNone);
  EXPECT_EQ(t.trace.tracks()[t.host_track].lanes, 2);
  EXPECT_EQ(s[t.Find("e")].parent, a);
}

TEST(TraceTest, LinksDeviceActivityByExternalIdAndCorrelation) {
  SmallTrace t;
  t.Add(t.host_track, "ProfilerStep#1", ActivityKind::kUserAnnotation, 0, 1000, 1);
  t.Add(t.host_track, "aten::mul", ActivityKind::kCpuOp, 100, 200, 2);
  t.Add(t.host_track, "cudaLaunchKernel", ActivityKind::kRuntime, 150, 20, 2, 77);
  t.Add(t.device_track, "mul_kernel", ActivityKind::kKernel, 400, 50, 2, 77);
  // No External id on the kernel: the op comes from the runtime call's enclosing cpu_op.
  t.Add(t.host_track, "aten::add", ActivityKind::kCpuOp, 500, 100, 3);
  t.Add(t.host_track, "hipLaunchKernel", ActivityKind::kRuntime, 520, 10, 0, 78);
  t.Add(t.device_track, "add_kernel", ActivityKind::kKernel, 700, 30, 0, 78);
  // A kernel with neither link.
  t.Add(t.device_track, "orphan", ActivityKind::kKernel, 900, 5);
  t.trace.Finalize();
  const uint32_t mul = t.Find("aten::mul"), add = t.Find("aten::add");
  const uint32_t k1 = t.Find("mul_kernel"), k2 = t.Find("add_kernel"), k3 = t.Find("orphan");
  EXPECT_EQ(t.trace.Link(k1).op, mul);
  EXPECT_EQ(t.trace.Link(k1).runtime, t.Find("cudaLaunchKernel"));
  EXPECT_EQ(t.trace.Link(k2).op, add);
  EXPECT_EQ(t.trace.Link(k2).runtime, t.Find("hipLaunchKernel"));
  EXPECT_EQ(t.trace.Link(k3).op, kNone);
  EXPECT_EQ(t.trace.Link(k3).runtime, kNone);
  ASSERT_EQ(t.trace.DeviceActivityOf(mul).size(), 1u);
  EXPECT_EQ(t.trace.DeviceActivityOf(mul)[0], k1);
  EXPECT_TRUE(t.trace.DeviceActivityOf(t.Find("ProfilerStep#1")).empty());
  EXPECT_TRUE(t.trace.HasDeviceActivity());
  // Host slices have no device link.
  EXPECT_EQ(t.trace.Link(mul).op, kNone);
}

// Links and flows at scale, with ids dense (counting sort), sparse (radix) and very sparse
// (comparison sort), events added in an order that sorts nothing for free: every kernel finds its
// launch and the op around it, and every flow pair joins, even where an External id repeats far
// away.
TEST(TraceTest, LinksAndFlowsHoldAtScaleWithDenseOrSparseIds) {
  for (const int64_t stride : {int64_t{1}, int64_t{1000}, int64_t{1} << 40}) {
    SmallTrace t;
    const uint32_t host2 = t.trace.AddThreadTrack(0, 101, "worker");
    const StringId ac2g = t.trace.Intern("ac2g");
    const int n = 3000;
    for (int i = n - 1; i >= 0; --i) {  // backwards: nothing arrives sorted
      const uint32_t track = i % 2 ? t.host_track : host2;
      const int64_t ts = 1000 * i, ext = 1 + i * stride, corr = 7 + i * stride;
      t.Add(track, "op" + std::to_string(i), ActivityKind::kCpuOp, ts, 500, ext);
      t.Add(track, "launch", ActivityKind::kRuntime, ts + 100, 50, ext, corr);
      t.Add(t.device_track, "k" + std::to_string(i), ActivityKind::kKernel, ts + 300, 80, ext,
            corr);
      t.trace.AddFlowEndpoint(static_cast<uint64_t>(corr), ac2g, ac2g, t.device_track, ts + 300,
                              false, true);
      t.trace.AddFlowEndpoint(static_cast<uint64_t>(corr), ac2g, ac2g, track, ts + 100, true,
                              false);
    }
    // A reused External id on an op long before, which launched nothing and sorts first.
    t.Add(host2, "stale", ActivityKind::kCpuOp, -(int64_t{1} << 40), 10, 1 + 2 * stride);
    t.trace.Finalize();
    const auto& s = t.trace.slices();
    int kernels = 0;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s[i].kind != ActivityKind::kKernel) continue;
      ++kernels;
      const DeviceLink& link = t.trace.Link(i);
      ASSERT_NE(link.runtime, kNone);
      ASSERT_NE(link.op, kNone);
      EXPECT_EQ(s[link.runtime].correlation, s[i].correlation);
      EXPECT_EQ(t.trace.Str(s[link.op].name), "op" + std::string(t.trace.Str(s[i].name).substr(1)));
      ASSERT_EQ(t.trace.DeviceActivityOf(link.op).size(), 1u);
      EXPECT_EQ(t.trace.DeviceActivityOf(link.op)[0], i);
    }
    EXPECT_EQ(kernels, n);
    ASSERT_EQ(t.trace.flows().size(), static_cast<size_t>(n));
    for (const Flow& f : t.trace.flows()) {
      EXPECT_EQ(s[f.from].kind, ActivityKind::kRuntime);
      EXPECT_EQ(s[f.to].kind, ActivityKind::kKernel);
      EXPECT_EQ(s[f.from].correlation, static_cast<int64_t>(f.id));
      EXPECT_EQ(s[f.to].correlation, static_cast<int64_t>(f.id));
    }
  }
}

// Finalize on several threads (nesting and flow binding per track range, device links per slice
// range) gives the model one thread gives: the same slices (order, parent, depth, lane), lanes per
// track, flows, links and device activity per op. Big enough that 4 threads split every step.
TEST(TraceTest, FinalizeOnThreadsMatchesOneThread) {
  auto build = [](SmallTrace* t) {
    std::vector<uint32_t> tracks = {t->host_track, t->device_track};
    for (int k = 0; k < 5; ++k) tracks.push_back(t->trace.AddThreadTrack(0, 200 + k, "worker"));
    uint64_t x = 12345;
    auto next = [&x] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return x >> 33;
    };
    for (int i = 0; i < 70000; ++i) {
      // Uneven tracks, overlaps that do not nest, zero durations, a few out of order.
      const uint32_t host = tracks[2 + (i % 7 < 4 ? 0 : 1 + next() % 4)];
      const int64_t ts = 1000 * i - (i % 97 == 0 ? 5000 : 0), ext = 1 + i, corr = 5 + 2 * i;
      t->Add(host, "op", ActivityKind::kCpuOp, ts, static_cast<int64_t>(next() % 900), ext);
      t->Add(host, "launch", ActivityKind::kRuntime, ts + 100, static_cast<int64_t>(next() % 60),
             i % 5 ? ext : 0, corr);
      if (i % 3 == 0) t->Add(host, "child", ActivityKind::kCpuOp, ts + 50, 0, ext);
      t->Add(t->device_track, "kernel", ActivityKind::kKernel, ts + 300, 80, i % 11 ? ext : 0,
             i % 13 ? corr : 0);
      const StringId ac2g = t->trace.Intern("ac2g");
      t->trace.AddFlowEndpoint(static_cast<uint64_t>(corr), ac2g, ac2g, host, ts + 100 + i % 3,
                               true, false);
      t->trace.AddFlowEndpoint(static_cast<uint64_t>(corr), ac2g, ac2g, t->device_track, ts + 290,
                               false, i % 2 == 0);
    }
  };
  SmallTrace one, four;
  build(&one);
  build(&four);
  one.trace.Finalize(1);
  four.trace.Finalize(4);
  const auto& a = one.trace.slices();
  const auto& b = four.trace.slices();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), size_t{3} << 16);  // three parts at least
  int linked = 0;
  for (uint32_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(a[i].ts_ns == b[i].ts_ns && a[i].dur_ns == b[i].dur_ns &&
                a[i].external_id == b[i].external_id && a[i].correlation == b[i].correlation &&
                a[i].name == b[i].name && a[i].track == b[i].track && a[i].kind == b[i].kind &&
                a[i].parent == b[i].parent && a[i].depth == b[i].depth && a[i].lane == b[i].lane)
        << i;
    ASSERT_EQ(one.trace.Link(i).op, four.trace.Link(i).op) << i;
    ASSERT_EQ(one.trace.Link(i).runtime, four.trace.Link(i).runtime) << i;
    const auto da = one.trace.DeviceActivityOf(i), db = four.trace.DeviceActivityOf(i);
    ASSERT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << i;
    linked += one.trace.Link(i).runtime != kNone ? 1 : 0;
  }
  EXPECT_GT(linked, 55000);
  ASSERT_EQ(one.trace.flows().size(), four.trace.flows().size());
  EXPECT_GT(one.trace.flows().size(), 30000u);
  for (size_t f = 0; f < one.trace.flows().size(); ++f) {
    const Flow& x = one.trace.flows()[f];
    const Flow& y = four.trace.flows()[f];
    ASSERT_TRUE(x.id == y.id && x.category == y.category && x.name == y.name && x.from == y.from &&
                x.to == y.to)
        << f;
  }
  for (size_t t = 0; t < one.trace.tracks().size(); ++t) {
    EXPECT_EQ(one.trace.tracks()[t].lanes, four.trace.tracks()[t].lanes) << t;
  }
  EXPECT_GT(one.trace.tracks()[one.host_track + 2].lanes, 1);
}

TEST(TraceTest, BindsFlowEndpointsToSlices) {
  SmallTrace t;
  t.Add(t.host_track, "aten::mul", ActivityKind::kCpuOp, 100, 200, 2);
  t.Add(t.host_track, "cudaLaunchKernel", ActivityKind::kRuntime, 150, 20, 2, 77);
  t.Add(t.device_track, "mul_kernel", ActivityKind::kKernel, 400, 50, 2, 77);
  const StringId ac2g = t.trace.Intern("ac2g");
  // Kineto: the start sits at the runtime call's ts, the finish ("bp": "e") at the kernel's.
  t.trace.AddFlowEndpoint(77, ac2g, ac2g, t.host_track, 150, /*is_start=*/true, false);
  t.trace.AddFlowEndpoint(77, ac2g, ac2g, t.device_track, 400, /*is_start=*/false, true);
  // A finish with no start is dropped, not bound to garbage.
  t.trace.AddFlowEndpoint(99, ac2g, ac2g, t.device_track, 400, false, true);
  t.trace.Finalize();
  ASSERT_EQ(t.trace.flows().size(), 1u);
  const Flow& f = t.trace.flows()[0];
  EXPECT_EQ(f.id, 77u);
  EXPECT_EQ(f.from, t.Find("cudaLaunchKernel"));
  EXPECT_EQ(f.to, t.Find("mul_kernel"));
}

TEST(TraceTest, AddFlowIsRemappedBySortAndFinalizeIsIdempotent) {
  SmallTrace t;
  const uint32_t late = t.Add(t.host_track, "late", ActivityKind::kCpuOp, 900, 10);
  const uint32_t early = t.Add(t.host_track, "early", ActivityKind::kCpuOp, 10, 10);
  Flow f;
  f.id = 1;
  f.from = early;
  f.to = late;
  t.trace.AddFlow(f);
  t.trace.Finalize();
  t.trace.Finalize();
  ASSERT_EQ(t.trace.flows().size(), 1u);
  EXPECT_EQ(t.trace.Str(t.trace.slices()[t.trace.flows()[0].from].name), "early");
  EXPECT_EQ(t.trace.Str(t.trace.slices()[t.trace.flows()[0].to].name), "late");
  EXPECT_TRUE(t.trace.finalized());
}

TEST(TraceTest, ArgsRoundTripAndFindArg) {
  Trace trace;
  const uint32_t a =
      trace.AddArgs(R"({"External id": 7, "name": "x,\"y\"}", "dims": [[1, 2], []]})");
  EXPECT_EQ(trace.AddArgs("{}"), kNone);
  EXPECT_EQ(trace.ArgsJson(kNone), "{}");
  EXPECT_EQ(trace.FindArg(a, "External id"), "7");
  EXPECT_EQ(trace.FindArg(a, "name"), "\"x,\\\"y\\\"}\"");
  EXPECT_EQ(trace.FindArg(a, "dims"), "[[1, 2], []]");
  EXPECT_EQ(trace.FindArg(a, "missing"), std::nullopt);
  EXPECT_EQ(trace.FindArg(kNone, "x"), std::nullopt);
}

// Large stores compress sealed blocks; every handle must still read back exactly, from any
// thread, including args larger than a block and the still-open last block.
TEST(TraceTest, LargeArgStoresCompressAndReadBackExactly) {
  Trace trace;
  std::vector<uint32_t> handles;
  std::vector<std::string> texts;
  size_t total = 0;
  for (int i = 0; total < (40u << 20); ++i) {
    std::string text = "{\"External id\": " + std::to_string(i) +
                       ", \"correlation\": " + std::to_string(i * 7) + ", \"pad\": \"" +
                       std::string(i % 300, 'x') + "\"}";
    if (i == 5000) text = "{\"big\": \"" + std::string(200000, 'b') + "\"}";
    total += text.size();
    handles.push_back(trace.AddArgs(text));
    texts.push_back(std::move(text));
  }
  trace.Finalize();
  EXPECT_LT(trace.MemoryBytes(), total / 2) << "large arg stores should be compressed";
  auto check = [&](size_t start, size_t step) {
    for (size_t i = start; i < handles.size(); i += step) {
      ASSERT_EQ(trace.ArgsJson(handles[i]), texts[i]) << i;
    }
  };
  std::vector<std::thread> readers;
  for (size_t t = 0; t < 4; ++t) readers.emplace_back(check, t, 97);
  for (auto& r : readers) r.join();
  check(handles.size() - 50, 1);  // the open block
  EXPECT_EQ(trace.FindArg(handles[1234], "correlation"), std::to_string(1234 * 7));
  EXPECT_EQ(trace.ArgsJson(handles[5000]), texts[5000]);
}

// Args packed on another thread and linked whole get the handles and texts of AddArgs one by
// one, between objects added one by one, compressed or not, including one larger than a block;
// packed from a span (Pack) or one by one (Begin/Add/Finish, each text from a reused buffer).
TEST(TraceTest, PackedArgsLinkWithTheHandlesOfAddArgs) {
  Trace trace;
  std::vector<std::string> texts;
  std::vector<uint32_t> handles;
  auto text_of = [](size_t i) {
    return "{\"External id\": " + std::to_string(i) + ", \"pad\": \"" +
           std::string(i == 700 ? 100000 : i % 200, 'p') + "\"}";
  };
  ArgPacker packer;
  PackedArgs packed;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 300; ++i) {  // one by one: the store's open block
      texts.push_back(text_of(texts.size()));
      handles.push_back(trace.AddArgs(texts.back()));
    }
    std::vector<std::string_view> views;
    const size_t first = texts.size();
    for (int i = 0; i < 1500; ++i) texts.push_back(text_of(texts.size()));
    for (size_t i = first; i < texts.size(); ++i) views.push_back(texts[i]);
    const bool compress = round % 2 == 1;
    if (round < 2) {
      packer.Pack(views, compress, &packed);
    } else {
      packer.Begin(round == 2 ? views.size() : 0, compress, &packed);
      std::string buffer;
      for (std::string_view v : views) {
        buffer.assign(v);
        packer.Add(buffer);
        buffer.assign(buffer.size(), '#');  // the packer keeps its own copy
      }
      packer.Finish();
    }
    EXPECT_GT(packed.blocks.size(), 1u);
    const uint32_t h = trace.AddPackedArgs(&packed);
    EXPECT_TRUE(packed.blocks.empty());
    for (size_t i = 0; i < views.size(); ++i) handles.push_back(h + static_cast<uint32_t>(i));
  }
  texts.push_back(text_of(texts.size()));
  handles.push_back(trace.AddArgs(texts.back()));
  trace.Finalize();
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(handles[i], i);
    ASSERT_EQ(trace.ArgsJson(handles[i]), texts[i]) << i;
  }
}

TEST(TraceTest, FindOrAddReusesProcessesAndTracks) {
  Trace trace;
  const uint32_t p = trace.FindOrAddProcess(5, "");
  EXPECT_EQ(trace.FindOrAddProcess(5, ""), p);
  const uint32_t t1 = trace.FindOrAddTrack(p, 1);
  EXPECT_EQ(trace.FindOrAddTrack(p, 1), t1);
  EXPECT_NE(trace.FindOrAddTrack(p, 2), t1);
  const uint32_t q = trace.FindOrAddProcess(6, "Spans");
  EXPECT_EQ(trace.processes()[q].pid_text, "Spans");
  EXPECT_NE(trace.FindOrAddTrack(q, 1), t1);
  trace.MutableTrack(t1).name = trace.Intern("worker");
  EXPECT_EQ(trace.Str(trace.tracks()[t1].name), "worker");
}

}  // namespace
}  // namespace opscope
