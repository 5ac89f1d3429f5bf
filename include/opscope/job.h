// Whole distributed jobs: one trace per rank, analysed together.
//
// A job is read in two stages so that it can be spread over many processes (MPI) and still give
// the same answer: each rank's trace is imported and reduced to a RankSummary (a few KB per
// collective-heavy rank, independent of the trace's size), the trace is dropped, and the
// summaries of all ranks are analysed together by AnalyzeJob.
//
//   std::vector<opscope::RankFile> files;
//   opscope::Status st = opscope::FindRankFiles({"traces/"}, &files);
//   if (!st.ok()) { ... }                           // st.message() names the path
//   std::vector<opscope::RankSummary> ranks = opscope::LoadRankSummaries(files);
//   opscope::JobReport job = opscope::AnalyzeJob(std::move(ranks));
//   if (!job.error.empty()) { ... }                 // e.g. two files claiming one rank
//   std::cout << opscope::FormatJobReport(job);     // or JobReportJson(job)
//
// Definitions (docs/multi-rank.md cites each source):
//   - per-rank timeline: ComputeDeviceTimeline (TraceLens gpu_timeline); overlap_pct as HTA's
//     get_comm_comp_overlap: |communication ∩ computation| / |communication| over merged kernel
//     intervals;
//   - a collective instance is (process group, sequence in that group); per instance
//     skew = last start - first start, a rank's sync wait = last start - its start,
//     transfer = earliest end - last start, algbw = bytes / transfer, busbw = algbw x NCCL's
//     factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; others 1);
//   - clock alignment: each rank's clock is fitted to the lowest rank's from collective end
//     times (offset + drift) and applied before skew.
// Times are nanoseconds since the epoch (the trace's base time + its timestamp) unless a name
// says otherwise.
//
// Thread safety: every function is pure over its arguments and may run concurrently.
#ifndef OPSCOPE_JOB_H_
#define OPSCOPE_JOB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/check.h"
#include "opscope/import.h"
#include "opscope/status.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// Finding and reading rank files

struct RankFile {
  RankFile() = default;
  RankFile(std::string file_path, uint64_t stored_bytes, int rank_in_name, std::string of_part = {})
      : path(std::move(file_path)),
        bytes(stored_bytes),
        name_rank(rank_in_name),
        part(std::move(of_part)) {}

  std::string path;
  uint64_t bytes = 0;  // size as stored (what MPI balances on)
  int name_rank = -1;  // rank from a `rank[-_]?N` in the file or folder name; -1 = none
  // The part of a profile holding several ranks (ImportOptions::part, ListTraceParts: a host of
  // a Neuron system profile); "" = the whole file. name_rank is then the part's index.
  std::string part;
};

// A rank's name as reports and viewers show it: `path`, or "PATH#PART" for a part of a profile.
std::string RankFileName(const std::string& path, const std::string& part);

// Every profile named by `paths` (files, or folders searched recursively, such as Neuron's
// profile layout: FindTraces), sorted by path; a profile that holds several ranks
// (ListTraceParts: a Neuron system profile of several hosts) is one RankFile per part, in the
// parts' order, ranked by it. NotFound (file() = the path, message "PATH: ...") when `paths` is
// empty or a path does not exist, is neither a file nor a folder, or is a folder holding no
// trace; `files` is then left unchanged.
Status FindRankFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files);
// The rank a path names ("rank3", "rank-3", "rank_3", any case, in the file name or, failing
// that, the closest folder name); -1 when none.
int RankFromPath(const std::string& path);

// One collective as one rank saw it: a communication kernel (the shared classifier,
// analysis::IsCommunication) with PyTorch's collective args when the trace has them.
struct CollectiveRecord {
  std::string group;   // "Process Group Name"; "stream N" (N-th communication stream) without it
  int64_t seq = 0;     // the explicit "Seq" arg, else its index in the group on this rank
  std::string name;    // "Collective name" (allreduce, broadcast, ...), else from the kernel name
  std::string kernel;  // the kernel's name
  std::string dtype;   // "Float", "BFloat16", ... ("" when not recorded)
  int64_t in_nelems = -1;   // "In msg nelems" (-1 = not recorded)
  int64_t out_nelems = -1;  // "Out msg nelems"
  int64_t group_size = 0;   // "Group size" (0 = not recorded)
  int64_t stream = 0;       // the device track's tid
  int64_t start_ns = 0;     // kernel start, epoch ns in this rank's clock
  int64_t end_ns = 0;
  // Computation kernel time (union) on this rank since its previous collective ended: what the
  // rank did before it arrived.
  int64_t compute_before_ns = 0;
  uint32_t slice = kNone;  // the kernel's index in the rank's trace (for viewers)
};

