// GET /api/trace/N/summary (summary.h): the report's figures written for the Summary tab.
#include "explorer/summary.h"

#include "explorer/findings.h"
#include "opscope/analysis.h"

namespace opscope::explorer {
namespace {

void WriteGaps(const TraceIndex& index, const IdleGaps& gaps, JsonWriter* w) {
  w->Key("gaps");
  w->BeginObject();
  w->Field("count", gaps.count);
  w->Field("total_ns", gaps.total_ns);
  w->Field("max_ns", gaps.largest.empty() ? int64_t{0} : gaps.largest.front().dur_ns);
  w->Field("mean_ns", gaps.count ? static_cast<double>(gaps.total_ns) / gaps.count : 0.0);
  w->Key("largest");
  w->BeginArray();
  for (const IdleGap& g : gaps.largest) {
    w->BeginObject();
    w->Field("ts", index.ToApi(g.ts_ns));
    w->Field("dur", g.dur_ns);
    w->Key("before");
    index.WriteSliceRef(g.before, w);
    w->Key("after");
    index.WriteSliceRef(g.after, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteFusionCandidates(const std::vector<FusionCandidate>& fusion, JsonWriter* w) {
  w->Key("fusion_candidates");
  w->BeginArray();
  for (size_t i = 0; i < fusion.size() && i < 10; ++i) {
    w->BeginObject();
    w->Field("name", fusion[i].name);
    w->Field("calls", fusion[i].calls);
    w->Field("executions", fusion[i].executions);
    w->Field("busy_ns", fusion[i].busy_ns);
    w->Field("idle_ns", fusion[i].idle_ns);
    w->Key("nested");
    w->BeginArray();
    for (const std::string& n : fusion[i].nested) w->String(n);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

void WriteRepetition(const Repetition& rep, JsonWriter* w) {
  w->Key("repetition");
  if (rep.repeats == 0) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("names");
  w->BeginArray();
  for (const std::string& n : rep.names) w->String(n);
  w->EndArray();
  w->Field("repeats", rep.repeats);
  w->Field("executions", rep.executions);
  w->Field("busy_ns", rep.busy_ns);
  w->Field("idle_ns", rep.idle_ns);
  w->EndObject();
}

}  // namespace

void WriteSummary(const TraceIndex& index, JsonWriter* w, const std::string& file) {
  const Trace& trace = index.trace();
  const Report report = ComputeReport(trace);
  const std::vector<AttributedActivity> activities = TimelineActivities(trace);
  const IdleGaps gaps = ComputeIdleGaps(trace);
  const std::vector<FusionCandidate> fusion = FindFusionCandidates(trace, activities);
  const Repetition repetition = FindRepetition(trace, activities);
  w->BeginObject();
  w->Key("figures");
  ReportOptions options;
  options.file = file;
  w->Raw(ReportJson(trace, report, options));
  WriteGaps(index, gaps, w);
  WriteFusionCandidates(fusion, w);
  WriteRepetition(repetition, w);
  w->Key("findings");
  w->BeginArray();
  for (const std::string& f : Findings(index, report, gaps, fusion, repetition)) w->String(f);
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
