// One rank's trace reduced to what the job analyses need (RankSummary).
#include <sched.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "analysis/device_activity.h"
#include "base/cores.h"
#include "job/collective_args.h"
#include "job/rank_loader.h"
#include "opscope/import.h"
#include "opscope/job.h"

namespace opscope {
namespace {

using analysis::Interval;

// distributedInfo (Kineto writes it from torch.distributed): rank and world_size.
void ReadDistributedInfo(const Trace& trace, RankSummary* out) {
  for (const auto& [key, value] : trace.metadata().extra) {
    if (key != "distributedInfo") continue;
    simdjson::dom::parser parser;
    simdjson::dom::object info;
    if (parser.parse(value).get_object().get(info) != simdjson::SUCCESS) return;
    int64_t v;
    if (info["rank"].get_int64().get(v) == simdjson::SUCCESS && v >= 0 && v < (1 << 24)) {
      out->rank = static_cast<int>(v);
      out->rank_from_distributed_info = true;
    }
    if (info["world_size"].get_int64().get(v) == simdjson::SUCCESS && v > 0 && v < (1 << 24)) {
      out->world_size = static_cast<int>(v);
    }
    return;
  }
}

// Merged intervals of every device kernel, split as HTA's kernel types: communication and
// computation (memcpy / memset are neither).
void KernelIntervals(const Trace& trace, std::vector<Interval>* comm, std::vector<Interval>* comp) {
  analysis::CommunicationNames is_communication(trace);
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kKernel) continue;
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    (is_communication(s.name) ? comm : comp)->push_back(iv);
  }
  analysis::MergeIntervals(comm);
  analysis::MergeIntervals(comp);
}

// For each collective (in start order), the computation time between the rank's previous
// collective end and its start: one forward sweep, as the windows only move forward.
void AddComputeBefore(const std::vector<Interval>& comp, int64_t base_ns,
                      std::vector<CollectiveRecord>* collectives) {
  size_t first = 0;  // first interval ending after the current window's begin
  int64_t window_begin = comp.empty() ? 0 : comp.front().begin;
  for (CollectiveRecord& c : *collectives) {
    const int64_t window_end = c.start_ns - base_ns;
    while (first < comp.size() && comp[first].end <= window_begin) ++first;
    int64_t total = 0;
    for (size_t i = first;
         window_end > window_begin && i < comp.size() && comp[i].begin < window_end; ++i) {
      total += std::min(comp[i].end, window_end) - std::max(comp[i].begin, window_begin);
    }
    c.compute_before_ns = std::max<int64_t>(total, 0);
    window_begin = std::max(window_begin, c.end_ns - base_ns);
  }
}

// ProfilerStep#N annotations (host side), in start order.
std::vector<StepRecord> Steps(const Trace& trace) {
  std::vector<StepRecord> steps;
  const int64_t base = trace.metadata().base_time_ns;
  constexpr std::string_view kPrefix = "ProfilerStep#";
  for (const Slice& s : trace.slices()) {
    if (s.kind != ActivityKind::kUserAnnotation && s.kind != ActivityKind::kCpuOp) continue;
    const std::string_view name = trace.Str(s.name);
    if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string number(name.substr(kPrefix.size()));
    char* end = nullptr;
    const long long n = std::strtoll(number.c_str(), &end, 10);
    if (!end || *end != '\0') continue;
    steps.push_back({n, base + s.ts_ns, base + s.ts_ns + s.dur_ns});
  }
  std::sort(steps.begin(), steps.end(), [](const StepRecord& a, const StepRecord& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.step < b.step;
  });
  return steps;
}