// A training step on one rank: a ProfilerStep#N annotation.
struct StepRecord {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Direct device time of one op on one rank (TraceLens ops_summary).
struct RankOpTime {
  std::string name;
  int64_t device_ns = 0;
  int64_t count = 0;
};

// Everything the job analyses need from one rank's trace. Plain data: it is what MPI processes
// send to process 0 (SerializeRankSummaries), so it holds no pointers and no doubles.
struct RankSummary {
  std::string file;
  std::string part;  // RankFile::part
  uint64_t file_bytes = 0;
  int rank = -1;       // distributedInfo.rank, else from the path; -1 = unknown
  int world_size = 0;  // distributedInfo.world_size; 0 = not recorded
  bool rank_from_distributed_info = false;
  // Import outcome: a failed import leaves `error` set (with the byte offset in the message and
  // in error_offset) and the rank out of the analyses.
  std::string error;
  uint64_t error_offset = 0;
  uint64_t skipped_events = 0;
  std::string device_type;
  uint64_t slices = 0;
  DeviceTimeline timeline;                    // today's single-trace definitions
  int64_t overlap_comm_ns = 0;                // HTA: merged communication kernel time
  int64_t overlap_ns = 0;                     // ... of it overlapped by merged computation kernels
  std::vector<CollectiveRecord> collectives;  // in start order
  std::vector<StepRecord> steps;              // in start order
  std::vector<RankOpTime> ops;                // sorted by name
};

// Reduces one imported trace to its summary (the trace may be dropped afterwards).
RankSummary SummarizeRank(const Trace& trace, const RankFile& file);
// Imports `file` and summarizes it; a file that fails to import gives a summary with `error` set.
RankSummary LoadRankSummary(const RankFile& file, const ImportOptions& options = {});
// LoadRankSummary of every file (same order), on `threads` cores (0 = the cores available): one
// file per worker, each trace dropped once summarized, so memory is at most one trace per worker;
// with fewer files than cores, each file's import gets the remaining cores. `progress` (may be
// empty) is called after each file with the files done and their total, one call at a time.
using RankFileProgress = std::function<void(size_t done, size_t total)>;
std::vector<RankSummary> LoadRankSummaries(const std::vector<RankFile>& files, int threads = 0,
                                           const RankFileProgress& progress = {});

// A compact binary encoding of summaries (little-endian, length-prefixed), for gathering them
// from several processes. The header carries RankSummaryFormatVersion(); Parse reads that version
// only and returns InvalidInput on another version (naming both versions) or on malformed input
// (offset() = the byte where reading stopped; summaries before it stay appended). Callers prefix
// the message with where the bytes came from.
std::string SerializeRankSummaries(const std::vector<RankSummary>& summaries);
Status ParseRankSummaries(std::string_view bytes, std::vector<RankSummary>* summaries);
int RankSummaryFormatVersion();

// ---------------------------------------------------------------------------------------------
// The analyses

struct JobOptions {
  bool align_clocks = true;  // fit and apply per-rank clock offsets before computing skew
  int rows = 20;             // row limit of the text tables (-1 = all)
};

struct RankRow {
  int rank = -1;
  std::string file;
  std::string part;  // RankFile::part ("" = the whole file)
  DeviceTimeline timeline;
  double overlap_pct = 0;      // HTA's comp_comm_overlap_pctg (2 decimals); 0 without communication
  double clock_offset_ns = 0;  // this rank's clock minus the reference rank's, at its first
  double clock_drift_ppm = 0;  // collective end; and how fast it drifts
  int64_t clock_origin_ns = 0;  // that first collective end, on the reference clock
  // A time on this rank's clock on the reference rank's (the identity when not aligned).
  int64_t ToReference(int64_t rank_ns) const;
  int clock_points = 0;  // collectives the fit used
};

struct CollectiveInstance {
  std::string group;
  int64_t seq = 0;
  std::string name;
  std::string dtype;
  int64_t bytes = 0;              // max(in, out) nelems x dtype size; 0 = unknown
  int64_t group_size = 0;         // "Group size", else the ranks present
  std::vector<int> ranks;         // present, ascending
  std::vector<int64_t> wait_ns;   // per rank in `ranks`: last start - its start (aligned)
  std::vector<int64_t> start_ns;  // per rank in `ranks`: aligned start
  int64_t skew_ns = 0;            // last start - first start
  int64_t transfer_ns = 0;        // earliest end - last start
  double algbw_gbps = -1;         // < 0 = unknown
  double busbw_gbps = -1;
  int last_rank = -1;  // the rank that started last (-1 when the skew is under 1 us: noise)
};

struct CollectiveSummaryRow {
  std::string name;
  int64_t bytes = 0;
  int64_t count = 0;
  double mean_skew_ns = 0, median_skew_ns = 0, max_skew_ns = 0;
  double mean_transfer_ns = 0;
  double busbw_gbps = -1;  // mean over instances with a known bandwidth
};

struct StragglerRow {
  int rank = -1;
  int64_t times_last = 0;
  int64_t wait_caused_ns = 0;          // other ranks' sync wait at collectives where it was last
  double wait_caused_per_step_ns = 0;  // over the job's steps (ProfilerStep#), else per instance
  // Evidence: its computation before the collectives where it was last, against the median rank
  // at the same collectives (mean per collective).
  double compute_before_ns = 0;
  double median_compute_before_ns = 0;
  // Where it made the others wait longest: the instance (group, seq) and that wait.
  std::string worst_group;
  int64_t worst_seq = -1;
  int64_t worst_wait_ns = 0;
};

// One rank's sync wait per training step: the sum of its sync wait (CollectiveInstance::wait_ns)
// at the collectives whose kernel started, on its own clock, within its ProfilerStep#N
// [start, end). Collectives outside every step are not counted.
struct StepWaitRow {
  int rank = -1;
  std::vector<int64_t> wait_ns;  // one per JobReport::step_numbers; -1 where it has no such step
};

struct OpAcrossRanks {
  std::string name;
  int64_t min_ns = 0, max_ns = 0;
  double median_ns = 0;
  int max_rank = -1;
  int ranks = 0;  // ranks where the op has device time
};

struct JobReport {
  // Set when the job cannot be analysed (two files claiming one rank, a file with no rank);
  // everything else is empty then.
  std::string error;
  std::string error_file;             // the trace `error` is about (the second claimant)
  std::vector<std::string> warnings;  // missing ranks, disagreeing world sizes, skipped events
  // Rank files that failed to import (the job is partial): kInvalidInput, file() the rank's file,
  // offset() the byte offset in it (0 when none), message() the import's message.
  std::vector<Status> errors;
  bool partial = false;
  int world_size = 0;  // agreed world size, else ranks found
  std::string device_type;
  bool clocks_aligned = false;
  int reference_rank = -1;
  int64_t steps = 0;                            // ProfilerStep# count of the rank with most steps
  std::vector<RankRow> ranks;                   // ascending rank
  std::vector<CollectiveInstance> collectives;  // by (group, seq)
  std::vector<CollectiveSummaryRow> collective_summary;  // by count x mean transfer, descending
  std::vector<StragglerRow> stragglers;                  // by wait caused, descending
  std::vector<int64_t> step_numbers;   // ProfilerStep# numbers found on any rank, ascending
  std::vector<StepWaitRow> step_wait;  // per rank with steps, ascending rank (ranks x steps)
  std::vector<OpAcrossRanks> ops;      // by max device time, descending
  std::vector<std::string> findings;   // plain sentences, most important first
  // The per-rank summaries the report was built from (ascending rank), for --rank and diff.
  std::vector<RankSummary> summaries;
};

// Checks the ranks (duplicates, gaps, world sizes), aligns clocks, matches collectives and
// computes every table. The result does not depend on the order of `ranks`.
JobReport AnalyzeJob(std::vector<RankSummary> ranks, const JobOptions& options = {});

std::string FormatJobReport(const JobReport& report, const JobOptions& options = {});
// `ranks`, `collectives`, `collective_summary`, `stragglers`, `step_numbers`, `step_wait`
// ([{rank, wait_us: [per step, null where the rank has no such step]}]), `ops`, `findings`,
// `warnings`, `errors`, `partial`: one JSON document, byte-identical for the same summaries.
std::string JobReportJson(const JobReport& report);

// ---------------------------------------------------------------------------------------------
// Comparing two jobs: rank by rank and collective by collective

std::string FormatJobDiff(const JobReport& a, const JobReport& b, int rows = 20);
std::string JobDiffJson(const JobReport& a, const JobReport& b);

// `opscope check` on two jobs (check.h): step time is the slowest rank's per ProfilerStep#
// number (the rank test runs on those), device busy time and each op's device time the busiest
// rank's whole-job figure; the moved rows are the job diff's ranks, collectives (by name and
// size) and ops across ranks, and diff_json is JobDiffJson. Kernel metrics make an error result:
// rank summaries keep ops, not kernels.
CheckResult CheckJobs(const JobReport& baseline, const JobReport& candidate,
                      const CheckOptions& options = {});

}  // namespace opscope

#endif  // OPSCOPE_JOB_H_
