// The Explorer: its traces, the access rules every request passes (token, loopback Host name,
// same-origin API calls) and the server's lifetime. Routes are in explorer_api.cc, connections
// in http_server.cc.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "base/json_writer.h"
#include "base/parallel_for.h"
#include "explorer/explorer_api.h"
#include "explorer/http_server.h"
#include "explorer/job_view.h"
#include "opscope/explorer.h"
#include "opscope/job.h"

namespace opscope {
namespace {

using explorer::HttpRequest;
using explorer::HttpResponse;

constexpr size_t kMinTokenLength = 16;

std::string RandomToken() {
  std::random_device rd;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", rd());
  return token;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string CookieValue(std::string_view cookies, std::string_view name) {
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string_view part = cookies.substr(pos, end - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name &&
        part[name.size()] == '=') {
      return std::string(part.substr(name.size() + 1));
    }
    pos = end + 1;
  }
  return {};
}

// The host part of a Host header ("localhost:8080" -> "localhost", "[::1]:80" -> "::1").
std::string HostOnly(const std::string& host_header) {
  if (!host_header.empty() && host_header.front() == '[') {
    const size_t close = host_header.find(']');
    return close == std::string::npos ? host_header : host_header.substr(1, close - 1);
  }
  const size_t colon = host_header.find(':');
  return colon == std::string::npos ? host_header : host_header.substr(0, colon);
}

bool IsApiPath(std::string_view path) { return path == "/api" || path.starts_with("/api/"); }

// The request's target without its token= parameter (what the address bar should show).
std::string TargetWithoutToken(const HttpRequest& req) {
  std::string_view target = req.target;
  const size_t q = target.find('?');
  std::string out(target.substr(0, q));
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  char sep = '?';
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty() || part == "token" || part.starts_with("token=")) continue;
    out += sep;
    out += part;
    sep = '&';
  }
  return out;
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  if (host.substr(0, 4) != "127.") return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.')
      ++dots;
    else if (c < '0' || c > '9')
      return false;
  }
  return dots == 3;
}

struct Explorer::Impl {
  ExplorerOptions options;
  std::vector<std::unique_ptr<explorer::LoadedTrace>> traces;
  std::unique_ptr<explorer::ExplorerApi> api;
  std::unique_ptr<explorer::HttpServer> server;
  std::string token;
  int port = 0;
  std::string job_json;  // /api/job (explorer/job_view.h); empty when the traces are not a job
  std::string job_json_compact;                       // /api/job?compact=1
  std::shared_ptr<const explorer::JobAxis> job_axis;  // /api/job/viewport's, with job_json
  bool job_expected = false;
  std::string not_job;     // why the traces are not one job, once known
  std::mutex deferred_mu;  // guards `deferred`
  std::thread deferred;    // builds the job's deferred index parts (SetJob)
  std::mutex job_mu;  // guards job_json, job_expected and `api`'s job state (SetJob, ExpectJob)

  std::mutex stop_mu;  // one Stop at a time
  std::mutex mu;       // guards `running`
  std::condition_variable stopped_cv;
  bool running = false;

  // The access rules, in order; each returns false when it has answered.
  bool Filter(const HttpRequest& req, HttpResponse& res);
  bool CheckToken(const HttpRequest& req, HttpResponse& res);
  bool CheckLoopbackHost(const HttpRequest& req, HttpResponse& res);
  bool CheckSameOrigin(const HttpRequest& req, HttpResponse& res);
  explorer::HttpServerOptions ServerOptions() const;
};

bool Explorer::Impl::Filter(const HttpRequest& req, HttpResponse& res) {
  res.SetHeader("X-Content-Type-Options", "nosniff");
  res.SetHeader("X-Frame-Options", "DENY");
  res.SetHeader("Referrer-Policy", "no-referrer");
  if (req.method != "GET" && req.method != "HEAD") {
    explorer::SetJsonError(res, 405, "only GET is supported");
    return false;
  }
  if (token.empty() ? !CheckLoopbackHost(req, res) : !CheckToken(req, res)) return false;
  return CheckSameOrigin(req, res);
}

