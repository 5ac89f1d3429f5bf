// HttpServer: the Explorer's HTTP/1.1 connection layer (Boost.Beast over Asio; see
// docs/explorer-server.md for why), independent of what the routes answer.
//
//   explorer::HttpServer server({.host = "127.0.0.1", .port = 0});
//   server.Route("/api/trace/{n}/lanes", [](const HttpRequest& req, HttpResponse& res) {...});
//   opscope::Status st = server.Start();   // the message names the address and port
//   ...
//   server.Stop(std::chrono::seconds(1));
//
// Connections are served by one event-driven I/O thread, so an idle or slow connection costs a
// socket and a few KiB, never a thread. Every request head (and its small body) must arrive
// within `head_timeout_ms` of its first byte; a connection that sends nothing for
// `idle_timeout_ms` is closed; each client address holds at most `max_connections_per_client`
// connections and the server at most `max_connections` (a new connection past a limit closes the
// oldest connection of that client, or of any client, that is not running a request; with none
// to close it is refused). Handlers run on a pool of `workers` threads; routes marked heavy run
// on a separate pool of `heavy_workers`, so heavy requests cannot occupy every worker; each pool
// takes the clients (addresses) in turn, so one client's queued requests cannot make another's
// wait behind all of them. While a
// handler runs, the server watches its connection: when the client disconnects, the server
// stops, or the request's deadline passes, HttpRequest::Cancelled() turns true and long
// handlers are expected to check it and return.
//
// Thread safety: Route/SetFilter/SetFallback before Start; Start and Stop from one thread; Stop
// may run while requests are in flight. Handlers and the filter may run concurrently with each
// other (the filter on the I/O thread, handlers on the pools).
#ifndef OPSCOPE_EXPLORER_HTTP_SERVER_H_
#define OPSCOPE_EXPLORER_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/status.h"

namespace opscope::explorer {

// What the server knows about one request's lifetime; shared by the connection and the handler.
struct RequestControl {
  std::atomic<bool> cancelled{false};  // client gone or server stopping
  std::chrono::steady_clock::time_point deadline;
};

class HttpRequest {
 public:
  std::string method;                 // "GET", "HEAD", ...
  std::string target;                 // as sent: path and query, still percent-encoded
  std::string path;                   // percent-decoded, without the query
  std::vector<std::string> captures;  // the path segments matched by "{n}" in the route
  std::string peer;                   // the client's address
  std::vector<std::pair<std::string, std::string>> params;   // decoded query parameters
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased

  bool HasParam(std::string_view key) const;
  // The first value of `key`, or "" when absent.
  const std::string& Param(std::string_view key) const;
  // The first value of header `name` (any case), or "" when absent.
  const std::string& Header(std::string_view name) const;

  // True once the client has gone, the server is stopping or the deadline has passed.
  bool Cancelled() const;
  std::chrono::steady_clock::time_point deadline() const;

  std::shared_ptr<RequestControl> control = std::make_shared<RequestControl>();
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // added to the answer as they are

  void SetHeader(std::string name, std::string value);
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
// Returns true when the request must go to the heavy pool.
using HttpCostFn = std::function<bool(const HttpRequest&)>;
// Runs on the I/O thread before routing; returns false when it has answered (in `res`). Headers
// it adds to `res` stay on the handler's answer.
using HttpFilter = std::function<bool(const HttpRequest&, HttpResponse&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = any free port
  int workers = 8;
  int heavy_workers = 2;
  int max_connections = 512;
  int max_connections_per_client = 64;
  int head_timeout_ms = 10000;     // whole request head (and body), from its first byte
  int idle_timeout_ms = 30000;     // between requests on a kept-alive connection
  int write_timeout_ms = 30000;    // whole answer
  int request_timeout_ms = 60000;  // queueing + handler, then Cancelled()
  size_t max_head_bytes = 16 * 1024;
  size_t max_body_bytes = 64 * 1024;
  size_t max_headers = 64;
  // Bytes of answers handed to connections and not yet sent, all connections together: a large
  // answer (over 64 KiB) past it gets 503 at once, so clients that ask and do not read cannot
  // make the server hold their answers without bound.
  size_t max_buffered_bytes = size_t{256} << 20;
};

// Counters for tests and benchmarks (monotonic since Start).
struct HttpServerStats {
  uint64_t accepted = 0;
  uint64_t refused = 0;    // closed at once: every connection of the client was busy
  uint64_t evicted = 0;    // idle or slow connections closed to make room
  uint64_t timed_out = 0;  // head or idle deadline passed
  uint64_t requests = 0;
  uint64_t cancelled = 0;  // requests whose client left before the answer
  uint64_t shed = 0;       // large answers refused (503) past max_buffered_bytes
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();  // stops and waits for every handler

  // A GET (and HEAD) route. Pattern segments are literal or "{n}" (one segment of decimal digits,
  // appended to HttpRequest::captures). `heavy` (optional) says per request whether it runs on
  // the heavy pool.
  void Route(std::string pattern, HttpHandler handler, HttpCostFn heavy = {});
  // Answers every GET that no route matches (404 when unset).
  void SetFallback(HttpHandler handler);
  void SetFilter(HttpFilter filter);

  // Binds `host:port` exclusively (never shared with another process) and starts serving.
  // kIoError naming the address and port when it cannot bind (kInvalidArgument for a bad port or
  // host).
  Status Start();
  // Stops accepting, closes every connection and cancels running handlers; returns true when
  // they all returned within `grace` (the rest are waited for by the destructor).
  bool Stop(std::chrono::milliseconds grace);

  int port() const;
  HttpServerStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Percent-decodes `text` ('+' as a space when `plus_is_space`); false on a bad escape.
bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_HTTP_SERVER_H_
