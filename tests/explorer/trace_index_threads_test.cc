// The Explorer's index built on several threads, eagerly or with its id lookups deferred, answers
// exactly as the one-thread eager index: lanes, viewports at several zooms, box selections,
// searches, slice details, id lookups and every slice's lane and depth, on a generated Neuron
// trace and on every fixture.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/json_writer.h"
#include "explorer/trace_index.h"
#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "tests/analysis/fixture_traces.h"

namespace opscope::explorer {
namespace {

// Everything the API serves from an index, as one text.
std::string Answers(const TraceIndex& index) {
  JsonWriter w;
  w.BeginArray();
  index.WriteLanes(&w);
  std::vector<uint32_t> all_lanes;
  for (uint32_t l = 0; l < index.lanes().size(); ++l) all_lanes.push_back(l);
  const int64_t t0 = index.start_ns(), span = index.end_ns() - index.start_ns();
  for (int64_t zoom : {1, 7, 1000}) {
    ViewportQuery q;
    q.t0 = t0 + span / 3;
    q.t1 = q.t0 + std::max<int64_t>(span / zoom, 1);
    q.width_px = 1500;
    index.WriteViewport(q, &w);
    index.WriteSelection(q.t0, q.t1, all_lanes, 50, &w);
  }
  const Trace& trace = index.trace();
  std::vector<bool> names(trace.strings().size(), false);
  for (size_t id = 1; id < names.size(); id += 3) names[id] = true;
  index.WriteSearch({&names}, SearchOrder::kStart, 5, 50, true, &w);
  index.WriteSearch({&names}, SearchOrder::kDuration, 5, 50, true, &w);
  const auto n = static_cast<uint32_t>(trace.slices().size());
  for (uint32_t i = 0; i < n; i += std::max<uint32_t>(1, n / 97)) index.WriteSlice(i, &w);
  w.EndArray();
  std::string out = w.Take();
  for (uint32_t i = 0; i < n; ++i) {
    out += std::to_string(index.LaneOf(i)) + ":" + std::to_string(index.DepthOf(i)) + " ";
  }
  for (uint32_t id : index.SlicesOverlapping(t0 + span / 4, t0 + span / 2)) {
    out += std::to_string(id) + ",";
  }
  for (uint32_t i = 0; i < n; i += std::max<uint32_t>(1, n / 89)) {
    out += "\n";
    for (uint32_t id : index.WithExternalId(trace.slices()[i].external_id)) {
      out += std::to_string(id) + ",";
    }
    out += ";";
    for (uint32_t id : index.WithCorrelation(trace.slices()[i].correlation)) {
      out += std::to_string(id) + ",";
    }
  }
  return out;
}

// At every thread count, eager and deferred (the id lookups built by the first query that needs
// them, or by BuildDeferred racing the queries on another thread) answer the same.
void ExpectSameForEveryThreadCount(const Trace& trace, const std::string& what) {
  const std::string one = Answers(TraceIndex(trace, 1));
  for (int threads : {1, 2, 3, 8}) {
    if (threads > 1) {
      EXPECT_TRUE(Answers(TraceIndex(trace, threads)) == one)
          << what << ", " << threads << " threads";
    }
    EXPECT_TRUE(Answers(TraceIndex(trace, threads, IndexBuild::kDeferred)) == one)
        << what << ", " << threads << " threads, deferred";
    const TraceIndex racing(trace, threads, IndexBuild::kDeferred);
    std::thread builder([&racing] { racing.BuildDeferred(); });
    const std::string answers = Answers(racing);
    builder.join();
    EXPECT_TRUE(answers == one) << what << ", " << threads << " threads, deferred, racing";
  }
}

TEST(TraceIndexThreadsTest, GeneratedTraceIndexesTheSameOnEveryThreadCount) {
  ExpectSameForEveryThreadCount(MakeSyntheticNeuronTrace({.target_events = 40000}), "generated");
}

TEST(TraceIndexThreadsTest, FixturesIndexTheSameOnEveryThreadCount) {
  testing::ForEachFixtureTrace([](const std::filesystem::path& path, const Trace& trace) {
    ExpectSameForEveryThreadCount(trace, path.string());
  });
}

}  // namespace
}  // namespace opscope::explorer