// The token comes as the X-Opscope-Token header, the opscope_token cookie, or a token= query
// parameter; a page opened with the parameter is redirected to its address without it, with the
// cookie set, so the token does not stay in the address bar or the history.
bool Explorer::Impl::CheckToken(const HttpRequest& req, HttpResponse& res) {
  std::string given = req.Header("X-Opscope-Token");
  const bool from_query = given.empty() && req.HasParam("token");
  if (from_query) given = req.Param("token");
  if (given.empty()) given = CookieValue(req.Header("Cookie"), "opscope_token");
  if (!ConstantTimeEquals(given, token)) {
    explorer::SetJsonError(res, 401,
                           "missing or wrong access token (see the URL opscope explore printed)");
    return false;
  }
  if (!from_query) return true;
  res.SetHeader("Set-Cookie",
                fmt::format("opscope_token={}; Path=/; HttpOnly; SameSite=Strict", token));
  if (IsApiPath(req.path)) return true;
  res.status = 303;
  res.SetHeader("Location", TargetWithoutToken(req));
  res.SetHeader("Cache-Control", "no-store");
  res.content_type = "text/plain; charset=utf-8";
  res.body = "the access token is now a cookie\n";
  return false;
}

// Loopback without a token: refuse other Host names so a web page cannot reach the server through
// DNS rebinding.
bool Explorer::Impl::CheckLoopbackHost(const HttpRequest& req, HttpResponse& res) {
  const std::string host = HostOnly(req.Header("Host"));
  if (host.empty() || IsLoopbackHost(host)) return true;
  explorer::SetJsonError(res, 403,
                         "this server only answers requests addressed to the loopback host");
  return false;
}

// API calls must come from the Explorer's own pages (or from a tool that is no browser): a web
// page on another site gets 403 even though the browser would send the request.
bool Explorer::Impl::CheckSameOrigin(const HttpRequest& req, HttpResponse& res) {
  if (!IsApiPath(req.path)) return true;
  const std::string& site = req.Header("Sec-Fetch-Site");
  const std::string& origin = req.Header("Origin");
  const bool cross_site = !site.empty() && site != "same-origin" && site != "none";
  const bool foreign_origin = !origin.empty() && origin != "http://" + req.Header("Host");
  if (!cross_site && !foreign_origin) return true;
  explorer::SetJsonError(res, 403, "cross-site requests to the Explorer's API are refused");
  return false;
}

explorer::HttpServerOptions Explorer::Impl::ServerOptions() const {
  explorer::HttpServerOptions o;
  o.host = options.host;
  o.port = options.port;
  o.workers = std::clamp(options.threads, 1, 64);
  o.heavy_workers = std::max(1, std::min(o.workers / 4, 4));
  o.max_connections_per_client = options.max_connections_per_client;
  o.head_timeout_ms = options.head_timeout_ms;
  o.idle_timeout_ms = options.idle_timeout_ms;
  return o;
}

