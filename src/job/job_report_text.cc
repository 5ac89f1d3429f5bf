// FormatJobReport: the job's tables as text.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "job/job_format.h"
#include "opscope/job.h"

namespace opscope {

std::string job_format::Time(double ns) {
  if (!std::isfinite(ns)) return "-";
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f}s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f}ms", ns / 1e6);
  return fmt::format("{:.3f}us", ns / 1e3);
}

namespace {

using job_format::Time;

std::string Bytes(int64_t b) {
  if (b <= 0) return "-";
  if (b >= 1000000000) return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9);
  if (b >= 1000000) return fmt::format("{:.2f} MB", static_cast<double>(b) / 1e6);
  if (b >= 1000) return fmt::format("{:.2f} KB", static_cast<double>(b) / 1e3);
  return fmt::format("{} B", b);
}

std::string Gbps(double v) { return v < 0 ? "-" : fmt::format("{:.2f}", v); }

bool Limit(int rows, size_t shown) { return rows >= 0 && shown >= static_cast<size_t>(rows); }

void More(size_t total, int rows, std::string* out) {
  if (rows >= 0 && total > static_cast<size_t>(rows)) {
    *out += fmt::format("  ... {} more (--rows N, or --json for all)\n", total - rows);
  }
}

void Header(const JobReport& r, std::string* out) {
  std::set<std::string> groups;
  for (const CollectiveInstance& c : r.collectives) groups.insert(c.group);
  *out += fmt::format(
      "Job: {} rank{} (world size {}), device: {}, {} collective{} matched in {} "
      "group{}",
      r.ranks.size(), r.ranks.size() == 1 ? "" : "s", r.world_size,
      r.device_type.empty() ? "none" : r.device_type, r.collectives.size(),
      r.collectives.size() == 1 ? "" : "s", groups.size(), groups.size() == 1 ? "" : "s");
  if (r.steps > 0) *out += fmt::format(", {} steps", r.steps);
  *out += r.clocks_aligned ? fmt::format("; clocks aligned to rank {}\n", r.reference_rank)
                           : "; clocks not aligned\n";
  for (const std::string& w : r.warnings) *out += "Warning: " + w + "\n";
  for (const Status& e : r.errors) {
    *out += fmt::format("Error: {}: {} (this rank is left out)\n", e.file(), e.message());
  }
  if (r.partial) {
    *out += fmt::format(
        "Partial report: {} rank file{} could not be read; every figure below "
        "leaves {} out.\n",
        r.errors.size(), r.errors.size() == 1 ? "" : "s", r.errors.size() == 1 ? "it" : "them");
  }
}

void RankTable(const JobReport& r, std::string* out) {
  *out +=
      "\nPer-rank device timeline (TraceLens gpu_timeline; overlap: share of communication "
      "overlapped by computation, as HTA)\n";
  *out += fmt::format(
      "  {:>5}  {:>12}  {:>12}  {:>12}  {:>13}  {:>12}  {:>12}  {:>14}  {:>12}  "
      "{:>8}  {:>13}  {}\n",
      "Rank", "Busy", "Idle", "Computation", "Communication", "Exposed comm", "Memcpy",
      "Exposed memcpy", "Total", "Overlap", "Clock offset", "File");
  for (const RankRow& row : r.ranks) {
    const DeviceTimeline& t = row.timeline;
    *out += fmt::format(
        "  {:>5}  {:>12}  {:>12}  {:>12}  {:>13}  {:>12}  {:>12}  {:>14}  {:>12}  {:>8}  {:>13}  "
        "{}\n",
        row.rank, Time(t.busy_ns), Time(t.idle_ns), Time(t.computation_ns), Time(t.total_comm_ns),
        Time(t.exposed_comm_ns), Time(t.total_memcpy_ns), Time(t.exposed_memcpy_ns),
        Time(t.total_ns),
        std::isfinite(row.overlap_pct) ? fmt::format("{:.2f}%", row.overlap_pct) : "-",
        r.clocks_aligned ? Time(row.clock_offset_ns) : "-", RankFileName(row.file, row.part));
  }
}

