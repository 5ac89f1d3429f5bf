// The Explorer: a browser trace viewer served by opscope itself.
//
// One HTTP port serves the UI (its assets are compiled into the binary) and a JSON API over the
// traces it holds. The server keeps each trace model in memory with a level-of-detail index, so
// the browser only ever receives what one viewport shows (about one item per pixel and row).
//
//   opscope::ExplorerOptions options;            // 127.0.0.1, any free port, no token
//   opscope::Explorer explorer(options);
//   explorer.AddTrace("run.json", std::move(trace));   // a finalized opscope::Trace
//   opscope::Status st = explorer.Start();        // serves on a background thread
//   if (!st.ok()) { std::cerr << st.message() << "\n"; ... }
//   std::cout << explorer.Url() << "\n";
//   explorer.Wait();                              // until Stop() (e.g. from a signal handler)
//
// Security contract: by default the server binds the loopback address only. Binding any other
// address requires an access token (generated when none is given; one given must have at least
// 16 characters); every request must then carry it as the `X-Opscope-Token` header, a `token=`
// query parameter or the `opscope_token` cookie (a page opened with `token=` is redirected to
// its address without it, the cookie set). Without a token, requests naming another Host than
// loopback are refused (DNS rebinding). API requests from another site's pages (`Origin`,
// `Sec-Fetch-Site`) are refused. Traces are addressed by index; no client-supplied path ever
// reaches the file system.
//
// Limits: the port is bound exclusively; connections are event-driven (an idle or slow client
// holds no thread); a request head must arrive whole within `head_timeout_ms`, idle connections
// close after `idle_timeout_ms`, each client address holds at most `max_connections_per_client`;
// search uses RE2 (linear time) within a time budget; whole-trace aggregations run on a small
// separate pool; a request whose client disconnects is cancelled. docs/explorer-server.md has
// the details.
//
// Thread safety: AddTrace, AddTraces and AddLoading must be called before Start. Once started,
// any number of client connections are served concurrently; ReportProgress, CompleteTrace,
// FailTrace, SetJob, ExpectJob and Stop may be called from any thread.
#ifndef OPSCOPE_EXPLORER_H_
#define OPSCOPE_EXPLORER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

struct JobReport;  // opscope/job.h

struct ExplorerOptions {
  std::string host = "127.0.0.1";     // bind address
  int port = 0;                       // 0 = pick a free port
  bool fallback_to_any_port = false;  // when `port` is taken, pick a free one instead of failing
  // Required for non-loopback hosts; generated (random, 32 hex digits) when left empty there.
  // When set for a loopback host it is enforced too.
  std::string token;
  // Open the comparison view first (the CLI sets it when several paths were given).
  bool compare = false;
  int threads = 8;  // worker threads running requests (a quarter more run heavy ones)
  int max_connections_per_client = 64;
  int head_timeout_ms = 10000;  // a whole request head, from its first byte
  int idle_timeout_ms = 30000;  // a kept-alive connection without a request is closed
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

class Explorer {
 public:
  explicit Explorer(ExplorerOptions options);
  Explorer(const Explorer&) = delete;
  Explorer& operator=(const Explorer&) = delete;
  ~Explorer();  // stops the server

  // Takes a trace (finalized here if it is not yet) and indexes it. `name` is what the UI shows;
  // `source` is the path it came from (shown, never served). Returns the trace's index.
  size_t AddTrace(std::string name, Trace trace, std::string source = {});
  // AddTrace of each trace, in order, indexing them on up to `threads` threads at once (0: the
  // cores available), the threads a trace gets to itself building its index's lanes in parallel;
  // the same result. Returns the index of the first.
  struct NamedTrace {
    std::string name;
    Trace trace;
    std::string source;
  };
  size_t AddTraces(std::vector<NamedTrace> traces, int threads = 0);

  // Serving while traces load (`opscope explore` listens before it imports): AddLoading, before
  // Start, adds a trace still to come (`bytes_total`: its file's size, 0 if unknown). Until it is
  // published the page shows its progress (/api/status) and requests naming it answer 503 with
  // Retry-After. The loader then calls, from one thread per trace, ReportProgress as it reads,
  // and once CompleteTrace (finalizes and indexes it on `threads` threads, 0: the cores
  // available, publishes it whole as soon as its first view can be answered, then builds the
  // rest of its index before it returns, except while a job is expected: ExpectJob) or FailTrace
  // (requests naming it answer 422 with `error`'s message, its file named as `source`, and byte
  // offset). These may run while the server serves.
  size_t AddLoading(std::string name, std::string source = {}, uint64_t bytes_total = 0);
  void ReportProgress(size_t trace, uint64_t bytes_read, uint64_t bytes_total);
  void CompleteTrace(size_t trace, Trace model, int threads = 0);
  void FailTrace(size_t trace, const Status& error);
  size_t num_traces() const;
  // Shows the traces as one distributed job: /api/job and the job page (/job.html), every rank on
  // one aligned time axis. `report` is AnalyzeJob's over these traces; each rank's trace is the
  // one added with `source` equal to its file (ranks without one, or not yet published, are left
  // out). Call after their AddTrace or CompleteTrace; may be called while serving. The parts of
  // the traces' indexes left out while the job was expected (below) are then built on a
  // background thread of the lowest priority (a query that needs one first builds it itself).
  void SetJob(const JobReport& report);
  // Until SetJob, /api/job answers 503 (still loading) rather than 404. Any time; thread-safe.
  // While a job is expected and not yet set, CompleteTrace publishes each trace without building
  // the part of its index that the job's first view does not need (the id lookups behind slice
  // details): SetJob, or ExpectJob(false), builds them once every rank is in. ExpectJob(false,
  // why_not) says why the traces are not one job after all: /api/job's 404 and /api/info's
  // "not_job" carry it, and the job page opens the traces one by one saying so.
  void ExpectJob(bool expected = true, std::string why_not = {});

  // Binds and starts serving on background threads (ok at once when already started). Errors:
  // kInvalidArgument for a port outside 0-65535 or a token shorter than 16 characters, kIoError
  // when the address cannot be bound (the port in use, named; not an address of this host).
  Status Start();
  // Blocks until the server stops.
  void Wait();
  // Stops accepting, closes every connection and cancels running requests. Returns true when
  // every request handler had returned within `grace`; the rest are waited for by the destructor
  // (a process that exits need not wait).
  bool Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(800));

  int port() const;
  // The access token in force ("" when none is required).
  const std::string& token() const;
  // http://HOST:PORT/ (with ?token=... when a token is required).
  std::string Url() const;

 private:
  void BuildDeferredIndexes();  // every published index's deferred part (SetJob, ExpectJob)

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A generated Neuron-style trace of any size, for trying the Explorer without a profile, for tests
// and benchmarks (`opscope explore --synthetic N`): RMSNorm calls (user_annotation) made of six
// aten ops, each launching nrta_execute_schedule -> nc_exec_running on NeuronCore 0 -> engine
// instructions (TensorE/VectorE/ScalarE/GpSimdE/DMA) carrying the op's External id, plus a CPU
// counter. The same options give the same trace.
struct SyntheticTraceOptions {
  int64_t target_events = 10000;  // slices to generate, about (whole RMSNorm calls)
  int instructions_per_execution = 10;
  uint64_t seed = 1;
};

// Returns a finalized trace.
Trace MakeSyntheticNeuronTrace(const SyntheticTraceOptions& options);

}  // namespace opscope

#endif  // OPSCOPE_EXPLORER_H_
