// HttpServer on Boost.Beast: one I/O thread runs every socket; handlers run on worker pools.
#include "explorer/http_server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace opscope::explorer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

namespace {

const std::string kEmpty;

std::string_view View(beast::string_view s) { return std::string_view(s.data(), s.size()); }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return out;
  size_t pos = 0;
  while (true) {
    const size_t slash = path.find('/', pos);
    out.push_back(path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return out;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string ErrorJson(int status, std::string_view message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) escaped += c;
  }
  return fmt::format("{{\"error\": \"{}\", \"status\": {}}}", escaped, status);
}

// Answers up to this size are never refused for buffering (errors, small JSON).
constexpr size_t kSmallAnswerBytes = size_t{64} << 10;
// Answers at least this large go back to the system once sent (see ReleaseAnswer).
constexpr size_t kReleaseAfterBytes = size_t{8} << 20;

// Frees a sent answer's body and hands free heap back to the system: glibc keeps freed blocks
// below its mmap threshold, so 60 answers of 15 MB to clients that never read left 1 GB of RSS
// after they were closed.
void ReleaseAnswer(http::response<http::string_body>* msg) {
  std::string().swap(msg->body());
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// A fixed pool of threads running queued tasks, taking the clients in turn: each client (its
// address) has its own queue, run in order, and the next task comes from the client after the
// one served last, so one client's many requests cannot make another's wait behind all of them.
class WorkerPool {
 public:
  ~WorkerPool() { Join(); }

  void Start(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
  }

  void Post(const std::string& client, std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      std::deque<std::function<void()>>& queue = queues_[client];
      if (queue.empty()) turns_.push_back(client);
      queue.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  // Drops queued tasks and lets each thread exit once its task returns. True when no task is
  // running by `until`.
  bool Stop(Clock::time_point until) {
    std::map<std::string, std::deque<std::function<void()>>> dropped;
    std::unique_lock<std::mutex> lock(mu_);
    stop_ = true;
    dropped.swap(queues_);
    turns_.clear();
    cv_.notify_all();
    const bool idle = idle_cv_.wait_until(lock, until, [this] { return running_ == 0; });
    lock.unlock();
    return idle;
  }

  void Join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

 private:
  // The next client's first task; its turn goes to the back while it has more. Caller holds mu_.
  std::function<void()> Next() {
    const std::string client = std::move(turns_.front());
    turns_.pop_front();
    auto it = queues_.find(client);
    std::function<void()> task = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      turns_.push_back(client);
    }
    return task;
  }

  void Run() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !turns_.empty(); });
        if (stop_) return;
        task = Next();
        ++running_;
      }
      task();
      task = nullptr;  // releases what the task held before it counts as done
      {
        std::lock_guard<std::mutex> lock(mu_);
        --running_;
      }
      idle_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::map<std::string, std::deque<std::function<void()>>> queues_;  // per client, in order
  std::deque<std::string> turns_;  // clients with queued tasks, the next to serve first
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class Connection;

}  // namespace

bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;
      const int hi = hex(text[i + 1]);
      const int lo = hex(text[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool HttpRequest::HasParam(std::string_view key) const {
  for (const auto& [k, v] : params) {
    if (k == key) return true;
  }
  return false;
}

const std::string& HttpRequest::Param(std::string_view key) const {
  for (const auto& [k, v] : params) {
    if (k == key) return v;
  }
  return kEmpty;
}

const std::string& HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return kEmpty;
}

bool HttpRequest::Cancelled() const {
  return control->cancelled.load(std::memory_order_relaxed) || Clock::now() > control->deadline;
}

Clock::time_point HttpRequest::deadline() const { return control->deadline; }

void HttpResponse::SetHeader(std::string name, std::string value) {
  for (auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

struct HttpServer::Impl {
  struct RouteEntry {
    std::vector<std::string> segments;
    HttpHandler handler;
    HttpCostFn heavy;
  };

  explicit Impl(HttpServerOptions o) : options(std::move(o)) {}

  Status Listen();
  // I/O thread.
  void Accept();
  void OnAccepted(tcp::socket socket);
  bool Evict(const std::string* peer);
  void Forget(uint64_t serial, const std::string& peer);
  const RouteEntry* Match(HttpRequest& req) const;

  HttpServerOptions options;
  std::vector<RouteEntry> routes;
  HttpHandler fallback;
  HttpFilter filter;

  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  asio::steady_timer accept_retry{ioc};
  std::thread io_thread;
  WorkerPool light_pool;
  WorkerPool heavy_pool;
  std::atomic<bool> stopping{false};
  bool started = false;
  int port = 0;

  // I/O thread only: open connections by age, and how many each client holds.
  std::map<uint64_t, std::shared_ptr<Connection>> connections;
  std::unordered_map<std::string, int> per_client;
  uint64_t next_serial = 0;

  struct AtomicStats {
    std::atomic<uint64_t> accepted{0}, refused{0}, evicted{0}, timed_out{0}, requests{0},
        cancelled{0}, shed{0};
  } stats;
  size_t buffered_bytes = 0;  // answers being written (I/O thread only; max_buffered_bytes)
};

namespace {

// One client connection. Lives on the I/O thread; owned by the server's table while open and by
// its pending operations and running handler.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class State { kIdle, kHead, kBusy, kClosed };

  Connection(HttpServer::Impl& server, tcp::socket socket, std::string peer, uint64_t serial)
      : server_(server),
        stream_(std::move(socket)),
        buffer_(server.options.max_head_bytes + server.options.max_body_bytes + 4096),
        peer_(std::move(peer)),
        serial_(serial) {}

  void Start() { WaitForRequest(); }
  State state() const { return state_; }
  const std::string& peer() const { return peer_; }

  // Closes the socket at once and cancels the running handler, if any.
  void Close() {
    if (state_ == State::kClosed) return;
    auto self = shared_from_this();
    state_ = State::kClosed;
    if (control_) control_->cancelled = true;
    ErrorCode ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    server_.Forget(serial_, peer_);
  }

 private:
  std::chrono::milliseconds Ms(int ms) const { return std::chrono::milliseconds(ms); }

  // Idle: wait for the first bytes of the next request (or use what is already buffered).
  void WaitForRequest() {
    state_ = State::kIdle;
    control_.reset();
    if (buffer_.size() > 0) {
      ReadHead();
      return;
    }
    stream_.expires_after(Ms(server_.options.idle_timeout_ms));
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](ErrorCode ec, size_t n) {
                              if (self->state_ == State::kClosed) return;
                              if (ec) {
                                if (ec == beast::error::timeout) ++self->server_.stats.timed_out;
                                self->Close();
                                return;
                              }
                              self->buffer_.commit(n);
                              self->ReadHead();
                            });
  }

  // The rest of the head (and body) under one deadline from its first byte.
  void ReadHead() {
    state_ = State::kHead;
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.options.max_head_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(Ms(server_.options.head_timeout_ms));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](ErrorCode ec, size_t) { self->OnHead(ec); });
  }

  void OnHead(ErrorCode ec) {
    if (state_ == State::kClosed) return;
    if (!ec) {
      Dispatch();
      return;
    }
    keep_alive_ = false;
    head_only_ = false;
    if (ec == beast::error::timeout) {
      ++server_.stats.timed_out;
      Close();
    } else if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      ReplyError(431, "request head too large");
    } else if (ec == http::error::body_limit) {
      ReplyError(413, "request body too large");
    } else if (ec == http::error::end_of_stream || ec == asio::error::eof ||
               ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
      Close();
    } else {
      ReplyError(400, fmt::format("malformed request: {}", ec.message()));
    }
  }

  // Builds the request; false (after answering) when it cannot be.
  bool Build(const http::request<http::string_body>& msg, HttpRequest* req) {
    req->method = std::string(View(msg.method_string()));
    req->target = std::string(View(msg.target()));
    req->peer = peer_;
    const std::string_view target = req->target;
    const size_t q = target.find('?');
    if (!PercentDecode(target.substr(0, q), false, &req->path) ||
        req->path.find('\0') != std::string::npos) {
      ReplyError(400, "malformed request path");
      return false;
    }
    if (q != std::string_view::npos) {
      std::string_view query = target.substr(q + 1);
      while (!query.empty()) {
        const size_t amp = query.find('&');
        std::string_view part = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (part.empty()) continue;
        const size_t eq = part.find('=');
        std::string key, value;
        if (!PercentDecode(part.substr(0, eq), true, &key) ||
            (eq != std::string_view::npos && !PercentDecode(part.substr(eq + 1), true, &value))) {
          ReplyError(400, "malformed query string");
          return false;
        }
        req->params.emplace_back(std::move(key), std::move(value));
      }
    }
    for (const auto& field : msg) {
      if (req->headers.size() >= server_.options.max_headers) {
        ReplyError(431, "too many request headers");
        return false;
      }
      std::string name(View(field.name_string()));
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      req->headers.emplace_back(std::move(name), std::string(View(field.value())));
    }
    return true;
  }

  void Dispatch() {
    state_ = State::kBusy;
    ++server_.stats.requests;
    const auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    head_only_ = msg.method() == http::verb::head;
    HttpRequest req;
    if (!Build(msg, &req)) return;
    control_ = req.control;
    control_->deadline = Clock::now() + Ms(server_.options.request_timeout_ms);
    HttpResponse res;
    if (server_.filter && !server_.filter(req, res)) {
      Reply(std::move(res));
      return;
    }
    if (msg.method() != http::verb::get && msg.method() != http::verb::head) {
      ReplyError(405, "only GET is supported", std::move(res));
      return;
    }
    const HttpServer::Impl::RouteEntry* route = server_.Match(req);
    const HttpHandler* handler = route ? &route->handler : &server_.fallback;
    if (!*handler) {
      ReplyError(404, "not found", std::move(res));
      return;
    }
    const bool heavy = route != nullptr && route->heavy && route->heavy(req);
    WatchClient();
    const std::string client = req.peer;
    auto task = [self = shared_from_this(), handler, req = std::move(req),
                 res = std::move(res)]() mutable { self->Run(*handler, req, res); };
    (heavy ? server_.heavy_pool : server_.light_pool).Post(client, std::move(task));
  }

  // Worker thread: runs the handler and hands the answer back to the I/O thread.
  void Run(const HttpHandler& handler, const HttpRequest& req, HttpResponse& res) {
    if (req.control->cancelled) return;  // the client left while the request was queued
    if (req.Cancelled()) {
      res.status = 503;
      res.body = ErrorJson(503, "server busy: the request waited past its deadline; retry");
    } else {
      try {
        handler(req, res);
      } catch (const std::exception& e) {
        res.status = 500;
        res.content_type = "application/json; charset=utf-8";
        res.body = ErrorJson(500, e.what());
      }
    }
    asio::post(server_.ioc, [self = shared_from_this(), res = std::move(res)]() mutable {
      self->Reply(std::move(res));
    });
  }

  // While a handler runs: a readable socket with nothing to read means the client has gone.
  void WatchClient() {
    stream_.socket().async_wait(
        tcp::socket::wait_read, [self = shared_from_this(), control = control_](ErrorCode ec) {
          if (ec || self->state_ != State::kBusy || self->control_ != control) return;
          char byte;
          const ssize_t n =
              ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n > 0) return;  // the next request is already arriving: keep going
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            self->WatchClient();
            return;
          }
          ++self->server_.stats.cancelled;
          self->Close();
        });
  }

  void ReplyError(int status, std::string_view message, HttpResponse res = {}) {
    res.status = status;
    res.content_type = "application/json; charset=utf-8";
    res.body = ErrorJson(status, message);
    if (status == 400 || status == 413 || status == 431) keep_alive_ = false;
    Reply(std::move(res));
  }

  void Reply(HttpResponse res) {
    if (state_ == State::kClosed) return;
    state_ = State::kBusy;
    ErrorCode ec;
    stream_.socket().cancel(ec);  // ends the client watch
    auto msg = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(res.status), 11);
    msg->set(http::field::content_type, beast::string_view(res.content_type));
    for (auto& [name, value] : res.headers) {
      msg->insert(beast::string_view(name.data(), name.size()), value);
    }
    msg->keep_alive(keep_alive_ && !server_.stopping);
    if (res.body.size() > kSmallAnswerBytes &&
        server_.buffered_bytes + res.body.size() > server_.options.max_buffered_bytes) {
      ++server_.stats.shed;
      res.body =
          ErrorJson(503, "server busy: too many large answers wait for their clients; retry");
      msg->result(http::status::service_unavailable);
      msg->set(http::field::content_type, "application/json; charset=utf-8");
    }
    const size_t buffered = res.body.size();
    server_.buffered_bytes += buffered;
    msg->body() = std::move(res.body);
    msg->prepare_payload();
    if (head_only_) {
      const size_t length = msg->body().size();
      msg->body().clear();
      msg->content_length(length);
    }
    stream_.expires_after(Ms(server_.options.write_timeout_ms));
    http::async_write(stream_, *msg,
                      [self = shared_from_this(), msg, buffered](ErrorCode ec, size_t) {
                        self->server_.buffered_bytes -= buffered;
                        if (buffered >= kReleaseAfterBytes) ReleaseAnswer(msg.get());
                        if (self->state_ == State::kClosed) return;
                        if (ec) {
                          self->Close();
                        } else if (!msg->keep_alive()) {
                          self->Linger();
                        } else {
                          self->WaitForRequest();
                        }
                      });
  }

  // Closes after the answer: stops sending, then reads and drops what the client still sends
  // (for at most a second) so the answer is not lost to a reset.
  void Linger() {
    if (!lingering_) {
      lingering_ = true;
      ErrorCode ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      if (ec) {
        Close();
        return;
      }
      stream_.expires_after(std::chrono::seconds(1));  // for all the reads that follow
    }
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](ErrorCode ec, size_t) {
                              if (self->state_ == State::kClosed) return;
                              if (ec) {
                                self->Close();
                              } else {
                                self->Linger();
                              }
                            });
  }

  HttpServer::Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<RequestControl> control_;  // of the request being served
  std::string peer_;
  uint64_t serial_;
  State state_ = State::kIdle;
  bool keep_alive_ = true;
  bool head_only_ = false;
  bool lingering_ = false;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept([this](ErrorCode ec, tcp::socket socket) {
    if (stopping) return;
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // Out of descriptors or a transient error: try again shortly instead of spinning.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](ErrorCode wait_ec) {
        if (!wait_ec && !stopping) Accept();
      });
      return;
    }
    OnAccepted(std::move(socket));
    Accept();
  });
}