// Which events' args a summary reads (job::ExtractCollectives): a collective's args are on its
// communication kernel (Kineto copies them there in recent PyTorch) or on the host op that
// launched it: `record_param_comms` (PyTorch's RECORD_PARAM_COMMS), a torch.distributed op
// (`c10d::allreduce_`, ...), or a host range named for the library (`nccl:all_reduce`). Every
// other event's args (most of a trace's) are never stored. Thread-safe: the import's threads
// call it at once; each distinct name is classified once.
class CollectiveArgsFilter {
 public:
  bool operator()(ActivityKind kind, std::string_view name) {
    if (kind == ActivityKind::kCollective) return true;
    if (kind != ActivityKind::kKernel && kind != ActivityKind::kCpuOp &&
        kind != ActivityKind::kUserAnnotation) {
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = names_.find(name);
    if (it == names_.end()) {
      const bool collective = analysis::IsCommunication(name) ||
                              (kind != ActivityKind::kKernel &&
                               (name == "record_param_comms" || name.starts_with("c10d::")));
      it = names_.emplace(std::string(name), collective).first;
    }
    return it->second;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::mutex mu_;
  std::unordered_map<std::string, bool, Hash, std::equal_to<>> names_;  // guarded by mu_
};

}  // namespace

RankSummary SummarizeRank(const Trace& trace, const RankFile& file) {
  RankSummary out;
  out.file = file.path;
  out.part = file.part;
  out.file_bytes = file.bytes;
  out.rank = file.name_rank;
  ReadDistributedInfo(trace, &out);
  out.device_type = trace.metadata().device_type;
  out.skipped_events = trace.metadata().skipped_events;
  out.slices = trace.slices().size();
  out.timeline = ComputeDeviceTimeline(trace);
  std::vector<Interval> comm, comp;
  KernelIntervals(trace, &comm, &comp);
  out.overlap_comm_ns = analysis::Length(comm);
  out.overlap_ns = out.overlap_comm_ns - analysis::Length(analysis::Subtract(comm, comp));
  out.collectives = job::ExtractCollectives(trace);
  AddComputeBefore(comp, trace.metadata().base_time_ns, &out.collectives);
  out.steps = Steps(trace);
  for (const OpDeviceTime& op : ComputeOpSummary(trace, /*subtree=*/false).rows) {
    out.ops.push_back({op.name, op.direct_device_ns, op.count});
  }
  std::sort(out.ops.begin(), out.ops.end(),
            [](const RankOpTime& a, const RankOpTime& b) { return a.name < b.name; });
  return out;
}

RankSummary LoadRankSummary(const RankFile& file, const ImportOptions& options) {
  Trace trace;
  ImportStats stats;
  ImportOptions only_collective_args = options;
  auto filter = std::make_shared<CollectiveArgsFilter>();
  if (!only_collective_args.keep_args_of) {
    only_collective_args.keep_args_of = [filter](ActivityKind kind, std::string_view name) {
      return (*filter)(kind, name);
    };
  }
  only_collective_args.part = file.part;
  const Status st = ImportTrace(file.path, &trace, &stats, only_collective_args);
  if (!st.ok()) {
    RankSummary out;
    out.file = file.path;
    out.part = file.part;
    out.file_bytes = file.bytes;
    out.rank = file.name_rank;
    // The rank is still known when distributedInfo came before the error.
    ReadDistributedInfo(trace, &out);
    out.error = st.message();
    out.error_offset = st.offset();
    return out;
  }
  return SummarizeRank(trace, file);
}

namespace job {

int CoresOfThisProcess() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<std::pair<size_t, RankSummary>> LoadTakenRankSummaries(
    const std::vector<RankFile>& files, const NextRankFile& next, int threads,
    const RankFileProgress& progress) {
  const size_t cores =
      static_cast<size_t>(internal::CapThreads(threads > 0 ? threads : CoresOfThisProcess()));
  const size_t workers = std::max<size_t>(1, std::min(cores, files.size()));
  ImportOptions options;
  options.threads = static_cast<int>(std::max<size_t>(1, cores / workers));
  std::vector<std::pair<size_t, RankSummary>> out;
  std::mutex mu;  // guards `out`, `done`, and calls of `next` and `progress`
  size_t done = 0;
  auto work = [&] {
    for (;;) {
      std::optional<size_t> taken;
      {
        std::lock_guard<std::mutex> lock(mu);
        taken = next();
      }
      if (!taken || *taken >= files.size()) return;
      const RankFile& f = files[*taken];
      RankSummary summary;
      try {
        summary = LoadRankSummary(f, options);
      } catch (const std::exception& e) {  // e.g. memory running out while summarizing
        summary = RankSummary();
        summary.file = f.path;
        summary.part = f.part;
        summary.file_bytes = f.bytes;
        summary.rank = f.name_rank;
        summary.error = f.path + ": " + e.what();
      }
      std::lock_guard<std::mutex> lock(mu);
      out.emplace_back(*taken, std::move(summary));
      if (progress) progress(++done, files.size());
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

std::vector<size_t> LargestFirst(const std::vector<RankFile>& files) {
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return files[a].bytes > files[b].bytes; });
  return order;
}

}  // namespace job

std::vector<RankSummary> LoadRankSummaries(const std::vector<RankFile>& files, int threads,
                                           const RankFileProgress& progress) {
  // Largest files first, so that the workers finish together.
  const std::vector<size_t> order = job::LargestFirst(files);
  size_t next = 0;
  auto taken = job::LoadTakenRankSummaries(
      files,
      [&]() -> std::optional<size_t> {
        if (next >= order.size()) return std::nullopt;
        return order[next++];
      },
      threads, progress);
  std::vector<RankSummary> out(files.size());
  for (auto& [i, summary] : taken) out[i] = std::move(summary);
  return out;
}

}  // namespace opscope
