// The job's aligned view for the Explorer (see job_view.h).
#include "explorer/job_view.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace opscope::explorer {
namespace {

// A rank of the axis and its summary.
struct RankView {
  const JobAxis::Rank* axis = nullptr;
  const RankSummary* summary = nullptr;
};

void WriteLanesOf(const TraceIndex& index, JsonWriter* w) {
  w->Key("lanes");
  w->BeginArray();
  const std::vector<Lane>& lanes = index.lanes();
  for (uint32_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].group == LaneGroup::kCounters || lanes[i].group == LaneGroup::kMemory) continue;
    w->BeginObject();
    w->Field("id", i);
    w->Field("group", LaneGroupKey(lanes[i].group));
    w->Field("role", LaneRoleKey(lanes[i].role));
    w->Field("title", lanes[i].title);
    w->Field("rows", static_cast<uint32_t>(lanes[i].rows.size()));
    w->Field("events", static_cast<uint64_t>(lanes[i].num_events));
    w->EndObject();
  }
  w->EndArray();
}

void WriteRank(const JobAxis& axis, size_t r, JsonWriter* w) {
  const JobAxis::Rank& k = axis.ranks[r];
  const RankRow& row = k.row;
  const TraceIndex& index = *k.index;
  w->BeginObject();
  w->Field("rank", row.rank);
  w->Field("trace", static_cast<uint64_t>(k.trace));
  w->Field("file", row.file);
  w->Field("start_ns", index.ToApi(index.start_ns()));  // 0: the trace's API time
  w->Field("axis_at_start_ns", axis.ToAxis(r, index.start_ns()));
  w->Field("scale", 1.0 / (1.0 + row.clock_drift_ppm / 1e6));
  w->Field("clock_offset_us", row.clock_offset_ns / 1e3);
  w->Field("clock_drift_ppm", row.clock_drift_ppm);
  w->Field("busy_us", static_cast<double>(row.timeline.busy_ns) / 1e3);
  w->Field("computation_us", static_cast<double>(row.timeline.computation_ns) / 1e3);
  w->Field("exposed_communication_us", static_cast<double>(row.timeline.exposed_comm_ns) / 1e3);
  w->Field("overlap_pct", row.overlap_pct);
  WriteLanesOf(index, w);
  w->EndObject();
}

// Every collective instance with each member's kernel: slice, lane, row and aligned times;
// `compact`: the members as one array relative to the first arrival (WriteJobView).
void WriteCollectives(const JobReport& report, const std::map<int, RankView>& views,
                      int64_t origin_ns, bool compact, JsonWriter* w) {
  using Key = std::pair<std::string, int64_t>;
  std::map<Key, std::map<int, const CollectiveRecord*>> records;
  for (const auto& [rank, v] : views) {
    for (const CollectiveRecord& c : v.summary->collectives) records[{c.group, c.seq}][rank] = &c;
  }
  w->Key("collectives");
  w->BeginArray();
  for (const CollectiveInstance& in : report.collectives) {
    w->BeginObject();
    w->Field("group", in.group);
    w->Field("seq", in.seq);
    w->Field("name", in.name);
    w->Field("bytes", in.bytes);
    w->Field("skew_ns", in.skew_ns);
    w->Field("transfer_ns", in.transfer_ns);
    w->Key("busbw_gbps");
    if (in.busbw_gbps < 0) {
      w->Null();
    } else {
      w->Double(in.busbw_gbps);
    }
    w->Field("last_rank", in.last_rank);
    const auto& of_rank = records[{in.group, in.seq}];
    struct Member {
      int64_t rank, slice, lane, row, start, end, wait;
    };
    std::vector<Member> members;
    for (size_t i = 0; i < in.ranks.size(); ++i) {
      const auto rec = of_rank.find(in.ranks[i]);
      const auto view = views.find(in.ranks[i]);
      if (rec == of_rank.end() || view == views.end()) continue;
      const CollectiveRecord& c = *rec->second;
      const TraceIndex& index = *view->second.axis->index;
      const bool served = c.slice < index.trace().slices().size();
      // The kernel on the axis exactly as /api/job/viewport draws it (c's times are its own).
      members.push_back({in.ranks[i], served ? int64_t{c.slice} : -1,
                         served ? int64_t{index.LaneOf(c.slice)} : -1,
                         served ? int64_t{index.DepthOf(c.slice)} : -1,
                         view->second.axis->row.ToReference(c.start_ns) - origin_ns,
                         view->second.axis->row.ToReference(c.end_ns) - origin_ns, in.wait_ns[i]});
    }
    if (compact) {
      int64_t first = members.empty() ? 0 : members.front().start;
      for (const Member& m : members) first = std::min(first, m.start);
      w->Field("first_ns", first);
      w->Key("m");
      w->BeginArray();
      for (const Member& m : members) {
        for (int64_t v :
             {m.rank, m.slice, m.lane, m.row, m.start - first, m.end - m.start, m.wait}) {
          w->Int(v);
        }
      }
      w->EndArray();
    } else {
      w->Key("members");
      w->BeginArray();
      for (const Member& m : members) {
        w->BeginArray();
        for (int64_t v : {m.rank, m.slice, m.lane, m.row, m.start, m.end, m.wait}) w->Int(v);
        w->EndArray();
      }
      w->EndArray();
    }
    w->EndObject();
  }
  w->EndArray();
}