Explorer::Explorer(ExplorerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Explorer::~Explorer() {
  Stop();
  impl_->server.reset();  // waits for handlers still running
  std::lock_guard<std::mutex> lock(impl_->deferred_mu);
  if (impl_->deferred.joinable()) impl_->deferred.join();
}

size_t Explorer::AddTrace(std::string name, Trace trace, std::string source) {
  std::vector<NamedTrace> one;
  one.push_back({std::move(name), std::move(trace), std::move(source)});
  return AddTraces(std::move(one), 1);
}

size_t Explorer::AddTraces(std::vector<NamedTrace> traces, int threads) {
  const size_t cores = threads > 0 ? static_cast<size_t>(threads)
                                   : std::max(1u, std::thread::hardware_concurrency());
  // Traces are indexed side by side; the cores left over build each index's lanes in parallel.
  const int index_threads =
      static_cast<int>(std::max<size_t>(1, cores / std::max<size_t>(1, traces.size())));
  // Slots first (the list grows on this thread only), then the one publication path every trace
  // takes, each slot completed by one thread only.
  const size_t first = impl_->traces.size();
  for (NamedTrace& t : traces) AddLoading(std::move(t.name), std::move(t.source));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < traces.size();) {
      CompleteTrace(first + i, std::move(traces[i].trace), index_threads);
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < std::min(cores, traces.size()); ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return first;
}

size_t Explorer::AddLoading(std::string name, std::string source, uint64_t bytes_total) {
  auto t = std::make_unique<explorer::LoadedTrace>();
  t->name = std::move(name);
  t->source = std::move(source);
  t->bytes_total = bytes_total;
  t->phase = explorer::LoadPhase::kQueued;
  impl_->traces.push_back(std::move(t));
  return impl_->traces.size() - 1;
}

void Explorer::ReportProgress(size_t trace, uint64_t bytes_read, uint64_t bytes_total) {
  explorer::LoadedTrace& t = *impl_->traces.at(trace);
  if (t.import_begin_ns.load(std::memory_order_relaxed) < 0) {
    t.import_begin_ns.store(t.NsSinceLoadStart(), std::memory_order_relaxed);
    t.phase.store(explorer::LoadPhase::kImporting, std::memory_order_release);
  }
  if (bytes_total > 0) t.bytes_total.store(bytes_total, std::memory_order_relaxed);
  t.bytes_read.store(bytes_read, std::memory_order_relaxed);
}

// The publication point: trace and index are complete before `phase` becomes kReady (release).
void Explorer::CompleteTrace(size_t trace, Trace model, int threads) {
  explorer::LoadedTrace& t = *impl_->traces.at(trace);
  const int64_t now_ns = t.NsSinceLoadStart();
  if (t.import_begin_ns.load(std::memory_order_relaxed) < 0) t.import_begin_ns.store(now_ns);
  t.import_end_ns.store(now_ns, std::memory_order_relaxed);
  t.phase.store(explorer::LoadPhase::kIndexing, std::memory_order_release);
  const int index_threads =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto owned = std::make_unique<Trace>(std::move(model));
  if (!owned->finalized()) owned->Finalize();
  // What the first view does not need is built after publishing, while it is answered.
  auto index = std::make_unique<explorer::TraceIndex>(*owned, index_threads,
                                                      explorer::IndexBuild::kDeferred);
  const explorer::TraceIndex& published = *index;
  t.trace = std::move(owned);
  t.index = std::move(index);
  t.done_ns.store(t.NsSinceLoadStart(), std::memory_order_relaxed);
  t.phase.store(explorer::LoadPhase::kReady, std::memory_order_release);
  // A job's first view waits for every rank (/api/job, then each rank's viewport) and needs none
  // of the deferred part: while the ranks load, the cores go to the next rank's import, and the
  // deferred parts are built once the job is set (BuildDeferredIndexes), or by the first query
  // that needs one.
  {
    std::lock_guard<std::mutex> lock(impl_->job_mu);
    if (impl_->job_expected && impl_->job_json.empty()) return;
  }
  published.BuildDeferred();
}

// Builds the deferred part of every published trace's index that is not built yet, on the cores
// available, one trace per thread. Called once a job's page can be answered.
void Explorer::BuildDeferredIndexes() {
  std::vector<const explorer::TraceIndex*> indexes;
  for (const auto& t : impl_->traces) {
    if (t->Ready()) indexes.push_back(t->index.get());
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  internal::ParallelFor(cores, indexes.size(), [&](size_t i) { indexes[i]->BuildDeferred(); });
}

void Explorer::FailTrace(size_t trace, const Status& error) {
  explorer::LoadedTrace& t = *impl_->traces.at(trace);
  // The page names the file as it was added (`source`), never by the path it was read from.
  t.error = error.message();
  const std::string& path = error.file();
  const std::string& shown = t.source.empty() ? t.name : t.source;
  for (size_t at = 0; !path.empty() && (at = t.error.find(path, at)) != std::string::npos;
       at += shown.size()) {
    t.error.replace(at, path.size(), shown);
  }
  t.error_offset = error.offset();
  const int64_t now_ns = t.NsSinceLoadStart();
  if (t.import_end_ns.load(std::memory_order_relaxed) < 0) t.import_end_ns.store(now_ns);
  t.done_ns.store(now_ns, std::memory_order_relaxed);
  t.phase.store(explorer::LoadPhase::kFailed, std::memory_order_release);
}

size_t Explorer::num_traces() const { return impl_->traces.size(); }

// A rank's file (RankFileName: "PATH#PART" for a part of a profile) is the trace added with it as
// `source`, or with `source` naming it relative to a folder it lies in (as `opscope explore DIR`
// adds them).
void Explorer::SetJob(const JobReport& report) {
  auto same_file = [](const std::string& file, const std::string& source) {
    if (source.empty() || file.empty()) return false;
    if (file == source) return true;
    return file.size() > source.size() && file.ends_with(source) &&
           file[file.size() - source.size() - 1] == '/';
  };
  std::vector<explorer::JobRankTrace> ranks;
  for (const RankRow& row : report.ranks) {
    for (size_t i = 0; i < impl_->traces.size(); ++i) {
      if (impl_->traces[i]->Ready() &&
          same_file(RankFileName(row.file, row.part), impl_->traces[i]->source)) {
        ranks.push_back({row.rank, i, impl_->traces[i]->index.get()});
        break;
      }
    }
  }
  auto axis = std::make_shared<const explorer::JobAxis>(explorer::MakeJobAxis(report, ranks));
  JsonWriter w, compact;
  explorer::WriteJobView(report, *axis, &w);
  explorer::WriteJobView(report, *axis, &compact, /*compact=*/true);
  {
    std::lock_guard<std::mutex> lock(impl_->job_mu);
    impl_->job_json = w.Take();
    impl_->job_json_compact = compact.Take();
    impl_->job_axis = axis;
    if (impl_->api) impl_->api->SetJob(impl_->job_json, impl_->job_json_compact, axis);
  }
  // Left out while the ranks loaded (CompleteTrace): built now on a thread of the lowest
  // priority (its ParallelFor threads inherit it), so that the job's first view, /api/job and its
  // viewport, gets the cores first; a query that needs a part sooner builds it itself.
  std::lock_guard<std::mutex> lock(impl_->deferred_mu);
  if (impl_->deferred.joinable()) impl_->deferred.join();
  impl_->deferred = std::thread([this] {
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
    BuildDeferredIndexes();
  });
}

void Explorer::ExpectJob(bool expected, std::string why_not) {
  {
    std::lock_guard<std::mutex> lock(impl_->job_mu);
    impl_->job_expected = expected;
    impl_->not_job = why_not;
    if (impl_->api) impl_->api->ExpectJob(expected, std::move(why_not));
  }
  if (!expected) BuildDeferredIndexes();  // not a job after all: what CompleteTrace left out
}

Status Explorer::Start() {
  Impl& im = *impl_;
  if (im.running) return Status::Ok();
  im.token = im.options.token;
  if (!im.token.empty() && im.token.size() < kMinTokenLength) {
    return Status::InvalidArgument(
        fmt::format("the access token must have at least {} characters (it has {})",
                    kMinTokenLength, im.token.size()));
  }
  if (im.options.port < 0 || im.options.port > 65535) {
    return Status::InvalidArgument(
        fmt::format("port {} is out of range (0-65535; 0 picks a free port)", im.options.port));
  }
  if (im.token.empty() && !IsLoopbackHost(im.options.host)) im.token = RandomToken();
  im.server = std::make_unique<explorer::HttpServer>(im.ServerOptions());
  {
    std::lock_guard<std::mutex> lock(im.job_mu);
    im.api = std::make_unique<explorer::ExplorerApi>(
        im.traces, explorer::ExplorerApiOptions{.compare = im.options.compare});
    if (!im.job_json.empty()) im.api->SetJob(im.job_json, im.job_json_compact, im.job_axis);
    im.api->ExpectJob(im.job_expected, im.not_job);
  }
  im.api->Register(im.server.get());
  im.server->SetFilter(
      [&im](const HttpRequest& req, HttpResponse& res) { return im.Filter(req, res); });
  Status st = im.server->Start();
  if (!st.ok() && im.options.fallback_to_any_port && im.options.port != 0) {
    explorer::HttpServerOptions any = im.ServerOptions();
    any.port = 0;
    im.server = std::make_unique<explorer::HttpServer>(any);
    im.api->Register(im.server.get());
    im.server->SetFilter(
        [&im](const HttpRequest& req, HttpResponse& res) { return im.Filter(req, res); });
    st = im.server->Start();
  }
  if (!st.ok()) return st;
  im.port = im.server->port();
  std::lock_guard<std::mutex> lock(im.mu);
  im.running = true;
  return Status::Ok();
}

void Explorer::Wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->stopped_cv.wait(lock, [this] { return !impl_->running; });
}

bool Explorer::Stop(std::chrono::milliseconds grace) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> stop_lock(im.stop_mu);
  {
    std::lock_guard<std::mutex> lock(im.mu);
    if (!im.running) return true;
  }
  im.api->StopWaiting();  // a page waiting for the job is answered now, not after the grace
  const bool all_done = im.server->Stop(grace);
  {
    std::lock_guard<std::mutex> lock(im.mu);
    im.running = false;
  }
  im.stopped_cv.notify_all();
  return all_done;
}

int Explorer::port() const { return impl_->port; }
const std::string& Explorer::token() const { return impl_->token; }

std::string Explorer::Url() const {
  std::string host = impl_->options.host;
  if (host == "0.0.0.0" || host == "::" || host.empty()) host = "127.0.0.1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  std::string url = fmt::format("http://{}:{}/", host, impl_->port);
  if (!impl_->token.empty()) url += "?token=" + impl_->token;
  return url;
}

}  // namespace opscope
