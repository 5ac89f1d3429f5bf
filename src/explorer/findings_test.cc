// The Summary's findings on small traces built by hand: repeated sequences count real consecutive
// copies (a step annotation is a container, not a repeated op), a name's nested calls count an
// execution once, wrappers with the same figures make one finding, and device time launched
// outside any op is never described as "0 calls".
#include "explorer/findings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace opscope::explorer {
namespace {

// A host thread and one device stream; ops launch kernels through runtime calls. Times in ns.
class Builder {
 public:
  Builder() {
    thread_ = t_.AddThreadTrack(t_.AddProcess(1, "python"), 1, "main");
    stream_ =
        t_.AddThreadTrack(t_.AddProcess(0, "GPU 0", true), 7, "stream 7", TrackKind::kDeviceStream);
  }
  // A host range [ts, ts + dur).
  void Range(const std::string& name, ActivityKind kind, int64_t ts, int64_t dur) {
    Slice s;
    s.name = t_.Intern(name);
    s.kind = kind;
    s.track = thread_;
    s.ts_ns = ts;
    s.dur_ns = dur;
    t_.AddSlice(s);
  }
  // A runtime call at `ts` launching a kernel of `dur` at `kernel_ts`.
  void Launch(int64_t ts, int64_t kernel_ts, int64_t dur) {
    Slice rt;
    rt.name = t_.Intern("cudaLaunchKernel");
    rt.kind = ActivityKind::kRuntime;
    rt.track = thread_;
    rt.ts_ns = ts;
    rt.dur_ns = 1;
    rt.correlation = ++corr_;
    Slice k = rt;
    k.name = t_.Intern("kernel");
    k.kind = ActivityKind::kKernel;
    k.track = stream_;
    k.ts_ns = kernel_ts;
    k.dur_ns = dur;
    t_.AddSlice(rt);
    t_.AddSlice(k);
  }
  // An op at `ts` (100 ns long) launching one 20 ns kernel 50 ns later.
  void Op(const std::string& name, int64_t ts) {
    Range(name, ActivityKind::kCpuOp, ts, 100);
    Launch(ts + 10, ts + 50, 20);
  }
  Trace Done() {
    t_.Finalize();
    return std::move(t_);
  }

 private:
  Trace t_;
  uint32_t thread_, stream_;
  int64_t corr_ = 0;
};

TEST(FindingsTest, StepAnnotationsAreContainersNotRepeatedOps) {
  Builder b;
  for (int step = 0; step < 5; ++step) {
    const int64_t t0 = step * 1000;
    b.Range("ProfilerStep#" + std::to_string(step + 2), ActivityKind::kUserAnnotation, t0, 900);
    b.Op("X", t0 + 100);
    b.Op("Y", t0 + 300);
  }
  const Trace t = b.Done();
  const Repetition rep = FindRepetition(t, TimelineActivities(t));
  EXPECT_EQ(rep.names, (std::vector<std::string>{"X", "Y"}));
  EXPECT_EQ(rep.repeats, 5);
  EXPECT_EQ(rep.executions, 10);
  for (const FusionCandidate& c : FindFusionCandidates(t, TimelineActivities(t))) {
    EXPECT_EQ(c.name.find("ProfilerStep"), std::string::npos) << "a step is not a call to fuse";
  }
}

TEST(FindingsTest, RepeatsAreConsecutiveCopies) {
  Builder b;
  int64_t ts = 0;
  auto ops = [&](const std::vector<std::string>& names, int copies) {
    for (int c = 0; c < copies; ++c) {
      for (const std::string& n : names) {
        b.Op(n, ts);
        ts += 200;
      }
    }
  };
  ops({"A", "B", "C"}, 4);
  ops({"D", "E"}, 1);
  ops({"A", "B", "C"}, 2);
  const Trace t = b.Done();
  const Repetition rep = FindRepetition(t, TimelineActivities(t));
  EXPECT_EQ(rep.names, (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(rep.repeats, 4);
  EXPECT_EQ(rep.executions, 12);
  // One op repeated, or nothing repeated three times: no repetition.
  Builder one;
  for (int i = 0; i < 9; ++i) one.Op("Z", i * 200);
  const Trace ones = one.Done();
  EXPECT_EQ(FindRepetition(ones, TimelineActivities(ones)).repeats, 0);
}

TEST(FindingsTest, NestedCallsOfOneNameCountAnExecutionOnce) {
  Builder b;
  for (int call = 0; call < 2; ++call) {
    const int64_t t0 = call * 10000;
    b.Range("_call_impl", ActivityKind::kCpuOp, t0, 5000);
    b.Range("_call_impl", ActivityKind::kCpuOp, t0 + 10, 4000);
    b.Range("aten::mm", ActivityKind::kCpuOp, t0 + 20, 3000);
    for (int k = 0; k < 3; ++k) b.Launch(t0 + 30 + k, t0 + 100 + 500 * k, 100);
  }
  const Trace t = b.Done();
  const std::vector<FusionCandidate> fusion = FindFusionCandidates(t, TimelineActivities(t));
  ASSERT_EQ(fusion.size(), 1u) << "the wrapper and the op are one finding";
  EXPECT_EQ(fusion[0].name, "_call_impl");
  EXPECT_EQ(fusion[0].nested, (std::vector<std::string>{"aten::mm"}));
  EXPECT_EQ(fusion[0].calls, 2);
  EXPECT_EQ(fusion[0].executions, 6);
  EXPECT_EQ(fusion[0].busy_ns, 600);
  EXPECT_EQ(fusion[0].idle_ns, 2 * (1100 - 300));
}

TEST(FindingsTest, DeviceTimeOutsideAnyOpIsNotZeroCalls) {
  Builder b;
  b.Launch(10, 100, 500);  // a runtime call no op encloses
  b.Launch(20, 700, 500);
  const Trace t = b.Done();
  const TraceIndex index(t);
  const std::vector<AttributedActivity> acts = TimelineActivities(t);
  const std::vector<std::string> findings =
      Findings(index, ComputeReport(t), ComputeIdleGaps(t), FindFusionCandidates(t, acts),
               FindRepetition(t, acts));
  bool top = false;
  for (const std::string& f : findings) {
    EXPECT_EQ(f.find("0 calls"), std::string::npos) << f;
    top |= f.find("(1.000 us from 2 launches outside any op)") != std::string::npos;
  }
  EXPECT_TRUE(top) << findings.size();
}

}  // namespace
}  // namespace opscope::explorer
