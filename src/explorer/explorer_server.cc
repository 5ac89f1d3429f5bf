// The Explorer's HTTP server: routes, parameter checks, access control and limits.
#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <thread>

#include "explorer/assets.h"
#include "explorer/chain.h"
#include "explorer/device_view.h"
#include "explorer/job_view.h"
#include "explorer/match_marks.h"
#include "explorer/op_table.h"
#include "explorer/summary.h"
#include "explorer/trace_index.h"
#include "opscope/explorer.h"
#include "opscope/job.h"
#include "trace/json_writer.h"

namespace opscope {
namespace {

using explorer::TraceIndex;

constexpr size_t kMaxHeaders = 64;
constexpr size_t kMaxPayloadBytes = 64 * 1024;
constexpr int kMaxWidthPx = 20000;
constexpr size_t kMaxLaneList = 100000;
constexpr size_t kMaxRegexLength = 256;
constexpr int kMaxListLimit = 10000;

// A request parameter that failed validation; answered with 400 and the message.
struct BadRequest {
  std::string message;
};

struct LoadedTrace {
  std::string name;
  std::string source;
  std::unique_ptr<Trace> trace;
  std::unique_ptr<TraceIndex> index;
  std::once_flag ops_once, summary_once;
  std::string ops_json, summary_json;  // cached answers for the whole trace
};

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end;
}

int64_t IntParam(const httplib::Request& req, const char* key, int64_t fallback, int64_t lo,
                 int64_t hi) {
  if (!req.has_param(key)) return fallback;
  int64_t v = 0;
  if (!ParseInt(req.get_param_value(key), &v)) {
    throw BadRequest{fmt::format("parameter '{}' must be an integer", key)};
  }
  if (v < lo || v > hi) {
    throw BadRequest{fmt::format("parameter '{}' must be in [{}, {}]", key, lo, hi)};
  }
  return v;
}

std::vector<uint32_t> LaneListParam(const httplib::Request& req, size_t num_lanes) {
  std::vector<uint32_t> lanes;
  if (!req.has_param("lanes")) return lanes;
  const std::string text = req.get_param_value("lanes");
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

std::string CookieValue(const std::string& cookies, std::string_view name) {
  size_t pos = 0;
  while (pos < cookies.size()) {
    size_t end = cookies.find(';', pos);
    if (end == std::string::npos) end = cookies.size();
    std::string_view part = std::string_view(cookies).substr(pos, end - pos);
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

void SendJson(httplib::Response& res, std::string body, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  // Not plain "application/json": httplib gzips that type, which costs far more time than the
  // loopback transfer it saves (1.5 s for a 550 KB viewport answer).
  res.set_content(std::move(body), "application/json; charset=utf-8");
}

void SendError(httplib::Response& res, int status, std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Field("error", message);
  w.Field("status", status);
  w.EndObject();
  SendJson(res, w.Take(), status);
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
  std::vector<std::unique_ptr<LoadedTrace>> traces;
  httplib::Server server;
  std::thread thread;
  std::string token;
  int port = 0;
  bool started = false;
  std::string job_json;  // /api/job (explorer/job_view.h); empty when the traces are not a job

  LoadedTrace& TraceParam(const httplib::Request& req, size_t match = 1) {
    int64_t i = 0;
    if (!ParseInt(req.matches[match].str(), &i) || i < 0 ||
        static_cast<size_t>(i) >= traces.size()) {
      throw BadRequest{"no such trace"};
    }
    return *traces[static_cast<size_t>(i)];
  }

  uint32_t SliceParam(const LoadedTrace& t, const std::string& text) {
    int64_t i = 0;
    if (!ParseInt(text, &i) || i < 0 || static_cast<size_t>(i) >= t.trace->slices().size()) {
      throw BadRequest{"no such event"};
    }
    return static_cast<uint32_t>(i);
  }

  // t0, t1, width, min_px and lanes of a viewport request.
  explorer::ViewportQuery ViewportParams(const LoadedTrace& t, const httplib::Request& req) {
    explorer::ViewportQuery q;
    q.t0 = IntParam(req, "t0", t.index->start_ns(), INT64_MIN / 4, INT64_MAX / 4);
    q.t1 = IntParam(req, "t1", t.index->end_ns(), INT64_MIN / 4, INT64_MAX / 4);
    if (q.t1 <= q.t0) throw BadRequest{"parameter 't1' must be greater than 't0'"};
    q.width_px = static_cast<int>(IntParam(req, "width", 1000, 1, kMaxWidthPx));
    q.min_px = static_cast<double>(IntParam(req, "min_px", 1, 1, 100));
    q.lanes = LaneListParam(req, t.index->lanes().size());
    return q;
  }

  // The names (a bitmap over string ids) that parameter 'q' matches: a regular expression, or
  // the exact name when exact=1.
  std::vector<bool> MatchingNames(const LoadedTrace& t, const httplib::Request& req) {
    const std::string q = req.get_param_value("q");
    if (q.empty()) throw BadRequest{"parameter 'q' (a regular expression) is required"};
    const bool exact = IntParam(req, "exact", 0, 0, 1) == 1;
    const StringTable& strings = t.trace->strings();
    std::vector<bool> names(strings.size(), false);
    if (exact) {  // any name of the trace, however long (templated kernel names run to KBs)
      const StringId id = strings.Find(q);
      if (id != kNone) names[id] = true;
      return names;
    }
    if (q.size() > kMaxRegexLength) {
      throw BadRequest{
          fmt::format("parameter 'q' is too long for a regular expression ({} bytes, "
                      "at most {}; exact=1 looks up a whole name)",
                      q.size(), kMaxRegexLength)};
    }
    const std::regex re(q, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    for (size_t i = 1; i < strings.size(); ++i) {
      std::string_view s = strings.Get(static_cast<StringId>(i));
      s = s.substr(0, 512);  // bounds the matcher's work on very long names
      names[i] = std::regex_search(s.begin(), s.end(), re);
    }
    return names;
  }

  // Wraps a handler: parameter errors become 400, anything else 500, never a crash.
  template <typename F>
  httplib::Server::Handler Api(F f) {
    return [f = std::move(f)](const httplib::Request& req, httplib::Response& res) {
      try {
        f(req, res);
      } catch (const BadRequest& e) {
        SendError(res, 400, e.message);
      } catch (const std::regex_error& e) {
        SendError(res, 400, fmt::format("bad regular expression: {}", e.what()));
      } catch (const std::exception& e) {
        SendError(res, 500, e.what());
      }
    };
  }

  httplib::Server::HandlerResponse CheckAccess(const httplib::Request& req,
                                               httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    if (req.headers.size() > kMaxHeaders) {
      SendError(res, 431, "too many request headers");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length")) {
      int64_t length = 0;
      if (!ParseInt(req.get_header_value("Content-Length"), &length) || length < 0 ||
          static_cast<size_t>(length) > kMaxPayloadBytes) {
        SendError(res, 413, "request body too large");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (req.method != "GET" && req.method != "HEAD") {
      SendError(res, 405, "only GET is supported");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!token.empty()) {
      std::string given = req.get_header_value("X-Opscope-Token");
      bool from_query = false;
      if (given.empty() && req.has_param("token")) {
        given = req.get_param_value("token");
        from_query = true;
      }
      if (given.empty()) given = CookieValue(req.get_header_value("Cookie"), "opscope_token");
      if (!ConstantTimeEquals(given, token)) {
        SendError(res, 401, "missing or wrong access token (see the URL opscope explore printed)");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (from_query) {
        res.set_header("Set-Cookie",
                       fmt::format("opscope_token={}; Path=/; HttpOnly; SameSite=Strict", token));
      }
    } else {
      // Loopback without a token: refuse other Host names so a web page cannot reach the
      // server through DNS rebinding.
      const std::string host = HostOnly(req.get_header_value("Host"));
      if (!host.empty() && !IsLoopbackHost(host)) {
        SendError(res, 403, "this server only answers requests addressed to the loopback host");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  void Routes();
};

void Explorer::Impl::Routes() {
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return CheckAccess(req, res);
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      SendError(res, res.status, res.status == 404 ? "not found" : "bad request");
    }
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                  std::exception_ptr) { SendError(res, 500, "internal error"); });

  server.Get("/api/info", Api([this](const httplib::Request&, httplib::Response& res) {
               JsonWriter w;
               w.BeginObject();
               w.Field("compare", options.compare);
               w.Field("job", !job_json.empty());
               w.Key("traces");
               w.BeginArray();
               for (size_t i = 0; i < traces.size(); ++i) {
                 const LoadedTrace& t = *traces[i];
                 w.BeginObject();
                 w.Field("index", static_cast<uint64_t>(i));
                 w.Field("name", t.name);
                 w.Field("source", t.source);
                 w.Field("slices", static_cast<uint64_t>(t.trace->slices().size()));
                 w.Field("start_ns", t.index->start_ns());
                 w.Field("end_ns", t.index->end_ns());
                 w.Field("device_type", t.trace->metadata().device_type);
                 w.EndObject();
               }
               w.EndArray();
               w.EndObject();
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/lanes)",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               JsonWriter w;
               t.index->WriteLanes(&w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/viewport)",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               const explorer::ViewportQuery q = ViewportParams(t, req);
               JsonWriter w;
               t.index->WriteViewport(q, &w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/slice/(\d+))",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               JsonWriter w;
               t.index->WriteSlice(SliceParam(t, req.matches[2].str()), &w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/chain/(\d+))",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               JsonWriter w;
               explorer::WriteChain(*t.index, SliceParam(t, req.matches[2].str()), &w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/device/(\d+))",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               const uint32_t exec = SliceParam(t, req.matches[2].str());
               JsonWriter w;
               explorer::WriteDeviceView(*t.index, exec, &w);
               SendJson(res, w.Take());
             }));

  server.Get(
      R"(/api/trace/(\d+)/ops)", Api([this](const httplib::Request& req, httplib::Response& res) {
        LoadedTrace& t = TraceParam(req);
        const bool shapes = IntParam(req, "shapes", 0, 0, 1) == 1;
        if (!req.has_param("t0") && !req.has_param("t1") && !shapes) {
          std::call_once(t.ops_once, [&] {
            JsonWriter w;
            explorer::WriteOpTable(*t.trace, false, &w);
            t.ops_json = w.Take();
          });
          SendJson(res, t.ops_json);
          return;
        }
        const int64_t t0 = IntParam(req, "t0", t.index->start_ns(), INT64_MIN / 4, INT64_MAX / 4);
        const int64_t t1 = IntParam(req, "t1", t.index->end_ns(), INT64_MIN / 4, INT64_MAX / 4);
        if (t1 <= t0) throw BadRequest{"parameter 't1' must be greater than 't0'"};
        JsonWriter w;
        if (t0 <= t.index->start_ns() && t1 >= t.index->end_ns()) {
          explorer::WriteOpTable(*t.trace, shapes, &w);
        } else {
          const Trace part = explorer::SliceTimeRange(*t.trace, t0, t1);
          explorer::WriteOpTable(part, shapes, &w);
        }
        SendJson(res, w.Take());
      }));

  server.Get(
      R"(/api/trace/(\d+)/select)",
      Api([this](const httplib::Request& req, httplib::Response& res) {
        LoadedTrace& t = TraceParam(req);
        const int64_t t0 = IntParam(req, "t0", t.index->start_ns(), INT64_MIN / 4, INT64_MAX / 4);
        const int64_t t1 = IntParam(req, "t1", t.index->end_ns(), INT64_MIN / 4, INT64_MAX / 4);
        if (t1 <= t0) throw BadRequest{"parameter 't1' must be greater than 't0'"};
        const int limit = static_cast<int>(IntParam(req, "limit", 50, 1, kMaxListLimit));
        JsonWriter w;
        t.index->WriteSelection(t0, t1, LaneListParam(req, t.index->lanes().size()), limit, &w);
        SendJson(res, w.Take());
      }));

  server.Get(R"(/api/trace/(\d+)/search)",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               const std::vector<bool> names = MatchingNames(t, req);
               const int offset = static_cast<int>(IntParam(req, "offset", 0, 0, INT32_MAX));
               const int limit = static_cast<int>(IntParam(req, "limit", 100, 1, kMaxListLimit));
               JsonWriter w;
               t.index->WriteSearch(names, offset, limit, &w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/marks)",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               const std::vector<bool> names = MatchingNames(t, req);
               JsonWriter w;
               explorer::WriteMatchMarks(*t.index, names, ViewportParams(t, req), &w);
               SendJson(res, w.Take());
             }));

  server.Get(R"(/api/trace/(\d+)/summary)",
             Api([this](const httplib::Request& req, httplib::Response& res) {
               LoadedTrace& t = TraceParam(req);
               std::call_once(t.summary_once, [&] {
                 JsonWriter w;
                 explorer::WriteSummary(*t.index, &w, t.source);
                 t.summary_json = w.Take();
               });
               SendJson(res, t.summary_json);
             }));

  server.Get("/api/job", Api([this](const httplib::Request&, httplib::Response& res) {
               if (job_json.empty()) {
                 SendError(res, 404, "these traces were not opened as one job");
                 return;
               }
               SendJson(res, job_json);
             }));

  server.Get("/api/diff", Api([this](const httplib::Request& req, httplib::Response& res) {
               const int64_t n = static_cast<int64_t>(traces.size());
               if (n < 2) throw BadRequest{"a comparison needs two traces"};
               const int64_t a = IntParam(req, "a", 0, 0, n - 1);
               const int64_t b = IntParam(req, "b", 1, 0, n - 1);
               JsonWriter w;
               explorer::WriteDiff(*traces[a]->trace, *traces[b]->trace, &w);
               SendJson(res, w.Take());
             }));

  // UI assets: exact matches against the compiled-in table; nothing else is ever served.
  server.Get(R"(/[^/]*)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string path = req.path == "/" ? "/index.html" : req.path;
    const explorer::Asset* asset = explorer::FindAsset(path);
    if (asset == nullptr) {
      SendError(res, 404, "not found");
      return;
    }
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(reinterpret_cast<const char*>(asset->data), asset->size, asset->mime);
  });
}

Explorer::Explorer(ExplorerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Explorer::~Explorer() { Stop(); }

size_t Explorer::AddTrace(std::string name, Trace trace, std::string source) {
  auto t = std::make_unique<LoadedTrace>();
  t->name = std::move(name);
  t->source = std::move(source);
  t->trace = std::make_unique<Trace>(std::move(trace));
  if (!t->trace->finalized()) t->trace->Finalize();
  t->index = std::make_unique<TraceIndex>(*t->trace);
  impl_->traces.push_back(std::move(t));
  return impl_->traces.size() - 1;
}

size_t Explorer::num_traces() const { return impl_->traces.size(); }

void Explorer::SetJob(const JobReport& report) {
  std::vector<explorer::JobRankTrace> ranks;
  for (const RankRow& row : report.ranks) {
    for (size_t i = 0; i < impl_->traces.size(); ++i) {
      if (!row.file.empty() && impl_->traces[i]->source == row.file) {
        ranks.push_back({row.rank, i, impl_->traces[i]->index.get()});
        break;
      }
    }
  }
  JsonWriter w;
  explorer::WriteJobView(report, ranks, &w);
  impl_->job_json = w.Take();
}

Status Explorer::Start() {
  Impl& im = *impl_;
  if (im.started) return Status::Ok();
  im.token = im.options.token;
  if (im.token.empty() && !IsLoopbackHost(im.options.host)) im.token = RandomToken();
  if (im.options.port < 0 || im.options.port > 65535) {
    return Status::InvalidArgument(fmt::format("port {} is out of range", im.options.port));
  }
  const size_t threads = static_cast<size_t>(std::clamp(im.options.threads, 1, 64));
  im.server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  im.server.set_payload_max_length(kMaxPayloadBytes);
  im.server.set_read_timeout(5, 0);
  im.server.set_write_timeout(10, 0);
  im.server.set_keep_alive_max_count(1000);
  im.server.set_keep_alive_timeout(5);
  im.server.set_tcp_nodelay(true);
  // One server per port: httplib's default socket options add SO_REUSEPORT, with which a second
  // server binds a port already served and the kernel splits connections between the two.
  im.server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  im.Routes();
  if (im.options.port == 0) {
    im.port = im.server.bind_to_any_port(im.options.host);
    if (im.port <= 0) {
      return Status::IoError(fmt::format("cannot bind address '{}'", im.options.host));
    }
  } else {
    if (im.server.bind_to_port(im.options.host, im.options.port)) {
      im.port = im.options.port;
    } else if (im.options.fallback_to_any_port &&
               (im.port = im.server.bind_to_any_port(im.options.host)) > 0) {
      // bound to a free port instead
    } else {
      return Status::IoError(fmt::format("cannot bind {}:{} (address in use or not available)",
                                         im.options.host, im.options.port));
    }
  }
  // Returns once the server is accepting: httplib's stop() does nothing before its accept loop
  // runs, so a Stop() right after Start() would otherwise leave the thread serving forever.
  auto ended = std::make_shared<std::atomic<bool>>(false);
  im.thread = std::thread([&im, ended] {
    im.server.listen_after_bind();
    ended->store(true);
  });
  while (!im.server.is_running() && !ended->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  im.started = true;
  return Status::Ok();
}

void Explorer::Wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

void Explorer::Stop() {
  if (!impl_->started) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->started = false;
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
