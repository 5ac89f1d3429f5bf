// ExplorerApi (explorer_api.h): the JSON API's routes and the UI assets, one handler per route.
#include "explorer/explorer_api.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <charconv>
#include <cstdint>

#include "base/json_writer.h"
#include "explorer/assets.h"
#include "explorer/chain.h"
#include "explorer/device_view.h"
#include "explorer/load_status.h"
#include "explorer/match_marks.h"
#include "explorer/op_table.h"
#include "explorer/summary.h"

namespace opscope::explorer {
namespace {

constexpr int kMaxWidthPx = 20000;
constexpr size_t kMaxLaneList = 100000;
constexpr size_t kMaxRegexLength = 256;
constexpr size_t kMaxLiteralLength = 8192;  // a pasted templated kernel name runs to KBs
// Regular expressions match names on their first 512 bytes; a literal text the whole name.
constexpr size_t kMaxMatchedNameBytes = 512;
constexpr int64_t kRegexMemoryBytes = 8 << 20;
constexpr int kMaxListLimit = 10000;
constexpr int64_t kMaxTime = INT64_MAX / 4;
constexpr size_t kMaxStepLength = 256;
constexpr int kCriticalPathEvents = 200;  // path events the critical-path view lists
constexpr int kJobWaitMs = 10000;         // the longest /api/job?wait=1 holds a worker

// A request parameter that failed validation; answered with 400 and the message.
struct BadRequest {
  std::string message;
};

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

int64_t IntParam(const HttpRequest& req, const char* key, int64_t fallback, int64_t lo,
                 int64_t hi) {
  if (!req.HasParam(key)) return fallback;
  int64_t v = 0;
  if (!ParseInt(req.Param(key), &v)) {
    throw BadRequest{fmt::format("parameter '{}' must be an integer", key)};
  }
  if (v < lo || v > hi) {
    throw BadRequest{fmt::format("parameter '{}' must be in [{}, {}]", key, lo, hi)};
  }
  return v;
}

struct TimeRange {
  int64_t t0, t1;
};

// t0/t1 in API time (ns since the trace's start; default: the whole trace), t1 > t0; returned
// in the trace's own time.
TimeRange RangeParams(const HttpRequest& req, const TraceIndex& index) {
  const int64_t t0 = IntParam(req, "t0", index.ToApi(index.start_ns()), -kMaxTime, kMaxTime);
  const int64_t t1 = IntParam(req, "t1", index.ToApi(index.end_ns()), -kMaxTime, kMaxTime);
  if (t1 <= t0) throw BadRequest{"parameter 't1' must be greater than 't0'"};
  return {index.FromApi(t0), index.FromApi(t1)};
}

std::vector<uint32_t> LaneListParam(const HttpRequest& req, size_t num_lanes) {
  std::vector<uint32_t> lanes;
  if (!req.HasParam("lanes")) return lanes;
  const std::string& text = req.Param("lanes");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    int64_t v = 0;
    if (!ParseInt(std::string_view(text).substr(pos, comma - pos), &v) || v < 0 ||
        static_cast<size_t>(v) >= num_lanes) {
      throw BadRequest{"parameter 'lanes' must be a comma-separated list of lane ids"};
    }
    lanes.push_back(static_cast<uint32_t>(v));
    if (lanes.size() > kMaxLaneList) throw BadRequest{"too many lanes"};
    pos = comma + 1;
  }
  return lanes;
}

void SendJson(HttpResponse& res, std::string body) {
  res.status = 200;
  res.SetHeader("Cache-Control", "no-store");
  res.content_type = "application/json; charset=utf-8";
  res.body = std::move(body);
}

// Wraps a handler: parameter errors become 400, anything else 500, never a crash.
template <typename F>
HttpHandler Api(F f) {
  return [f = std::move(f)](const HttpRequest& req, HttpResponse& res) {
    try {
      f(req, res);
    } catch (const BadRequest& e) {
      SetJsonError(res, 400, e.message);
    } catch (const TraceUnavailable& e) {
      e.Answer(res);
    } catch (const std::exception& e) {
      SetJsonError(res, 500, e.what());
    }
  };
}

// True when the request need not be answered further: its client has gone, or its deadline has
// passed (then `res` says so).
bool Abandoned(const HttpRequest& req, HttpResponse& res) {
  if (!req.Cancelled()) return false;
  SetJsonError(res, 503, "the request ran past its time limit; retry, or narrow it");
  return true;
}

// Marks the names (string ids) that `pattern` matches within their first `name_bytes`; false
// when the time ran out first.
bool MatchNames(const StringTable& strings, const RE2& pattern, size_t name_bytes,
                const HttpRequest& req, std::chrono::steady_clock::time_point until,
                std::vector<bool>* names) {
  for (size_t i = 1; i < strings.size(); ++i) {
    if ((i & 1023) == 0 && (req.Cancelled() || std::chrono::steady_clock::now() > until)) {
      return false;
    }
    std::string_view s = strings.Get(static_cast<StringId>(i));
    s = s.substr(0, name_bytes);
    (*names)[i] = RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), pattern);
  }
  return true;
}