void HttpServer::Impl::OnAccepted(tcp::socket socket) {
  ErrorCode ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;
  std::string peer = remote.address().to_string();
  const bool client_full = per_client[peer] >= options.max_connections_per_client;
  if ((client_full && !Evict(&peer)) ||
      (static_cast<int>(connections.size()) >= options.max_connections && !Evict(nullptr))) {
    ++stats.refused;
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  const uint64_t serial = next_serial++;
  auto c = std::make_shared<Connection>(*this, std::move(socket), peer, serial);
  connections.emplace(serial, c);
  ++per_client[peer];
  ++stats.accepted;
  c->Start();
}

bool HttpServer::Impl::Evict(const std::string* peer) {
  for (auto& [serial, c] : connections) {
    if (peer != nullptr && c->peer() != *peer) continue;
    if (c->state() == Connection::State::kIdle || c->state() == Connection::State::kHead) {
      ++stats.evicted;
      c->Close();
      return true;
    }
  }
  return false;
}

void HttpServer::Impl::Forget(uint64_t serial, const std::string& peer) {
  auto it = per_client.find(peer);
  if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
  connections.erase(serial);
}

const HttpServer::Impl::RouteEntry* HttpServer::Impl::Match(HttpRequest& req) const {
  const std::vector<std::string_view> parts = Segments(req.path);
  for (const RouteEntry& route : routes) {
    if (route.segments.size() != parts.size()) continue;
    bool ok = true;
    std::vector<std::string> captures;
    for (size_t i = 0; i < parts.size() && ok; ++i) {
      if (route.segments[i] == "{n}") {
        ok = AllDigits(parts[i]);
        if (ok) captures.emplace_back(parts[i]);
      } else {
        ok = route.segments[i] == parts[i];
      }
    }
    if (ok) {
      req.captures = std::move(captures);
      return &route;
    }
  }
  return nullptr;
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() {
  Stop(std::chrono::hours(24));
  impl_->light_pool.Join();
  impl_->heavy_pool.Join();
}

void HttpServer::Route(std::string pattern, HttpHandler handler, HttpCostFn heavy) {
  Impl::RouteEntry e;
  for (std::string_view s : Segments(pattern)) e.segments.emplace_back(s);
  e.handler = std::move(handler);
  e.heavy = std::move(heavy);
  impl_->routes.push_back(std::move(e));
}

void HttpServer::SetFallback(HttpHandler handler) { impl_->fallback = std::move(handler); }
void HttpServer::SetFilter(HttpFilter filter) { impl_->filter = std::move(filter); }

// Binds exclusively: SO_REUSEADDR only lets a restarted server bind past TIME_WAIT; without
// SO_REUSEPORT no other socket can listen on the port while this one does.
Status HttpServer::Impl::Listen() {
  ErrorCode ec;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) {
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(options.host, "", ec);
    if (ec || results.empty()) {
      return Status::InvalidArgument(fmt::format("cannot resolve host '{}'", options.host));
    }
    address = results.begin()->endpoint().address();
  }
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(options.port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) return Status::Ok();
  ErrorCode ignored;
  acceptor.close(ignored);
  if (ec == asio::error::address_in_use) {
    return Status::IoError(fmt::format(
        "port {} on {} is already in use (another opscope explore?): choose another with "
        "--port N, or --port 0 for any free port",
        options.port, options.host));
  }
  return Status::IoError(
      fmt::format("cannot listen on {} port {}: {}", options.host, options.port, ec.message()));
}

Status HttpServer::Start() {
  Impl& im = *impl_;
  if (im.started) return Status::Ok();
  const HttpServerOptions& o = im.options;
  if (o.port < 0 || o.port > 65535) {
    return Status::InvalidArgument(
        fmt::format("port {} is out of range (0-65535; 0 picks a free port)", o.port));
  }
  Status st = im.Listen();
  if (!st.ok()) return st;
  im.port = im.acceptor.local_endpoint().port();
  im.light_pool.Start(std::max(1, o.workers));
  im.heavy_pool.Start(std::max(1, o.heavy_workers));
  im.work.emplace(im.ioc.get_executor());
  im.Accept();
  im.io_thread = std::thread([&im] { im.ioc.run(); });
  im.started = true;
  return Status::Ok();
}

bool HttpServer::Stop(std::chrono::milliseconds grace) {
  Impl& im = *impl_;
  if (!im.started) return true;
  const auto until = Clock::now() + grace;
  im.stopping = true;
  asio::post(im.ioc, [&im] {
    ErrorCode ec;
    im.acceptor.close(ec);
    im.accept_retry.cancel();
    std::vector<std::shared_ptr<Connection>> open;
    for (auto& [serial, c] : im.connections) open.push_back(c);
    for (auto& c : open) c->Close();
    im.work.reset();
    im.ioc.stop();
  });
  if (im.io_thread.joinable()) im.io_thread.join();
  const bool light_done = im.light_pool.Stop(until);
  const bool heavy_done = im.heavy_pool.Stop(until);
  im.started = false;
  return light_done && heavy_done;
}

int HttpServer::port() const { return impl_->port; }

HttpServerStats HttpServer::stats() const {
  const auto& s = impl_->stats;
  return {s.accepted.load(), s.refused.load(),   s.evicted.load(), s.timed_out.load(),
          s.requests.load(), s.cancelled.load(), s.shed.load()};
}

}  // namespace opscope::explorer
