// HttpServer over real loopback sockets: routing, limits (head deadline, idle timeout, per-client
// cap), slow clients that must not starve others, cancellation when the client leaves or the
// server stops, the heavy pool, and the exclusive bind. Every wait is bounded.
#include "explorer/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace opscope::explorer {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A connected loopback socket (-1 on failure) with a receive timeout.
int Connect(int port, int recv_timeout_ms = 3000) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{recv_timeout_ms / 1000, (recv_timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// A loopback socket connected from `from` (another client address, e.g. 127.0.0.2).
int ConnectFrom(const char* from, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, from, &local.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the server closes, the timeout passes, or `until` appears in what was read.
std::string ReadSome(int fd, std::string_view until = {}) {
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (!until.empty() && out.find(until) != std::string::npos) break;
  }
  return out;
}

// True when the server has closed the connection (recv returns 0 or a reset) within the timeout.
bool ClosedByServer(int fd) {
  char buf[256];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

bool WaitFor(const std::atomic<bool>& flag, milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (!flag && Clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  return flag;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("/echo/{n}/x", [](const HttpRequest& req, HttpResponse& res) {
      res.content_type = "text/plain";
      res.body = fmt::format("{}|{}|{}", req.captures.at(0), req.Param("q"), req.path);
    });
    server_->Route("/wait", [this](const HttpRequest& req, HttpResponse& res) {
      ++waiting_;
      while (!req.Cancelled() && !release_) std::this_thread::sleep_for(milliseconds(2));
      if (req.Cancelled()) saw_cancel_ = true;
      --waiting_;
      res.body = "{}";
    });
    server_->Route(
        "/heavy",
        [this](const HttpRequest& req, HttpResponse& res) {
          while (!req.Cancelled() && !release_) std::this_thread::sleep_for(milliseconds(2));
          res.body = "{}";
        },
        [](const HttpRequest&) { return true; });
    server_->Route(
        "/turn/{n}",
        [this](const HttpRequest& req, HttpResponse& res) {
          std::lock_guard<std::mutex> lock(turns_mu_);
          turns_.push_back(std::stoi(req.captures.at(0)));
          res.body = "{}";
        },
        [](const HttpRequest&) { return true; });
    server_->Route("/big", [](const HttpRequest&, HttpResponse& res) {
      res.content_type = "text/plain";
      res.body.assign(size_t{32} << 20, 'x');
    });
    const Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void TearDown() override {
    release_ = true;
    server_.reset();
  }
  std::string Get(const std::string& path, int* status = nullptr) {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(3, 0);
    auto res = client.Get(path.c_str());
    if (status) *status = res ? res->status : 0;
    return res ? res->body : std::string();
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<bool> release_{false};
  std::atomic<bool> saw_cancel_{false};
  std::atomic<int> waiting_{0};
  std::mutex turns_mu_;
  std::vector<int> turns_;  // the /turn/{n} requests in the order they ran
};

TEST_F(HttpServerTest, RoutesCapturesAndDecodedParameters) {
  StartServer();
  int status = 0;
  const int fd = Connect(server_->port());
  SendAll(fd, "GET /echo/42/x?q=a%20b+c&z=1 HTTP/1.1\r\nConnection: close\r\n\r\n");
  const std::string raw = ReadSome(fd);
  close(fd);
  EXPECT_TRUE(raw.ends_with("\r\n\r\n42|a b c|/echo/42/x")) << raw;
  Get("/echo/4a/x", &status);
  EXPECT_EQ(status, 404);  // {n} matches digits only
  Get("/nothing", &status);
  EXPECT_EQ(status, 404);
  Get("/echo/1/x?q=%zz", &status);
  EXPECT_EQ(status, 400);
}

TEST_F(HttpServerTest, MalformedAndOversizedRequestsGet4xx) {
  StartServer({.max_head_bytes = 2048, .max_body_bytes = 100});
  auto status_of = [&](const std::string& raw) {
    const int fd = Connect(server_->port());
    SendAll(fd, raw);
    const std::string answer = ReadSome(fd);
    close(fd);
    return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
  };
  EXPECT_EQ(status_of("GET /" + std::string(4000, 'a') + " HTTP/1.1\r\n\r\n"), 431);
  EXPECT_EQ(status_of("GET /echo/1/x HTTP/1.1\r\nContent-Length: 5000\r\n\r\nxx"), 413);
  EXPECT_EQ(status_of("HELLO\r\n\r\n"), 400);
  EXPECT_EQ(
      status_of("POST /echo/1/x HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"),
      405);
  std::string many = "GET /echo/1/x HTTP/1.1\r\n";
  for (int i = 0; i < 70; ++i) many += fmt::format("X-{}: {}\r\n", i, i);
  EXPECT_EQ(status_of(many + "\r\n"), 431);
}

// A head sent one line at a time is cut at the deadline for the whole head, though each line
// arrives well within any per-read timeout.
TEST_F(HttpServerTest, HeadDeadlineCoversTheWholeHead) {
  StartServer({.head_timeout_ms = 300});
  const int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  bool cut = false;
  SendAll(fd, "GET /echo/1/x HTTP/1.1\r\n");
  for (int i = 0; i < 40 && !cut; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    cut = !SendAll(fd, fmt::format("X-Line-{}: {}\r\n", i, i));
  }
  EXPECT_TRUE(cut || ClosedByServer(fd));
  EXPECT_LT(Clock::now() - start, milliseconds(2000));  // 40 lines would take 2 s
  close(fd);
  EXPECT_GE(server_->stats().timed_out, 1u);
}

TEST_F(HttpServerTest, IdleConnectionsAreClosed) {
  StartServer({.idle_timeout_ms = 200});
  const int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(ClosedByServer(fd));  // within the 3 s receive timeout
  close(fd);
}

// Slowloris: many connections trickling heads hold no worker; a normal client is served.
TEST_F(HttpServerTest, SlowClientsDoNotStarveOthers) {
  StartServer({.workers = 2, .max_connections_per_client = 1000});
  std::vector<int> slow;
  for (int i = 0; i < 150; ++i) {
    const int fd = Connect(server_->port());
    ASSERT_GE(fd, 0);
    SendAll(fd, "GET /echo/1/x HTTP/1.1\r\nX-Slow: 1\r\n");
    slow.push_back(fd);
  }
  httplib::Client client("127.0.0.1", server_->port());
  client.set_read_timeout(2, 0);
  for (int i = 0; i < 20; ++i) {
    auto res = client.Get(fmt::format("/echo/{}/x", i).c_str());
    ASSERT_TRUE(res) << "request " << i;
    EXPECT_EQ(res->status, 200);
    for (int fd : slow) SendAll(fd, "X-More: 1\r\n");
  }
  for (int fd : slow) close(fd);
}

// Past the per-client cap, a new connection closes that client's oldest idle one; when every
// connection is running a request, the new one is refused.
TEST_F(HttpServerTest, ConnectionsPerClientAreCapped) {
  StartServer({.max_connections_per_client = 3});
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(Connect(server_->port()));
  int status = 0;
  EXPECT_EQ(Get("/echo/7/x", &status), "7||/echo/7/x");
  EXPECT_GE(server_->stats().evicted, 1u);
  EXPECT_TRUE(ClosedByServer(idle[0]));
  for (int fd : idle) close(fd);

  std::vector<int> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(Connect(server_->port()));
    SendAll(busy.back(), "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  const auto until = Clock::now() + milliseconds(3000);
  while (waiting_ < 3 && Clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(waiting_.load(), 3);
  const int refused = Connect(server_->port());
  EXPECT_TRUE(ClosedByServer(refused));
  EXPECT_GE(server_->stats().refused, 1u);
  close(refused);
  release_ = true;
  for (int fd : busy) {
    EXPECT_NE(ReadSome(fd, "{}").find("200 OK"), std::string::npos);
    close(fd);
  }
}

TEST_F(HttpServerTest, ClientThatLeavesCancelsItsRequest) {
  StartServer();
  const int fd = Connect(server_->port());
  SendAll(fd, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto until = Clock::now() + milliseconds(3000);
  while (waiting_ == 0 && Clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(waiting_.load(), 1);
  close(fd);
  EXPECT_TRUE(WaitFor(saw_cancel_, milliseconds(3000)));
}

TEST_F(HttpServerTest, StopCancelsRunningRequests) {
  StartServer();
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) {
    fds.push_back(Connect(server_->port()));
    SendAll(fds.back(), "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  const auto until = Clock::now() + milliseconds(3000);
  while (waiting_ < 4 && Clock::now() < until) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(waiting_.load(), 4);
  EXPECT_TRUE(server_->Stop(milliseconds(1000)));
  EXPECT_TRUE(saw_cancel_);
  for (int fd : fds) {
    EXPECT_TRUE(ClosedByServer(fd));
    close(fd);
  }
}

// Heavy requests queue on their own pool; light ones are still answered.
TEST_F(HttpServerTest, HeavyRequestsCannotTakeEveryWorker) {
  StartServer({.workers = 2, .heavy_workers = 1});
  std::vector<int> heavy;
  for (int i = 0; i < 6; ++i) {
    heavy.push_back(Connect(server_->port()));
    SendAll(heavy.back(), "GET /heavy HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (int i = 0; i < 5; ++i) {
    int status = 0;
    EXPECT_EQ(Get(fmt::format("/echo/{}/x", i), &status), fmt::format("{}||/echo/{}/x", i, i));
  }
  release_ = true;
  for (int fd : heavy) {
    EXPECT_NE(ReadSome(fd, "{}").find("200 OK"), std::string::npos);
    close(fd);
  }
}

// Clients that ask for large answers and do not read cannot make the server hold them without
// bound: past max_buffered_bytes a large answer is a 503 at once, and the room comes back when
// the reader leaves.
TEST_F(HttpServerTest, AnswersWaitingForSlowReadersAreBounded) {
  HttpServerOptions options;
  options.max_buffered_bytes = size_t{40} << 20;
  StartServer(options);
  const int stalled = Connect(server_->port());
  ASSERT_TRUE(SendAll(stalled, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  char first[16];
  ASSERT_GT(recv(stalled, first, sizeof(first), 0), 0);  // its answer is being written
  const int second = Connect(server_->port());
  ASSERT_TRUE(SendAll(second, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(ReadSome(second, "retry").find("503"), std::string::npos);
  EXPECT_EQ(server_->stats().shed, 1u);
  close(second);
  close(stalled);  // the stalled answer's write fails and its room comes back
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    const std::string body = Get("/big", &status);
    if (status != 200) std::this_thread::sleep_for(milliseconds(20));
    if (status == 200) {
      EXPECT_EQ(body.size(), size_t{32} << 20);
    }
  }
  EXPECT_EQ(status, 200);
}

// The heavy pool takes clients in turn: one client's queued requests do not make another's wait
// behind all of them (three of 127.0.0.1's queued before 127.0.0.2's one: it runs second).
TEST_F(HttpServerTest, HeavyPoolTakesClientsInTurn) {
  HttpServerOptions options;
  options.heavy_workers = 1;
  StartServer(options);
  const int gate = Connect(server_->port());  // holds the only heavy worker until release_
  ASSERT_TRUE(SendAll(gate, "GET /heavy HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::this_thread::sleep_for(milliseconds(100));
  std::vector<int> fds;
  for (int n : {1, 2, 3, 9}) {
    fds.push_back(n == 9 ? ConnectFrom("127.0.0.2", server_->port()) : Connect(server_->port()));
    ASSERT_GE(fds.back(), 0);
    ASSERT_TRUE(SendAll(fds.back(), fmt::format("GET /turn/{} HTTP/1.1\r\nHost: x\r\n\r\n", n)));
    std::this_thread::sleep_for(milliseconds(50));  // queued in this order
  }
  release_ = true;
  for (int fd : fds) {
    EXPECT_NE(ReadSome(fd, "{}").find("200 OK"), std::string::npos);
    close(fd);
  }
  close(gate);
  std::lock_guard<std::mutex> lock(turns_mu_);
  EXPECT_EQ(turns_, (std::vector<int>{1, 9, 2, 3}));
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  StartServer();
  httplib::Client client("127.0.0.1", server_->port());
  client.set_keep_alive(true);
  for (int i = 0; i < 50; ++i) {
    auto res = client.Get(fmt::format("/echo/{}/x", i).c_str());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
  EXPECT_EQ(server_->stats().accepted, 1u);
}

// The port is bound exclusively: a second server, or any socket with SO_REUSEPORT, cannot share
// it (two servers would split one client's requests between them).
TEST_F(HttpServerTest, PortIsBoundExclusively) {
  StartServer();
  HttpServer second({.port = server_->port()});
  const Status st = second.Start();
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_NE(st.message().find(fmt::format("port {}", server_->port())), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("in use"), std::string::npos) << st.message();

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_NE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);
}

TEST(PercentDecodeTest, DecodesAndRejects) {
  std::string out;
  EXPECT_TRUE(PercentDecode("a%2Fb+c", true, &out));
  EXPECT_EQ(out, "a/b c");
  EXPECT_TRUE(PercentDecode("a+b", false, &out));
  EXPECT_EQ(out, "a+b");
  EXPECT_FALSE(PercentDecode("%", false, &out));
  EXPECT_FALSE(PercentDecode("%4", false, &out));
  EXPECT_FALSE(PercentDecode("%g1", false, &out));
}

}  // namespace
}  // namespace opscope::explorer