void CollectiveTables(const JobReport& r, int rows, std::string* out) {
  *out +=
      "\nCollectives by name and size (skew = last start - first start; transfer = earliest "
      "end - last start; bus bandwidth with NCCL's factors)\n";
  if (r.collective_summary.empty()) {
    *out += "  no communication kernels in these traces\n";
    return;
  }
  *out += fmt::format("  {:<14}  {:>10}  {:>6}  {:>12}  {:>12}  {:>12}  {:>13}  {:>11}\n", "Name",
                      "Bytes", "Count", "Skew mean", "Skew median", "Skew max", "Transfer mean",
                      "Bus GB/s");
  size_t shown = 0;
  for (const CollectiveSummaryRow& s : r.collective_summary) {
    if (Limit(rows, shown++)) break;
    *out += fmt::format("  {:<14}  {:>10}  {:>6}  {:>12}  {:>12}  {:>12}  {:>13}  {:>11}\n", s.name,
                        Bytes(s.bytes), s.count, Time(s.mean_skew_ns), Time(s.median_skew_ns),
                        Time(s.max_skew_ns), Time(s.mean_transfer_ns), Gbps(s.busbw_gbps));
  }
  More(r.collective_summary.size(), rows, out);
  std::vector<size_t> order(r.collectives.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.collectives[a].skew_ns > r.collectives[b].skew_ns;
  });
  *out += fmt::format("\nCollectives with the largest skew ({} instances)\n", order.size());
  *out += fmt::format("  {:<12}  {:>6}  {:<14}  {:>10}  {:>5}  {:>12}  {:>12}  {:>9}  {:>9}  {}\n",
                      "Group", "Seq", "Name", "Bytes", "Ranks", "Skew", "Transfer", "Alg GB/s",
                      "Bus GB/s", "Last rank");
  shown = 0;
  for (size_t i : order) {
    if (Limit(rows, shown++)) break;
    const CollectiveInstance& c = r.collectives[i];
    *out +=
        fmt::format("  {:<12}  {:>6}  {:<14}  {:>10}  {:>5}  {:>12}  {:>12}  {:>9}  {:>9}  {}\n",
                    c.group, c.seq, c.name, Bytes(c.bytes), c.ranks.size(), Time(c.skew_ns),
                    Time(c.transfer_ns), Gbps(c.algbw_gbps), Gbps(c.busbw_gbps),
                    c.last_rank >= 0 ? std::to_string(c.last_rank) : std::string("-"));
  }
  More(order.size(), rows, out);
}

void StragglerTable(const JobReport& r, int rows, std::string* out) {
  *out +=
      "\nStragglers (wait caused = the other ranks' sync wait at the collectives where the "
      "rank arrived last)\n";
  *out += fmt::format("  {:>5}  {:>10}  {:>12}  {:>12}  {:>16}  {:>16}\n", "Rank", "Times last",
                      "Wait caused", "Per step", "Compute before", "Median rank");
  size_t shown = 0;
  for (const StragglerRow& s : r.stragglers) {
    if (Limit(rows, shown++)) break;
    const bool evidence = s.times_last > 0;
    *out += fmt::format("  {:>5}  {:>10}  {:>12}  {:>12}  {:>16}  {:>16}\n", s.rank, s.times_last,
                        Time(s.wait_caused_ns), Time(s.wait_caused_per_step_ns),
                        evidence ? Time(s.compute_before_ns) : "-",
                        evidence ? Time(s.median_compute_before_ns) : "-");
  }
  More(r.stragglers.size(), rows, out);
}

void OpTable(const JobReport& r, int rows, std::string* out) {
  *out += "\nDevice time per op across ranks (direct device time, TraceLens ops_summary)\n";
  *out += fmt::format("  {:>12}  {:>12}  {:>12}  {:>8}  {:>5}  {}\n", "Min", "Median", "Max",
                      "Max rank", "Ranks", "Op");
  size_t shown = 0;
  for (const OpAcrossRanks& op : r.ops) {
    if (Limit(rows, shown++)) break;
    *out += fmt::format("  {:>12}  {:>12}  {:>12}  {:>8}  {:>5}  {}\n", Time(op.min_ns),
                        Time(op.median_ns), Time(op.max_ns), op.max_rank, op.ranks, op.name);
  }
  More(r.ops.size(), rows, out);
}

}  // namespace

std::string FormatJobReport(const JobReport& report, const JobOptions& options) {
  std::string out;
  if (!report.error.empty()) return "Error: " + report.error + "\n";
  Header(report, &out);
  RankTable(report, &out);
  CollectiveTables(report, options.rows, &out);
  StragglerTable(report, options.rows, &out);
  out += "\nFindings\n";
  if (report.findings.empty()) out += "  none\n";
  for (const std::string& f : report.findings) out += "  - " + f + "\n";
  OpTable(report, options.rows, &out);
  return out;
}

}  // namespace opscope
