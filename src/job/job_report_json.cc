// JobReportJson: the job's figures as one JSON document (times in microseconds).
#include <cmath>

#include "base/json_writer.h"
#include "opscope/job.h"

namespace opscope {
namespace {

void Us(JsonWriter& w, std::string_view key, double ns) {
  w.Key(key);
  w.Double(ns / 1e3);  // NaN (not known) is written as null
}
void Us(JsonWriter& w, std::string_view key, int64_t ns) { Us(w, key, static_cast<double>(ns)); }

void Gbps(JsonWriter& w, std::string_view key, double v) {
  w.Key(key);
  if (v < 0) {
    w.Null();
  } else {
    w.Double(v);
  }
}

void RankOrNull(JsonWriter& w, std::string_view key, int rank) {
  w.Key(key);
  if (rank < 0) {
    w.Null();
  } else {
    w.Int(rank);
  }
}

void Ranks(JsonWriter& w, const JobReport& r) {
  w.Key("ranks");
  w.BeginArray();
  for (const RankRow& row : r.ranks) {
    const DeviceTimeline& t = row.timeline;
    w.BeginObject();
    w.Field("rank", row.rank);
    w.Field("file", row.file);
    if (!row.part.empty()) w.Field("part", row.part);
    Us(w, "busy_us", t.busy_ns);
    Us(w, "idle_us", t.idle_ns);
    Us(w, "computation_us", t.computation_ns);
    Us(w, "communication_us", t.total_comm_ns);
    Us(w, "exposed_communication_us", t.exposed_comm_ns);
    Us(w, "memcpy_us", t.total_memcpy_ns);
    Us(w, "exposed_memcpy_us", t.exposed_memcpy_ns);
    Us(w, "total_us", t.total_ns);
    w.Key("overlap_pct");
    w.Double(row.overlap_pct);
    Us(w, "clock_offset_us", row.clock_offset_ns);
    w.Field("clock_drift_ppm", row.clock_drift_ppm);
    w.Field("clock_points", row.clock_points);
    w.EndObject();
  }
  w.EndArray();
}

void Collectives(JsonWriter& w, const JobReport& r) {
  w.Key("collectives");
  w.BeginArray();
  for (const CollectiveInstance& c : r.collectives) {
    w.BeginObject();
    w.Field("group", c.group);
    w.Field("seq", c.seq);
    w.Field("name", c.name);
    w.Field("dtype", c.dtype);
    w.Field("bytes", c.bytes);
    w.Field("group_size", c.group_size);
    w.Key("ranks");
    w.BeginArray();
    for (int rank : c.ranks) w.Int(rank);
    w.EndArray();
    w.Key("wait_us");
    w.BeginArray();
    for (int64_t ns : c.wait_ns) w.Double(static_cast<double>(ns) / 1e3);
    w.EndArray();
    Us(w, "skew_us", c.skew_ns);
    Us(w, "transfer_us", c.transfer_ns);
    Gbps(w, "algbw_gbps", c.algbw_gbps);
    Gbps(w, "busbw_gbps", c.busbw_gbps);
    RankOrNull(w, "last_rank", c.last_rank);
    w.EndObject();
  }
  w.EndArray();
  w.Key("collective_summary");
  w.BeginArray();
  for (const CollectiveSummaryRow& s : r.collective_summary) {
    w.BeginObject();
    w.Field("name", s.name);
    w.Field("bytes", s.bytes);
    w.Field("count", s.count);
    Us(w, "mean_skew_us", s.mean_skew_ns);
    Us(w, "median_skew_us", s.median_skew_ns);
    Us(w, "max_skew_us", s.max_skew_ns);
    Us(w, "mean_transfer_us", s.mean_transfer_ns);
    Gbps(w, "busbw_gbps", s.busbw_gbps);
    w.EndObject();
  }
  w.EndArray();
}

void Stragglers(JsonWriter& w, const JobReport& r) {
  w.Key("stragglers");
  w.BeginArray();
  for (const StragglerRow& s : r.stragglers) {
    w.BeginObject();
    w.Field("rank", s.rank);
    w.Field("times_last", s.times_last);
    Us(w, "wait_caused_us", s.wait_caused_ns);
    Us(w, "wait_caused_per_step_us", s.wait_caused_per_step_ns);
    Us(w, "compute_before_us", s.compute_before_ns);
    Us(w, "median_compute_before_us", s.median_compute_before_ns);
    w.Field("worst_group", s.worst_group);
    w.Field("worst_seq", s.worst_seq);
    Us(w, "worst_wait_us", s.worst_wait_ns);
    w.EndObject();
  }
  w.EndArray();
}

void StepWait(JsonWriter& w, const JobReport& r) {
  w.Key("step_numbers");
  w.BeginArray();
  for (int64_t n : r.step_numbers) w.Int(n);
  w.EndArray();
  w.Key("step_wait");
  w.BeginArray();
  for (const StepWaitRow& row : r.step_wait) {
    w.BeginObject();
    w.Field("rank", row.rank);
    w.Key("wait_us");
    w.BeginArray();
    for (int64_t ns : row.wait_ns) {
      if (ns < 0) {
        w.Null();
      } else {
        w.Double(static_cast<double>(ns) / 1e3);
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void Ops(JsonWriter& w, const JobReport& r) {
  w.Key("ops");
  w.BeginArray();
  for (const OpAcrossRanks& op : r.ops) {
    w.BeginObject();
    w.Field("name", op.name);
    Us(w, "min_us", op.min_ns);
    Us(w, "median_us", op.median_ns);
    Us(w, "max_us", op.max_ns);
    w.Field("max_rank", op.max_rank);
    w.Field("ranks", op.ranks);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string JobReportJson(const JobReport& r) {
  JsonWriter w;
  w.BeginObject();
  if (!r.error.empty()) {
    w.Field("error", r.error);
    w.EndObject();
    return w.Take();
  }
  w.Field("world_size", r.world_size);
  w.Field("device_type", r.device_type);
  w.Field("partial", r.partial);
  w.Field("clocks_aligned", r.clocks_aligned);
  RankOrNull(w, "reference_rank", r.reference_rank);
  w.Field("steps", r.steps);
  w.Key("warnings");
  w.BeginArray();
  for (const std::string& s : r.warnings) w.String(s);
  w.EndArray();
  w.Key("errors");
  w.BeginArray();
  for (const Status& e : r.errors) {
    w.BeginObject();
    w.Field("file", e.file());
    w.Field("offset", e.offset());
    w.Field("message", e.message());
    w.EndObject();
  }
  w.EndArray();
  Ranks(w, r);
  Collectives(w, r);
  Stragglers(w, r);
  StepWait(w, r);
  w.Key("findings");
  w.BeginArray();
  for (const std::string& s : r.findings) w.String(s);
  w.EndArray();
  Ops(w, r);
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