// The kinds a search is narrowed to by parameter 'kind' (bit i: ActivityKind i): all, ops
// (framework ops, annotations, Python frames, host collectives), runtime (runtime and driver
// calls, synchronisation), kernels (device executions and engine instructions), memory (copies
// and memsets).
uint32_t KindsParam(const HttpRequest& req) {
  auto bits = [](std::initializer_list<ActivityKind> kinds) {
    uint32_t b = 0;
    for (ActivityKind k : kinds) b |= 1u << static_cast<int>(k);
    return b;
  };
  const std::string kind = req.HasParam("kind") ? req.Param("kind") : "all";
  if (kind == "all" || kind.empty()) return ~uint32_t{0};
  if (kind == "ops") {
    return bits({ActivityKind::kCpuOp, ActivityKind::kUserAnnotation, ActivityKind::kPythonFunction,
                 ActivityKind::kCollective});
  }
  if (kind == "runtime")
    return bits({ActivityKind::kRuntime, ActivityKind::kDriver, ActivityKind::kSync});
  if (kind == "kernels") return bits({ActivityKind::kKernel, ActivityKind::kInstruction});
  if (kind == "memory") return bits({ActivityKind::kMemcpy, ActivityKind::kMemset});
  throw BadRequest{"parameter 'kind' must be all, ops, runtime, kernels or memory"};
}

}  // namespace

void SetJsonError(HttpResponse& res, int status, std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Field("error", message);
  w.Field("status", status);
  w.EndObject();
  res.status = status;
  res.SetHeader("Cache-Control", "no-store");
  res.content_type = "application/json; charset=utf-8";
  res.body = w.Take();
}

LoadedTrace& ExplorerApi::TraceParam(const HttpRequest& req) const {
  int64_t i = 0;
  if (req.captures.empty() || !ParseInt(req.captures[0], &i) || i < 0 ||
      static_cast<size_t>(i) >= traces_.size()) {
    throw BadRequest{"no such trace"};
  }
  return ReadyTrace(static_cast<size_t>(i));
}

LoadedTrace& ExplorerApi::ReadyTrace(size_t i) const {
  LoadedTrace& t = *traces_[i];
  if (!t.Ready()) throw TraceUnavailable(t, i);
  return t;
}

uint32_t ExplorerApi::SliceParam(const LoadedTrace& t, const std::string& text) const {
  int64_t i = 0;
  if (!ParseInt(text, &i) || i < 0 || static_cast<size_t>(i) >= t.trace->slices().size()) {
    throw BadRequest{"no such event"};
  }
  return static_cast<uint32_t>(i);
}

