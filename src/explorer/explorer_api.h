// ExplorerApi: the Explorer's JSON API and UI assets as HttpServer routes, one named handler per
// endpoint. Access control (token, same-origin) is the server's filter (explorer_server.cc).
//
//   GET /api/info                       traces: index, name, source, phase; once ready: slices,
//                                       start/end, device
//   GET /api/status                     loading progress: per trace its phase (queued, importing,
//                                       indexing, ready, failed), bytes read of total, MB/s, the
//                                       error of a failed one (file, byte offset); "job": none,
//                                       loading (expected, not yet made) or ready
//   GET /api/job?wait&compact           the job view (explorer/job_view.h); 404 when the traces
//                                       are not one job (saying why), 503 while it is made
//                                       (wait=1: answers once it is made, within 10 s;
//                                       compact=1: members as one array per collective)
//   GET /api/job/viewport?t0&t1&width&lanes&compact&flat   every rank's lanes on the job's axis
//                                       in one answer (explorer/job_axis.h; job lane ids;
//                                       compact=1: items as [ts,dur,row,name,id,count]; flat=1:
//                                       each lane's items in one array, "stride" numbers each)
//   GET /api/trace/N/lanes              lane groups (TraceIndex::WriteLanes)
//   GET /api/trace/N/viewport?t0&t1&width&min_px&lanes&flat   (memory lanes: "memory" points;
//                                       flat=1 as the job's)
//   GET /api/trace/N/memory?samples     the memory timeline per device: `opscope report --memory
//                                       --json`'s "memory" (samples=1: with every sample)
//   GET /api/trace/N/slice/ID, /chain/ID, /device/ID
//   GET /api/trace/N/ops?t0&t1&shapes   key_averages rows of the trace or of a time range
//   GET /api/trace/N/select?t0&t1&lanes&limit
//   GET /api/trace/N/search?q&regex&exact&kind&sort&offset&limit   q: text found anywhere in a
//                                       name, case-insensitive (regex=1: an RE2 regular
//                                       expression; exact=1: the whole name); kind: all, ops,
//                                       runtime, kernels, memory; sort: start or dur (longest
//                                       first)
//   GET /api/trace/N/marks?q&regex&exact&kind&t0&t1&width&lanes   where the matches lie
//   GET /api/trace/N/marks?critical_path=1&step&instance&t0&t1&width&lanes
//                                       where the critical path's events lie in a viewport
//   GET /api/trace/N/critical_path?step&instance   HTA's critical path of a step
//                                       (explorer/critical_path_view.h)
//   GET /api/trace/N/summary
//   GET /api/diff?a&b
//
// Times, in parameters (t0, t1) and in answers (ts, t0, t1, start_ns, ...), are ns relative to
// the trace's start (TraceIndex::ToApi): exact integers a browser holds in a double at any zoom,
// even for epoch timestamps. /api/trace/N/memory alone is the report's JSON, in trace time.
//
// Bad parameters answer 400 with {"error","status"}. A request naming a trace still loading
// answers 503 with Retry-After and {"error","status","loading":true,"phase"}; one naming a trace
// whose import failed answers 422 with the import's error ("failed":true, "file", "offset").
// Whole-trace aggregations (ops of a range, uncached tables, search, selection, diff, a critical
// path not yet computed) run on the server's heavy pool.
//
// Thread safety: the list of traces is fixed once serving starts; each trace is published once,
// whole (LoadedTrace); cached answers are computed once.
#ifndef OPSCOPE_EXPLORER_EXPLORER_API_H_
#define OPSCOPE_EXPLORER_EXPLORER_API_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "explorer/critical_path_view.h"
#include "explorer/http_server.h"
#include "explorer/job_axis.h"
#include "explorer/trace_index.h"
#include "opscope/trace.h"

namespace opscope::explorer {

// Where a trace is in its loading: waiting for an import thread, importing (bytes_read grows),
// finalizing and indexing, served, or not openable (`error`).
enum class LoadPhase : uint8_t { kQueued, kImporting, kIndexing, kReady, kFailed };
std::string_view LoadPhaseKey(LoadPhase phase);  // "queued", "importing", ...

// One trace the Explorer serves.
//
// Thread safety (publication): `name`, `source` and `load_start` are set before the server
// starts and never change. One loader thread then writes `trace` and `index` (or `error`,
// `error_offset`) and stores `phase` = kReady (kFailed) with release order; nothing of them is
// written after. Request handlers touch `trace` and `index` only after Ready() (an acquire load)
// returned true, and `error` only after loading kFailed, so they never see a half-built index.
// The progress counters are atomics any thread may read at any time.
struct LoadedTrace {
  std::string name;    // what the UI shows
  std::string source;  // where it came from, relative to what the user opened
  std::unique_ptr<Trace> trace;
  std::unique_ptr<TraceIndex> index;  // over *trace

  std::atomic<LoadPhase> phase{LoadPhase::kReady};
  std::atomic<uint64_t> bytes_read{0};   // of the input file (compressed bytes for gzip)
  std::atomic<uint64_t> bytes_total{0};  // the input file's size; 0 when unknown
  // When the import began and ended, and when the trace was published or failed, in ns since
  // load_start; -1 until then.
  std::atomic<int64_t> import_begin_ns{-1}, import_end_ns{-1}, done_ns{-1};
  std::chrono::steady_clock::time_point load_start = std::chrono::steady_clock::now();
  std::string error;          // kFailed: what went wrong
  uint64_t error_offset = 0;  // kFailed: the byte offset in the file (0: none)

