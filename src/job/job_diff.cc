// Comparing two jobs rank by rank and collective by collective (FormatJobDiff / JobDiffJson).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/json_writer.h"
#include "job/job_format.h"
#include "opscope/job.h"

namespace opscope {
namespace {

using job_format::Time;

std::string Change(double a, double b) { return fmt::format("{} -> {}", Time(a), Time(b)); }

std::string Percent(double a, double b) {
  if (a == 0) return b == 0 ? "=" : "new";
  return fmt::format("{:+.1f}%", 100.0 * (b - a) / a);
}

// Ranks of either job, each with its row on both sides (nullptr where missing).
std::map<int, std::pair<const RankRow*, const RankRow*>> PairRanks(const JobReport& a,
                                                                   const JobReport& b) {
  std::map<int, std::pair<const RankRow*, const RankRow*>> out;
  for (const RankRow& r : a.ranks) out[r.rank].first = &r;
  for (const RankRow& r : b.ranks) out[r.rank].second = &r;
  return out;
}

using SummaryKey = std::pair<std::string, int64_t>;  // (collective, bytes)
std::map<SummaryKey, std::pair<const CollectiveSummaryRow*, const CollectiveSummaryRow*>>
PairSummaries(const JobReport& a, const JobReport& b) {
  std::map<SummaryKey, std::pair<const CollectiveSummaryRow*, const CollectiveSummaryRow*>> out;
  for (const auto& s : a.collective_summary) out[{s.name, s.bytes}].first = &s;
  for (const auto& s : b.collective_summary) out[{s.name, s.bytes}].second = &s;
  return out;
}

// Total transfer time of a summary row (count x mean), 0 when absent.
double TotalTransfer(const CollectiveSummaryRow* s) {
  return s ? s->mean_transfer_ns * static_cast<double>(s->count) : 0;
}

struct InstancePair {
  const CollectiveInstance* a;
  const CollectiveInstance* b;
  // A late arrival raises the skew and shortens the transfer by the same amount: each counts.
  double change_ns() const {
    return std::fabs(static_cast<double>(b->skew_ns - a->skew_ns)) +
           std::fabs(static_cast<double>(b->transfer_ns - a->transfer_ns));
  }
};

// Instances matched by (group, seq) and name on both sides, largest change first.
std::vector<InstancePair> PairInstances(const JobReport& a, const JobReport& b) {
  std::map<std::pair<std::string, int64_t>, const CollectiveInstance*> in_a;
  for (const CollectiveInstance& c : a.collectives) in_a[{c.group, c.seq}] = &c;
  std::vector<InstancePair> out;
  for (const CollectiveInstance& c : b.collectives) {
    auto it = in_a.find({c.group, c.seq});
    if (it != in_a.end() && it->second->name == c.name) out.push_back({it->second, &c});
  }
  std::stable_sort(out.begin(), out.end(), [](const InstancePair& x, const InstancePair& y) {
    return x.change_ns() > y.change_ns();
  });
  return out;
}

std::string Straggler(const JobReport& r) {
  if (r.stragglers.empty() || r.stragglers.front().wait_caused_ns == 0) return "none";
  const StragglerRow& s = r.stragglers.front();
  return fmt::format("rank {} ({} caused over {} collectives)", s.rank, Time(s.wait_caused_ns),
                     s.times_last);
}

}  // namespace

std::string FormatJobDiff(const JobReport& a, const JobReport& b, int rows) {
  std::string out =
      fmt::format("Jobs: {} ranks, {} collectives -> {} ranks, {} collectives\n", a.ranks.size(),
                  a.collectives.size(), b.ranks.size(), b.collectives.size());
  out += fmt::format("Top straggler: {} -> {}\n", Straggler(a), Straggler(b));
  out += "\nPer rank (busy, computation, exposed communication, total; A -> B)\n";
  out += fmt::format("  {:>5}  {:>26}  {:>9}  {:>26}  {:>26}  {:>26}  {:>9}\n", "Rank", "Busy", "",
                     "Computation", "Exposed comm", "Total", "");
  for (const auto& [rank, pair] : PairRanks(a, b)) {
    const auto [x, y] = pair;
    if (!x || !y) {
      out += fmt::format("  {:>5}  only in job {}\n", rank, x ? "A" : "B");
      continue;
    }
    const DeviceTimeline &ta = x->timeline, &tb = y->timeline;
    out += fmt::format(
        "  {:>5}  {:>26}  {:>9}  {:>26}  {:>26}  {:>26}  {:>9}\n", rank,
        Change(static_cast<double>(ta.busy_ns), static_cast<double>(tb.busy_ns)),
        Percent(static_cast<double>(ta.busy_ns), static_cast<double>(tb.busy_ns)),
        Change(static_cast<double>(ta.computation_ns), static_cast<double>(tb.computation_ns)),
        Change(static_cast<double>(ta.exposed_comm_ns), static_cast<double>(tb.exposed_comm_ns)),
        Change(static_cast<double>(ta.total_ns), static_cast<double>(tb.total_ns)),
        Percent(static_cast<double>(ta.total_ns), static_cast<double>(tb.total_ns)));
  }
  out += "\nCollectives by name and size (count, mean skew, mean transfer, bus GB/s; A -> B)\n";
  out += fmt::format("  {:<14}  {:>10}  {:>12}  {:>26}  {:>26}  {:>16}\n", "Name", "Bytes", "Count",
                     "Skew mean", "Transfer mean", "Bus GB/s");
  auto summaries = PairSummaries(a, b);
  std::vector<
      std::pair<SummaryKey, std::pair<const CollectiveSummaryRow*, const CollectiveSummaryRow*>>>
      ordered(summaries.begin(), summaries.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& x, const auto& y) {
    return std::fabs(TotalTransfer(x.second.second) - TotalTransfer(x.second.first)) >
           std::fabs(TotalTransfer(y.second.second) - TotalTransfer(y.second.first));
  });
  int shown = 0;
  for (const auto& [key, pair] : ordered) {
    if (rows >= 0 && shown++ >= rows) break;
    const auto [x, y] = pair;
    auto bw = [](const CollectiveSummaryRow* s) {
      return s && s->busbw_gbps >= 0 ? fmt::format("{:.2f}", s->busbw_gbps) : std::string("-");
    };
    out += fmt::format("  {:<14}  {:>10}  {:>12}  {:>26}  {:>26}  {:>16}\n", key.first, key.second,
                       fmt::format("{} -> {}", x ? x->count : 0, y ? y->count : 0),
                       Change(x ? x->mean_skew_ns : NAN, y ? y->mean_skew_ns : NAN),
                       Change(x ? x->mean_transfer_ns : NAN, y ? y->mean_transfer_ns : NAN),
                       bw(x) + " -> " + bw(y));
  }
  const std::vector<InstancePair> instances = PairInstances(a, b);
  out += fmt::format(
      "\nCollectives matched by (group, seq) in both jobs: {}, largest change in skew "
      "and transfer first\n",
      instances.size());
  out += fmt::format("  {:<12}  {:>6}  {:<14}  {:>26}  {:>26}  {:>9}\n", "Group", "Seq", "Name",
                     "Skew", "Transfer", "Last rank");
  shown = 0;
  for (const InstancePair& p : instances) {
    if (rows >= 0 && shown++ >= rows) break;
    out += fmt::format(
        "  {:<12}  {:>6}  {:<14}  {:>26}  {:>26}  {:>9}\n", p.b->group, p.b->seq, p.b->name,
        Change(static_cast<double>(p.a->skew_ns), static_cast<double>(p.b->skew_ns)),
        Change(static_cast<double>(p.a->transfer_ns), static_cast<double>(p.b->transfer_ns)),
        fmt::format("{} -> {}", p.a->last_rank, p.b->last_rank));
  }
  return out;
}