void ExplorerApi::Register(HttpServer* server) {
  auto bind = [this](void (ExplorerApi::*handler)(const HttpRequest&, HttpResponse&)) {
    return Api(
        [this, handler](const HttpRequest& req, HttpResponse& res) { (this->*handler)(req, res); });
  };
  auto always = [](const HttpRequest&) { return true; };
  server->Route("/api/info", bind(&ExplorerApi::Info));
  server->Route("/api/status", bind(&ExplorerApi::LoadStatus));
  server->Route("/api/trace/{n}/lanes", bind(&ExplorerApi::Lanes));
  server->Route("/api/trace/{n}/viewport", bind(&ExplorerApi::Viewport));
  server->Route("/api/trace/{n}/memory", bind(&ExplorerApi::Memory));
  server->Route("/api/trace/{n}/slice/{n}", bind(&ExplorerApi::SliceDetails));
  server->Route("/api/trace/{n}/chain/{n}", bind(&ExplorerApi::Chain));
  server->Route("/api/trace/{n}/device/{n}", bind(&ExplorerApi::DeviceView));
  server->Route("/api/trace/{n}/ops", bind(&ExplorerApi::Ops),
                [this](const HttpRequest& req) { return OpsIsHeavy(req); });
  server->Route("/api/trace/{n}/select", bind(&ExplorerApi::Select), always);
  server->Route("/api/trace/{n}/search", bind(&ExplorerApi::Search), always);
  server->Route("/api/trace/{n}/marks", bind(&ExplorerApi::Marks), always);
  server->Route("/api/trace/{n}/summary", bind(&ExplorerApi::Summary),
                [this](const HttpRequest& req) { return SummaryIsHeavy(req); });
  server->Route("/api/trace/{n}/critical_path", bind(&ExplorerApi::CriticalPath),
                [this](const HttpRequest& req) { return CriticalPathIsHeavy(req); });
  server->Route("/api/job", bind(&ExplorerApi::Job));
  server->Route("/api/job/viewport", bind(&ExplorerApi::JobViewport));
  server->Route("/api/diff", bind(&ExplorerApi::Diff), always);
  server->SetFallback(&ExplorerApi::Asset);
}

bool ExplorerApi::OpsIsHeavy(const HttpRequest& req) const {
  if (req.HasParam("t0") || req.HasParam("t1") || req.HasParam("shapes")) return true;
  int64_t i = 0;
  if (!ParseInt(req.captures.at(0), &i) || i < 0 || static_cast<size_t>(i) >= traces_.size()) {
    return false;  // answered with 400 at once
  }
  return !traces_[static_cast<size_t>(i)]->ops_ready;
}

bool ExplorerApi::SummaryIsHeavy(const HttpRequest& req) const {
  int64_t i = 0;
  if (!ParseInt(req.captures.at(0), &i) || i < 0 || static_cast<size_t>(i) >= traces_.size()) {
    return false;
  }
  return !traces_[static_cast<size_t>(i)]->summary_ready;
}

std::string CriticalPathKey(const HttpRequest& req, CriticalPathOptions* options) {
  if (req.HasParam("step")) options->annotation = req.Param("step");
  if (options->annotation.size() > kMaxStepLength) return "";
  int64_t instance = 0;
  if (req.HasParam("instance") &&
      (!ParseInt(req.Param("instance"), &instance) || instance < 0 || instance > INT32_MAX)) {
    return "";
  }
  // An empty step is the whole trace, whatever the instance: one cache entry, so requests that
  // vary only an ignored parameter do not recompute the path (a client could otherwise keep the
  // heavy pool busy with new instance= values).
  options->instance = options->annotation.empty() ? 0 : static_cast<int>(instance);
  return fmt::format("{}\x1f{}", options->annotation, options->instance);
}

bool ExplorerApi::CriticalPathIsHeavy(const HttpRequest& req) const {
  int64_t i = 0;
  if (!ParseInt(req.captures.at(0), &i) || i < 0 || static_cast<size_t>(i) >= traces_.size()) {
    return false;
  }
  CriticalPathOptions o;
  const std::string key = CriticalPathKey(req, &o);
  if (key.empty()) return false;  // answered with 400 at once
  LoadedTrace& t = *traces_[static_cast<size_t>(i)];
  std::lock_guard<std::mutex> lock(t.cp_mu);
  return !(t.cp && t.cp_key == key);
}