// Ranks x steps: each rank's ProfilerStep#N start and duration on the axis, and its sync wait in
// that step (JobReport::step_wait), for the report's step numbers.
void WriteSteps(const JobReport& report, const std::map<int, RankView>& views, int64_t origin_ns,
                JsonWriter* w) {
  const std::vector<int64_t>& numbers = report.step_numbers;
  w->Key("steps");
  w->BeginObject();
  w->Key("numbers");
  w->BeginArray();
  for (int64_t n : numbers) w->Int(n);
  w->EndArray();
  w->Key("ranks");
  w->BeginArray();
  for (const auto& [rank, v] : views) {
    std::map<int64_t, const StepRecord*> by_number;
    for (const StepRecord& s : v.summary->steps) by_number.emplace(s.step, &s);
    w->BeginObject();
    w->Field("rank", rank);
    for (const bool start : {true, false}) {
      w->Key(start ? "start" : "dur");
      w->BeginArray();
      for (int64_t n : numbers) {
        const auto it = by_number.find(n);
        if (it == by_number.end()) {
          w->Null();
          continue;
        }
        const int64_t s = v.axis->row.ToReference(it->second->start_ns);
        const int64_t e = v.axis->row.ToReference(it->second->end_ns);
        w->Int(start ? s - origin_ns : e - s);
      }
      w->EndArray();
    }
    const auto wait = std::find_if(report.step_wait.begin(), report.step_wait.end(),
                                   [rank = rank](const StepWaitRow& r) { return r.rank == rank; });
    w->Key("wait");
    w->BeginArray();
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (wait == report.step_wait.end() || wait->wait_ns[i] < 0) {
        w->Null();
      } else {
        w->Int(wait->wait_ns[i]);
      }
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

// Per (collective, size): the table `opscope report` prints for the job, in ns.
void WriteCollectiveSummary(const JobReport& report, JsonWriter* w) {
  w->Key("collective_summary");
  w->BeginArray();
  for (const CollectiveSummaryRow& s : report.collective_summary) {
    w->BeginObject();
    w->Field("name", s.name);
    w->Field("bytes", s.bytes);
    w->Field("count", s.count);
    w->Field("mean_skew_ns", s.mean_skew_ns);
    w->Field("median_skew_ns", s.median_skew_ns);
    w->Field("max_skew_ns", s.max_skew_ns);
    w->Field("mean_transfer_ns", s.mean_transfer_ns);
    w->Key("busbw_gbps");
    if (s.busbw_gbps < 0) {
      w->Null();
    } else {
      w->Double(s.busbw_gbps);
    }
    w->EndObject();
  }
  w->EndArray();
}

void WriteStrings(std::string_view key, const std::vector<std::string>& values, JsonWriter* w) {
  w->Key(key);
  w->BeginArray();
  for (const std::string& s : values) w->String(s);
  w->EndArray();
}

}  // namespace

void WriteJobView(const JobReport& report, const JobAxis& axis, JsonWriter* w, bool compact) {
  std::map<int, RankView> views;  // the axis's ranks with their summaries
  for (const JobAxis::Rank& k : axis.ranks) {
    for (const RankSummary& s : report.summaries) {
      if (s.rank == k.row.rank && s.error.empty()) views[k.row.rank] = {&k, &s};
    }
  }
  const int64_t origin_ns = axis.origin_ns;
  w->BeginObject();
  w->Field("world_size", report.world_size);
  w->Field("clocks_aligned", report.clocks_aligned);
  w->Field("reference_rank", report.reference_rank);
  w->Field("partial", report.partial);
  w->Field("origin_ns", std::to_string(origin_ns));  // may not fit a double: a string
  w->Field("t1", axis.end_ns);
  WriteStrings("findings", report.findings, w);
  WriteStrings("warnings", report.warnings, w);
  w->Key("kinds");  // names of the kind codes in the viewport's items
  w->BeginArray();
  for (int k = 0; k <= static_cast<int>(ActivityKind::kOther); ++k) {
    w->String(ActivityKindName(static_cast<ActivityKind>(k)));
  }
  w->EndArray();
  w->Key("ranks");
  w->BeginArray();
  for (size_t r = 0; r < axis.ranks.size(); ++r) WriteRank(axis, r, w);
  w->EndArray();
  WriteCollectives(report, views, origin_ns, compact, w);
  WriteCollectiveSummary(report, w);
  w->Key("stragglers");
  w->BeginArray();
  for (const StragglerRow& s : report.stragglers) {
    w->BeginObject();
    w->Field("rank", s.rank);
    w->Field("times_last", s.times_last);
    w->Field("wait_caused_us", static_cast<double>(s.wait_caused_ns) / 1e3);
    w->Field("worst_group", s.worst_group);
    w->Field("worst_seq", s.worst_seq);
    w->Field("worst_wait_us", static_cast<double>(s.worst_wait_ns) / 1e3);
    w->EndObject();
  }
  w->EndArray();
  WriteSteps(report, views, origin_ns, w);
  w->EndObject();
}

}  // namespace opscope::explorer