namespace {

// `key` with a nanosecond figure written in microseconds.
void Us(JsonWriter& w, std::string_view key, double ns) {
  w.Key(key);
  w.Double(ns / 1e3);
}

// "ranks": each rank of either job with its timeline on both sides (null where missing).
void WriteRanks(JsonWriter& w, const JobReport& a, const JobReport& b) {
  w.Key("ranks");
  w.BeginArray();
  for (const auto& [rank, pair] : PairRanks(a, b)) {
    w.BeginObject();
    w.Field("rank", rank);
    for (const auto& [side, row] : {std::pair{"a", pair.first}, std::pair{"b", pair.second}}) {
      w.Key(side);
      if (!row) {
        w.Null();
        continue;
      }
      w.BeginObject();
      Us(w, "busy_us", static_cast<double>(row->timeline.busy_ns));
      Us(w, "computation_us", static_cast<double>(row->timeline.computation_ns));
      Us(w, "communication_us", static_cast<double>(row->timeline.total_comm_ns));
      Us(w, "exposed_communication_us", static_cast<double>(row->timeline.exposed_comm_ns));
      Us(w, "total_us", static_cast<double>(row->timeline.total_ns));
      w.Key("overlap_pct");
      w.Double(row->overlap_pct);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
}

// "collective_summary": each (name, bytes) of either job on both sides.
void WriteSummaries(JsonWriter& w, const JobReport& a, const JobReport& b) {
  w.Key("collective_summary");
  w.BeginArray();
  for (const auto& [key, pair] : PairSummaries(a, b)) {
    w.BeginObject();
    w.Field("name", key.first);
    w.Field("bytes", key.second);
    for (const auto& [side, s] : {std::pair{"a", pair.first}, std::pair{"b", pair.second}}) {
      w.Key(side);
      if (!s) {
        w.Null();
        continue;
      }
      w.BeginObject();
      w.Field("count", s->count);
      Us(w, "mean_skew_us", s->mean_skew_ns);
      Us(w, "mean_transfer_us", s->mean_transfer_ns);
      w.Key("busbw_gbps");
      if (s->busbw_gbps < 0) {
        w.Null();
      } else {
        w.Double(s->busbw_gbps);
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
}

// "collectives": the collectives matched by (group, seq) in both jobs.
void WriteInstances(JsonWriter& w, const JobReport& a, const JobReport& b) {
  w.Key("collectives");
  w.BeginArray();
  for (const InstancePair& p : PairInstances(a, b)) {
    w.BeginObject();
    w.Field("group", p.b->group);
    w.Field("seq", p.b->seq);
    w.Field("name", p.b->name);
    Us(w, "skew_us_a", static_cast<double>(p.a->skew_ns));
    Us(w, "skew_us_b", static_cast<double>(p.b->skew_ns));
    Us(w, "transfer_us_a", static_cast<double>(p.a->transfer_ns));
    Us(w, "transfer_us_b", static_cast<double>(p.b->transfer_ns));
    w.Field("last_rank_a", p.a->last_rank);
    w.Field("last_rank_b", p.b->last_rank);
    w.EndObject();
  }
  w.EndArray();
}

// "stragglers": each job's straggler rows.
void WriteStragglers(JsonWriter& w, const JobReport& a, const JobReport& b) {
  w.Key("stragglers");
  w.BeginObject();
  for (const auto& [side, r] : {std::pair{"a", &a}, std::pair{"b", &b}}) {
    w.Key(side);
    w.BeginArray();
    for (const StragglerRow& s : r->stragglers) {
      w.BeginObject();
      w.Field("rank", s.rank);
      w.Field("times_last", s.times_last);
      Us(w, "wait_caused_us", static_cast<double>(s.wait_caused_ns));
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::string JobDiffJson(const JobReport& a, const JobReport& b) {
  JsonWriter w;
  w.BeginObject();
  WriteRanks(w, a, b);
  WriteSummaries(w, a, b);
  WriteInstances(w, a, b);
  WriteStragglers(w, a, b);
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