std::shared_ptr<const CriticalPathView> ExplorerApi::CriticalPathOf(LoadedTrace& t,
                                                                    const HttpRequest& req) const {
  CriticalPathOptions o;
  const std::string key = CriticalPathKey(req, &o);
  if (key.empty()) {
    IntParam(req, "instance", 0, 0, INT32_MAX);  // throws when 'instance' is the bad one
    throw BadRequest{"parameter 'step' is too long"};
  }
  {
    std::lock_guard<std::mutex> lock(t.cp_mu);
    if (t.cp && t.cp_key == key) return t.cp;
  }
  auto view = std::make_shared<const CriticalPathView>(
      MakeCriticalPathView(*t.index, o, kCriticalPathEvents));
  std::lock_guard<std::mutex> lock(t.cp_mu);
  t.cp_key = key;
  t.cp = view;
  return view;
}

void ExplorerApi::SetJob(std::string json, std::string compact_json,
                         std::shared_ptr<const JobAxis> axis) {
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    job_json_ = std::move(json);
    job_json_compact_ = std::move(compact_json);
    job_axis_ = std::move(axis);
  }
  job_cv_.notify_all();
}

void ExplorerApi::ExpectJob(bool expected, std::string why_not) {
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    job_expected_ = expected;
    not_job_ = std::move(why_not);
  }
  job_cv_.notify_all();
}

void ExplorerApi::StopWaiting() {
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    stopping_ = true;
  }
  job_cv_.notify_all();
}

void ExplorerApi::Info(const HttpRequest&, HttpResponse& res) {
  JsonWriter w;
  w.BeginObject();
  w.Field("compare", options_.compare);
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    w.Field("job", !job_json_.empty());
    if (!not_job_.empty()) w.Field("not_job", not_job_);
  }
  w.Field("ready", AllLoaded(traces_));
  w.Key("traces");
  w.BeginArray();
  for (size_t i = 0; i < traces_.size(); ++i) {
    const LoadedTrace& t = *traces_[i];
    const LoadPhase phase = t.phase.load(std::memory_order_acquire);
    w.BeginObject();
    w.Field("index", static_cast<uint64_t>(i));
    w.Field("name", t.name);
    w.Field("source", t.source);
    w.Field("phase", LoadPhaseKey(phase));
    if (phase == LoadPhase::kReady) {
      w.Field("slices", static_cast<uint64_t>(t.trace->slices().size()));
      w.Field("start_ns", t.index->ToApi(t.index->start_ns()));
      w.Field("end_ns", t.index->ToApi(t.index->end_ns()));
      w.Field("device_type", t.trace->metadata().device_type);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  SendJson(res, w.Take());
}

void ExplorerApi::LoadStatus(const HttpRequest&, HttpResponse& res) {
  std::string_view job = "none";
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    if (!job_json_.empty()) {
      job = "ready";
    } else if (job_expected_) {
      job = "loading";
    }
  }
  JsonWriter w;
  WriteLoadStatus(traces_, job, &w);
  SendJson(res, w.Take());
}

void ExplorerApi::Lanes(const HttpRequest& req, HttpResponse& res) {
  JsonWriter w;
  TraceParam(req).index->WriteLanes(&w);
  SendJson(res, w.Take());
}

ViewportQuery ExplorerApi::ViewportParams(const HttpRequest& req, const LoadedTrace& t) const {
  const TimeRange range = RangeParams(req, *t.index);
  ViewportQuery q;
  q.t0 = range.t0;
  q.t1 = range.t1;
  q.width_px = static_cast<int>(IntParam(req, "width", 1000, 1, kMaxWidthPx));
  q.min_px = static_cast<double>(IntParam(req, "min_px", 1, 1, 100));
  q.lanes = LaneListParam(req, t.index->lanes().size());
  q.flat = IntParam(req, "flat", 0, 0, 1) == 1;
  return q;
}