  bool Ready() const { return phase.load(std::memory_order_acquire) == LoadPhase::kReady; }
  int64_t NsSinceLoadStart() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                load_start)
        .count();
  }

  // Whole-trace answers, computed on first use.
  std::once_flag ops_once, summary_once;
  std::atomic<bool> ops_ready{false}, summary_ready{false};
  std::string ops_json, summary_json;

  // The critical path last asked for, by its key (step and instance); guarded by cp_mu.
  std::mutex cp_mu;
  std::string cp_key;
  std::shared_ptr<const CriticalPathView> cp;
};

// The cache key of the critical path a request names (its step and instance), filling *options;
// empty when a parameter is bad. Parameters the path does not depend on are left out: an empty
// step is the whole trace whatever `instance` says.
std::string CriticalPathKey(const HttpRequest& req, CriticalPathOptions* options);

struct ExplorerApiOptions {
  bool compare = false;  // reported by /api/info: the UI opens the comparison first
  // Time a search may spend matching names before it answers with "complete": false.
  int search_budget_ms = 2000;
};

class ExplorerApi {
 public:
  // `traces` must outlive the API and not change (in number) once the server runs; its entries
  // are published as LoadedTrace says.
  ExplorerApi(const std::vector<std::unique_ptr<LoadedTrace>>& traces, ExplorerApiOptions options)
      : traces_(traces), options_(options) {}

  // Adds every route, and the UI assets as the fallback.
  void Register(HttpServer* server);

  // The job's /api/job body (explorer/job_view.h), set while serving; before it is set,
  // `expected` makes /api/job answer 503 (still loading) instead of 404, and /api/status say
  // "job": "loading". `why_not` (traces that turned out not to be one job): the reason, in
  // /api/job's 404 and /api/info's "not_job". Thread-safe.
  void SetJob(std::string json, std::string compact_json, std::shared_ptr<const JobAxis> axis);
  void ExpectJob(bool expected, std::string why_not = {});
  // Answers every /api/job?wait=1 still waiting for the job (the server is stopping).
  void StopWaiting();

 private:
  void Info(const HttpRequest& req, HttpResponse& res);
  void LoadStatus(const HttpRequest& req, HttpResponse& res);
  void Lanes(const HttpRequest& req, HttpResponse& res);
  void Viewport(const HttpRequest& req, HttpResponse& res);
  void Memory(const HttpRequest& req, HttpResponse& res);
  void SliceDetails(const HttpRequest& req, HttpResponse& res);
  void Chain(const HttpRequest& req, HttpResponse& res);
  void DeviceView(const HttpRequest& req, HttpResponse& res);
  void Ops(const HttpRequest& req, HttpResponse& res);
  void Select(const HttpRequest& req, HttpResponse& res);
  void Search(const HttpRequest& req, HttpResponse& res);
  void Marks(const HttpRequest& req, HttpResponse& res);
  void Summary(const HttpRequest& req, HttpResponse& res);
  void Diff(const HttpRequest& req, HttpResponse& res);
  void Job(const HttpRequest& req, HttpResponse& res);
  void JobViewport(const HttpRequest& req, HttpResponse& res);
  void CriticalPath(const HttpRequest& req, HttpResponse& res);
  static void Asset(const HttpRequest& req, HttpResponse& res);

  // Request cost classes (see HttpServer::Route).
  bool OpsIsHeavy(const HttpRequest& req) const;
  bool SummaryIsHeavy(const HttpRequest& req) const;
  bool CriticalPathIsHeavy(const HttpRequest& req) const;

  // The critical path of the step named by the `step` (default "ProfilerStep") and `instance`
  // (default 0) parameters, computed once per trace and step and shared by later requests.
  std::shared_ptr<const CriticalPathView> CriticalPathOf(LoadedTrace& t,
                                                         const HttpRequest& req) const;

  // The names (a bitmap over string ids) that parameter 'q' matches: as text anywhere in the
  // name, a regular expression with regex=1, the exact name with exact=1; `complete` is false
  // when matching stopped at the time budget.
  struct NameMatch {
    std::vector<bool> names;
    bool complete = true;
  };
  NameMatch MatchingNames(const LoadedTrace& t, const HttpRequest& req) const;
  ViewportQuery ViewportParams(const HttpRequest& req, const LoadedTrace& t) const;
  LoadedTrace& TraceParam(const HttpRequest& req) const;
  // Trace `i` (< traces_.size()), once published; else throws TraceUnavailable (503 / 422).
  LoadedTrace& ReadyTrace(size_t i) const;
  uint32_t SliceParam(const LoadedTrace& t, const std::string& text) const;

  const std::vector<std::unique_ptr<LoadedTrace>>& traces_;
  ExplorerApiOptions options_;
  mutable std::mutex job_mu_;       // guards the job_ members and stopping_
  std::condition_variable job_cv_;  // SetJob, ExpectJob and StopWaiting: /api/job?wait=1 wakes
  std::string job_json_;
  std::string job_json_compact_;  // /api/job?compact=1
  std::shared_ptr<const JobAxis> job_axis_;
  bool job_expected_ = false;
  std::string not_job_;
  bool stopping_ = false;
};

// Writes {"error": message, "status": status} into `res`.
void SetJsonError(HttpResponse& res, int status, std::string_view message);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_EXPLORER_API_H_