void ExplorerApi::Viewport(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  JsonWriter w;
  t.index->WriteViewport(ViewportParams(req, t), &w);
  SendJson(res, w.Take());
}

// The timeline the index computed once, written as the report writes it.
void ExplorerApi::Memory(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const bool samples = IntParam(req, "samples", 0, 0, 1) == 1;
  SendJson(res, t.index->memory().timeline().ToJson(samples));
}

void ExplorerApi::SliceDetails(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  JsonWriter w;
  t.index->WriteSlice(SliceParam(t, req.captures.at(1)), &w);
  SendJson(res, w.Take());
}

void ExplorerApi::Chain(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  JsonWriter w;
  WriteChain(*t.index, SliceParam(t, req.captures.at(1)), &w);
  SendJson(res, w.Take());
}

void ExplorerApi::DeviceView(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  JsonWriter w;
  WriteDeviceView(*t.index, SliceParam(t, req.captures.at(1)), &w);
  SendJson(res, w.Take());
}

// The whole trace's table is computed once; a time range is aggregated over the slices the
// index finds in it, without copying the trace.
void ExplorerApi::Ops(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const bool shapes = IntParam(req, "shapes", 0, 0, 1) == 1;
  const TimeRange range = RangeParams(req, *t.index);
  const bool whole = range.t0 <= t.index->start_ns() && range.t1 >= t.index->end_ns();
  if (whole && !shapes) {
    std::call_once(t.ops_once, [&] {
      JsonWriter w;
      WriteOpTable(*t.trace, false, &w);
      t.ops_json = w.Take();
      t.ops_ready = true;
    });
    SendJson(res, t.ops_json);
    return;
  }
  JsonWriter w;
  if (whole) {
    WriteOpTable(*t.trace, shapes, &w);
  } else {
    const std::vector<uint32_t> slices = t.index->SlicesOverlapping(range.t0, range.t1);
    if (Abandoned(req, res)) return;
    WriteOpTable(*t.trace, shapes, &w, &slices);
  }
  SendJson(res, w.Take());
}

void ExplorerApi::Select(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const TimeRange range = RangeParams(req, *t.index);
  const int limit = static_cast<int>(IntParam(req, "limit", 50, 1, kMaxListLimit));
  JsonWriter w;
  t.index->WriteSelection(range.t0, range.t1, LaneListParam(req, t.index->lanes().size()), limit,
                          &w);
  SendJson(res, w.Take());
}

// Names are matched by RE2 (linear time, bounded memory) within a time budget: the answer says
// "complete": false when the budget or the client ran out first.
ExplorerApi::NameMatch ExplorerApi::MatchingNames(const LoadedTrace& t,
                                                  const HttpRequest& req) const {
  const std::string& q = req.Param("q");
  if (q.empty()) throw BadRequest{"parameter 'q' (the text to find) is required"};
  const bool exact = IntParam(req, "exact", 0, 0, 1) == 1;
  const bool regex = IntParam(req, "regex", 0, 0, 1) == 1;
  const StringTable& strings = t.trace->strings();
  NameMatch match{std::vector<bool>(strings.size(), false), true};
  if (exact) {  // any name of the trace, however long (templated kernel names run to KBs)
    const StringId id = strings.Find(q);
    if (id != kNone) match.names[id] = true;
    return match;
  }
  if (regex && q.size() > kMaxRegexLength) {
    throw BadRequest{
        fmt::format("parameter 'q' is too long for a regular expression ({} bytes, "
                    "at most {}; without regex=1 it is found as text)",
                    q.size(), kMaxRegexLength)};
  }
  if (!regex && q.size() > kMaxLiteralLength) {
    throw BadRequest{fmt::format("parameter 'q' is too long ({} bytes, at most {})", q.size(),
                                 kMaxLiteralLength)};
  }
  // Text (the default) is found anywhere in a name, case-insensitive, as pasted: no character
  // is special. regex=1: an RE2 regular expression.
  RE2::Options re_options;
  re_options.set_case_sensitive(false);
  re_options.set_literal(!regex);
  re_options.set_log_errors(false);
  re_options.set_max_mem(kRegexMemoryBytes);
  const RE2 pattern(q, re_options);
  if (!pattern.ok()) throw BadRequest{"bad regular expression: " + pattern.error()};
  const auto until =
      std::min(req.deadline(), std::chrono::steady_clock::now() +
                                   std::chrono::milliseconds(options_.search_budget_ms));
  const size_t name_bytes = regex ? kMaxMatchedNameBytes : std::string_view::npos;
  match.complete = MatchNames(strings, pattern, name_bytes, req, until, &match.names);
  return match;
}

void ExplorerApi::Search(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const int offset = static_cast<int>(IntParam(req, "offset", 0, 0, INT32_MAX));
  const int limit = static_cast<int>(IntParam(req, "limit", 100, 1, kMaxListLimit));
  const uint32_t kinds = KindsParam(req);
  const std::string& sort = req.HasParam("sort") ? req.Param("sort") : std::string("start");
  if (sort != "start" && sort != "dur") throw BadRequest{"parameter 'sort' must be start or dur"};
  const NameMatch match = MatchingNames(t, req);
  if (Abandoned(req, res)) return;
  JsonWriter w;
  t.index->WriteSearch({&match.names, kinds},
                       sort == "dur" ? SearchOrder::kDuration : SearchOrder::kStart, offset, limit,
                       match.complete, &w);
  SendJson(res, w.Take());
}

// Where a search's matches lie in one viewport (WriteMatchMarks), or with critical_path=1 the
// events of a step's critical path (WriteSliceMarks).
void ExplorerApi::Marks(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const ViewportQuery q = ViewportParams(req, t);
  if (IntParam(req, "critical_path", 0, 0, 1) == 1) {
    const std::shared_ptr<const CriticalPathView> cp = CriticalPathOf(t, req);
    if (Abandoned(req, res)) return;
    JsonWriter w;
    WriteSliceMarks(*t.index, cp->on_path, q, &w);
    SendJson(res, w.Take());
    return;
  }
  const uint32_t kinds = KindsParam(req);
  const NameMatch match = MatchingNames(t, req);
  if (Abandoned(req, res)) return;
  JsonWriter w;
  WriteMatchMarks(*t.index, {&match.names, kinds}, q, &w);
  SendJson(res, w.Take());
}

void ExplorerApi::Summary(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  std::call_once(t.summary_once, [&] {
    JsonWriter w;
    WriteSummary(*t.index, &w, t.source);
    t.summary_json = w.Take();
    t.summary_ready = true;
  });
  SendJson(res, t.summary_json);
}

// wait=1: the page asks before the job is made and gets it as soon as it is, instead of
// polling /api/status and asking once more (a round trip less for its first view); after
// kJobWaitMs it answers 503 as without.
void ExplorerApi::Job(const HttpRequest& req, HttpResponse& res) {
  const bool compact = IntParam(req, "compact", 0, 0, 1) == 1;
  std::string json, why_not;
  bool expected = false;
  {
    std::unique_lock<std::mutex> lock(job_mu_);
    if (IntParam(req, "wait", 0, 0, 1) == 1) {
      job_cv_.wait_for(lock, std::chrono::milliseconds(kJobWaitMs),
                       [this] { return !job_json_.empty() || !job_expected_ || stopping_; });
    }
    json = compact && !job_json_compact_.empty() ? job_json_compact_ : job_json_;
    expected = job_expected_;
    why_not = not_job_;
  }
  if (!json.empty()) return SendJson(res, std::move(json));
  if (expected) return SetLoadingError(res, "the job's traces are still loading");
  SetJsonError(res, 404,
               why_not.empty() ? "these traces were not opened as one job"
                               : "these traces were not opened as one job: " + why_not);
}

// The ranks' lanes over an axis range, each rank's mapped from its own trace's times.
void ExplorerApi::JobViewport(const HttpRequest& req, HttpResponse& res) {
  std::shared_ptr<const JobAxis> axis;
  bool expected = false;
  {
    std::lock_guard<std::mutex> lock(job_mu_);
    axis = job_axis_;
    expected = job_expected_;
  }
  if (!axis) {
    if (expected) return SetLoadingError(res, "the job's traces are still loading");
    return SetJsonError(res, 404, "these traces were not opened as one job");
  }
  const int64_t t0 = IntParam(req, "t0", 0, -kMaxTime, kMaxTime);
  const int64_t t1 = IntParam(req, "t1", axis->end_ns, -kMaxTime, kMaxTime);
  if (t1 <= t0) throw BadRequest{"parameter 't1' must be greater than 't0'"};
  const int width = static_cast<int>(IntParam(req, "width", 1000, 1, kMaxWidthPx));
  // Job lane ids (rank position << kJobLaneBits | lane); default: every lane of every rank.
  std::vector<uint32_t> lanes = LaneListParam(req, axis->ranks.size() << kJobLaneBits);
  for (uint32_t id : lanes) {
    const size_t r = id >> kJobLaneBits;
    if ((id & ((1u << kJobLaneBits) - 1)) >= axis->ranks[r].index->lanes().size()) {
      throw BadRequest{fmt::format("parameter 'lanes': {} names no lane of rank {}", id,
                                   axis->ranks[r].row.rank)};
    }
  }
  if (!req.HasParam("lanes")) {
    for (size_t r = 0; r < axis->ranks.size(); ++r) {
      for (uint32_t l = 0; l < axis->ranks[r].index->lanes().size(); ++l) {
        lanes.push_back(static_cast<uint32_t>(r << kJobLaneBits) | l);
      }
    }
  }
  JsonWriter w;
  WriteJobViewport(*axis, t0, t1, width, lanes, IntParam(req, "compact", 0, 0, 1) == 1,
                   IntParam(req, "flat", 0, 0, 1) == 1, &w);
  SendJson(res, w.Take());
}

void ExplorerApi::CriticalPath(const HttpRequest& req, HttpResponse& res) {
  LoadedTrace& t = TraceParam(req);
  const std::shared_ptr<const CriticalPathView> cp = CriticalPathOf(t, req);
  if (Abandoned(req, res)) return;
  SendJson(res, cp->json);
}

void ExplorerApi::Diff(const HttpRequest& req, HttpResponse& res) {
  const int64_t n = static_cast<int64_t>(traces_.size());
  if (n < 2) throw BadRequest{"a comparison needs two traces"};
  const int64_t a = IntParam(req, "a", 0, 0, n - 1);
  const int64_t b = IntParam(req, "b", 1, 0, n - 1);
  const Trace& trace_a = *ReadyTrace(static_cast<size_t>(a)).trace;
  const Trace& trace_b = *ReadyTrace(static_cast<size_t>(b)).trace;
  JsonWriter w;
  WriteDiff(trace_a, trace_b, &w);
  SendJson(res, w.Take());
}

// UI assets: exact matches against the compiled-in table; nothing else is ever served.
void ExplorerApi::Asset(const HttpRequest& req, HttpResponse& res) {
  const std::string path = req.path == "/" ? "/index.html" : req.path;
  const explorer::Asset* asset = FindAsset(path);
  if (asset == nullptr) {
    SetJsonError(res, 404, "not found");
    return;
  }
  res.SetHeader("Content-Security-Policy",
                "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
  res.SetHeader("Cache-Control", "no-cache");
  res.content_type = asset->mime;
  res.body.assign(reinterpret_cast<const char*>(asset->data), asset->size);
}

}  // namespace opscope::explorer
