// The Explorer's HTTP API, end to end on loopback: every endpoint, bad parameters, traversal
// attempts, malformed requests, the access token, and concurrent clients.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/json_writer.h"
#include "explorer/op_table.h"
#include "explorer/trace_index.h"
#include "opscope/explorer.h"

namespace opscope {
namespace {

constexpr int64_t kEvents = 3000;

// Sends raw bytes to the server and returns everything it answers (until it closes or 2 s pass).
// The write side stays open: the server treats a half-closed socket as a client that went away.
std::string SendRaw(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(response.c_str() + 9);
}

bool IsValidJson(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return parser.parse(body).get(doc) == simdjson::SUCCESS;
}

class ExplorerApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    explorer_ = new Explorer(ExplorerOptions{});
    SyntheticTraceOptions a;
    a.target_events = kEvents;
    explorer_->AddTrace("a.json", MakeSyntheticNeuronTrace(a), "/tmp/a.json");
    SyntheticTraceOptions b;
    b.target_events = kEvents / 2;
    b.seed = 7;
    explorer_->AddTrace("b.json", MakeSyntheticNeuronTrace(b), "/tmp/b.json");
    const Status st = explorer_->Start();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  static void TearDownTestSuite() {
    delete explorer_;
    explorer_ = nullptr;
  }

  // GETs `path`; expects `status` and, for 200, valid JSON. Returns the parsed body text.
  static std::string Get(const std::string& path, int status = 200) {
    httplib::Client client("127.0.0.1", explorer_->port());
    auto res = client.Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    if (res->get_header_value("Content-Type").rfind("application/json", 0) == 0) {
      EXPECT_TRUE(IsValidJson(res->body)) << path << ": " << res->body.substr(0, 200);
    }
    return res->body;
  }

  static simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& body) {
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(body).get(doc), simdjson::SUCCESS);
    return doc;
  }

  static Explorer* explorer_;
};

Explorer* ExplorerApiTest::explorer_ = nullptr;

TEST_F(ExplorerApiTest, InfoListsTraces) {
  simdjson::dom::parser p;
  auto doc = Parse(p, Get("/api/info"));
  simdjson::dom::array traces = doc["traces"];
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(std::string_view(traces.at(0)["name"]), "a.json");
  EXPECT_GT(int64_t(traces.at(0)["slices"]), kEvents / 2);
}

TEST_F(ExplorerApiTest, LanesHaveTheNeuronGroups) {
  simdjson::dom::parser p;
  auto doc = Parse(p, Get("/api/trace/0/lanes"));
  std::vector<std::string> keys;
  for (auto g : simdjson::dom::array(doc["groups"])) keys.emplace_back(std::string_view(g["key"]));
  EXPECT_EQ(keys,
            (std::vector<std::string>{"framework", "runtime", "hardware", "engines", "counters"}));
  EXPECT_TRUE(bool(doc["trace"]["neuron"]));
}

TEST_F(ExplorerApiTest, ViewportConservesEventsAndBoundsItems) {
  simdjson::dom::parser p;
  auto lanes = Parse(p, Get("/api/trace/0/lanes"));
  std::map<int64_t, int64_t> events_per_lane;
  for (auto g : simdjson::dom::array(lanes["groups"])) {
    for (auto l : simdjson::dom::array(g["lanes"])) {
      if (!bool(l["counter"])) events_per_lane[int64_t(l["id"])] = int64_t(l["events"]);
    }
  }
  const int64_t t0 = lanes["trace"]["start_ns"];
  const int64_t t1 = lanes["trace"]["end_ns"];
  for (int width : {10, 200, 3000}) {
    simdjson::dom::parser vp;
    auto v = Parse(
        vp, Get(fmt::format("/api/trace/0/viewport?t0={}&t1={}&width={}", t0, t1 + 1, width)));
    for (auto lane : simdjson::dom::array(v["lanes"])) {
      int64_t count = 0;
      std::map<int64_t, int64_t> items_per_row;
      for (auto item : simdjson::dom::array(lane["items"])) {
        count += int64_t(item.at(5));
        ++items_per_row[int64_t(item.at(2))];
      }
      // Every event is either drawn or inside one merged block...
      EXPECT_EQ(count, events_per_lane[int64_t(lane["lane"])]) << "width " << width;
      // ...and a row never has more than two items per pixel.
      for (auto [row, n] : items_per_row) EXPECT_LE(n, 2 * width + 2) << "row " << row;
    }
  }
}

TEST_F(ExplorerApiTest, ZoomedViewportReturnsSingleSlices) {
  simdjson::dom::parser p;
  auto hit = Parse(p, Get("/api/trace/0/search?regex=1&q=%5Eaten::mul%24&limit=1"));
  auto ev = simdjson::dom::array(hit["events"]).at(0);
  const int64_t ts = ev["ts"];
  const int64_t dur = ev["dur"];
  const int64_t lane = ev["lane"];
  simdjson::dom::parser vp;
  auto v = Parse(vp, Get(fmt::format("/api/trace/0/viewport?t0={}&t1={}&width=1000&lanes={}",
                                     ts - dur, ts + 2 * dur, lane)));
  simdjson::dom::array strings = v["strings"];
  bool found = false;
  for (auto item : simdjson::dom::array(simdjson::dom::array(v["lanes"]).at(0)["items"])) {
    EXPECT_EQ(int64_t(item.at(5)), 1);  // nothing is merged at this zoom
    if (int64_t(item.at(4)) == int64_t(ev["id"])) {
      found = true;
      EXPECT_EQ(std::string_view(strings.at(size_t(int64_t(item.at(3))))), "aten::mul");
    }
  }
  EXPECT_TRUE(found);
}

// flat=1 (what the pages ask for): the same items, each lane's one after another, "stride" 9.
TEST_F(ExplorerApiTest, FlatViewportHasTheSameItems) {
  simdjson::dom::parser p, q;
  auto nested = Parse(p, Get("/api/trace/0/viewport?width=700"));
  auto flat = Parse(q, Get("/api/trace/0/viewport?width=700&flat=1"));
  EXPECT_EQ(int64_t(flat["stride"]), 9);
  EXPECT_FALSE(nested["stride"].error() == simdjson::SUCCESS);
  simdjson::dom::array nested_lanes = nested["lanes"];
  simdjson::dom::array flat_lanes = flat["lanes"];
  ASSERT_EQ(flat_lanes.size(), nested_lanes.size());
  size_t items = 0;
  for (size_t l = 0; l < nested_lanes.size(); ++l) {
    EXPECT_EQ(int64_t(flat_lanes.at(l)["lane"]), int64_t(nested_lanes.at(l)["lane"]));
    simdjson::dom::array want = nested_lanes.at(l)["items"];
    simdjson::dom::array got = flat_lanes.at(l)["items"];
    ASSERT_EQ(got.size(), want.size() * 9);
    for (size_t i = 0; i < want.size(); ++i, ++items) {
      for (size_t k = 0; k < 9; ++k)
        EXPECT_EQ(int64_t(got.at(i * 9 + k)), int64_t(want.at(i).at(k)));
    }
  }
  EXPECT_GT(items, 0u);
  EXPECT_EQ(simdjson::to_string(flat["strings"]), simdjson::to_string(nested["strings"]));
}

TEST_F(ExplorerApiTest, BadParametersGet400) {
  Get("/api/trace/0/viewport?t0=10&t1=5", 400);
  Get("/api/trace/0/viewport?width=0", 400);
  Get("/api/trace/0/viewport?width=abc", 400);
  Get("/api/trace/0/viewport?t0=1e3", 400);
  Get("/api/trace/0/viewport?lanes=999999", 400);
  Get("/api/trace/0/viewport?lanes=1,,2", 400);
  Get("/api/trace/7/lanes", 400);
  Get("/api/trace/99999999999999999999999/lanes", 400);
  Get("/api/trace/0/slice/123456789", 400);
  Get("/api/trace/0/chain/-1", 404);
  Get("/api/trace/0/search", 400);
  Get("/api/trace/0/search?regex=1&q=(", 400);
  Get("/api/trace/0/search?regex=1&q=" + std::string(300, 'a'), 400);
  Get("/api/trace/0/search?q=" + std::string(9000, 'a'), 400);
  Get("/api/trace/0/search?q=a&kind=nope", 400);
  Get("/api/trace/0/search?q=a&sort=size", 400);
  Get("/api/trace/0/marks?q=a&kind=nope", 400);
  Get("/api/trace/0/select?limit=0", 400);
  Get("/api/trace/0/ops?shapes=2", 400);
  Get("/api/trace/0/memory?samples=2", 400);
  Get("/api/trace/0/memory?samples=yes", 400);
  Get("/api/trace/7/memory", 400);
  Get("/api/diff?a=0&b=5", 400);
  Get("/api/nothing", 404);
}

TEST_F(ExplorerApiTest, SliceDetails) {
  simdjson::dom::parser p;
  auto hit = Parse(p, Get("/api/trace/0/search?q=nc_exec_running&limit=1"));
  const int64_t id = simdjson::dom::array(hit["events"]).at(0)["id"];
  simdjson::dom::parser sp;
  auto s = Parse(sp, Get(fmt::format("/api/trace/0/slice/{}", id)));
  EXPECT_EQ(std::string_view(s["name"]), "nc_exec_running");
  EXPECT_EQ(std::string_view(s["kind"]), "kernel");
  EXPECT_EQ(std::string_view(s["runtime_call"]["name"]), "nrta_execute_schedule");
  EXPECT_EQ(std::string_view(s["launched_by"]["name"]).substr(0, 6), "aten::");
}

TEST_F(ExplorerApiTest, ChainOfAnOpReachesInstructions) {
  simdjson::dom::parser p;
  auto hit = Parse(p, Get("/api/trace/0/search?regex=1&q=%5Eaten::mul%24&limit=1"));
  const int64_t id = simdjson::dom::array(hit["events"]).at(0)["id"];
  simdjson::dom::parser cp;
  auto chain = Parse(cp, Get(fmt::format("/api/trace/0/chain/{}", id)));
  std::map<std::string, std::string> first_name;
  std::map<std::string, std::string> role;
  for (auto level : simdjson::dom::array(chain["levels"])) {
    const std::string key{std::string_view(level["key"])};
    first_name[key] = std::string_view(simdjson::dom::array(level["events"]).at(0)["name"]);
    role[key] = std::string_view(level["role"]);
  }
  EXPECT_EQ(first_name["enclosing"], "RMSNorm");
  EXPECT_EQ(role["enclosing"], "upstream");
  EXPECT_EQ(first_name["framework"], "aten::mul");
  EXPECT_EQ(role["framework"], "selected");
  EXPECT_EQ(first_name["runtime"], "nrta_execute_schedule");
  EXPECT_EQ(first_name["hardware"], "nc_exec_running");
  EXPECT_EQ(role["hardware"], "downstream");
  EXPECT_EQ(role["instructions"], "downstream");
  EXPECT_GE(simdjson::dom::array(chain["edges"]).size(), 3u);
}

TEST_F(ExplorerApiTest, ChainOfAnInstructionWalksUp) {
  simdjson::dom::parser p;
  auto hit = Parse(p, Get("/api/trace/0/search?regex=1&q=%5EMatMult%24&limit=1"));
  const int64_t id = simdjson::dom::array(hit["events"]).at(0)["id"];
  simdjson::dom::parser cp;
  auto chain = Parse(cp, Get(fmt::format("/api/trace/0/chain/{}", id)));
  std::map<std::string, std::string> role;
  for (auto level : simdjson::dom::array(chain["levels"])) {
    role[std::string(std::string_view(level["key"]))] = std::string_view(level["role"]);
  }
  EXPECT_EQ(role["framework"], "upstream");
  EXPECT_EQ(role["runtime"], "upstream");
  EXPECT_EQ(role["hardware"], "upstream");
  EXPECT_EQ(role["instructions"], "selected");
}

TEST_F(ExplorerApiTest, OpTableSearchSelectionSummaryDeviceAndDiff) {
  simdjson::dom::parser p;
  auto ops = Parse(p, Get("/api/trace/0/ops"));
  int64_t mul_count = 0, mean_count = 0;
  for (auto r : simdjson::dom::array(ops["rows"])) {
    if (std::string_view(r["name"]) == "aten::mul") mul_count = r["count"];
    if (std::string_view(r["name"]) == "aten::mean") mean_count = r["count"];
  }
  EXPECT_GT(mean_count, 0);
  EXPECT_EQ(mul_count, 2 * mean_count);

  simdjson::dom::parser sp;
  auto search = Parse(sp, Get("/api/trace/0/search?regex=1&q=aten::m(ul%7Cean)&limit=5"));
  EXPECT_EQ(int64_t(search["total"]), 3 * mean_count);
  EXPECT_EQ(simdjson::dom::array(search["events"]).size(), 5u);

  simdjson::dom::parser selp;
  auto sel = Parse(selp, Get("/api/trace/0/select"));
  EXPECT_GT(int64_t(sel["events"]), kEvents / 2);

  simdjson::dom::parser sump;
  auto summary = Parse(sump, Get("/api/trace/0/summary"));
  bool rms_finding = false;
  for (auto f : simdjson::dom::array(summary["findings"])) {
    rms_finding |= std::string_view(f).find("One RMSNorm call takes 6 device executions") !=
                   std::string_view::npos;
  }
  EXPECT_TRUE(rms_finding) << Get("/api/trace/0/summary");

  simdjson::dom::parser hp;
  auto hit = Parse(hp, Get("/api/trace/0/search?regex=1&q=%5Eaten::mul%24&limit=1"));
  const int64_t id = simdjson::dom::array(hit["events"]).at(0)["id"];
  simdjson::dom::parser dp;
  auto device = Parse(dp, Get(fmt::format("/api/trace/0/device/{}", id)));
  EXPECT_EQ(std::string_view(device["execution"]["name"]), "nc_exec_running");
  EXPECT_EQ(simdjson::dom::array(device["lanes"]).size(), 5u);
  EXPECT_EQ(std::string_view(simdjson::dom::array(device["ops"]).at(0)["name"]), "aten::mul");

  simdjson::dom::parser fp;
  auto diff = Parse(fp, Get("/api/diff?a=0&b=1"));
  EXPECT_GT(simdjson::dom::array(diff["rows"]).size(), 0u);

  // The op table of a sub-range has fewer calls than the whole trace.
  simdjson::dom::parser lp;
  auto lanes = Parse(lp, Get("/api/trace/0/lanes"));
  const int64_t t0 = lanes["trace"]["start_ns"];
  const int64_t t1 = lanes["trace"]["end_ns"];
  simdjson::dom::parser op2;
  auto part = Parse(op2, Get(fmt::format("/api/trace/0/ops?t0={}&t1={}", t0, t0 + (t1 - t0) / 4)));
  for (auto r : simdjson::dom::array(part["rows"])) {
    if (std::string_view(r["name"]) == "aten::mean") {
      EXPECT_LT(int64_t(r["count"]), mean_count);
    }
  }
}

TEST_F(ExplorerApiTest, ServesTheUi) {
  httplib::Client client("127.0.0.1", explorer_->port());
  auto index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("opscope Explorer"), std::string::npos);
  auto js = client.Get("/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
}

// Viewport answers go out uncompressed: gzip costs far more than the loopback transfer saves.
TEST_F(ExplorerApiTest, ApiAnswersAreNotCompressed) {
  const std::string response =
      SendRaw(explorer_->port(),
              "GET /api/trace/0/viewport HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip, "
              "deflate\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(response), 200);
  EXPECT_EQ(response.find("Content-Encoding"), std::string::npos) << response.substr(0, 300);
}

TEST_F(ExplorerApiTest, NothingOutsideTheUiIsServed) {
  for (const char* path :
       {"/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
        "/index.html/../../../etc/passwd", "/api/../../etc/passwd", "//etc/passwd", "/etc/passwd",
        "/%2fetc%2fpasswd", "/api/trace/0/../../../../etc/passwd", "/.%2e/.%2e/tmp/a.json",
        "/tmp/a.json", "/a.json"}) {
    const std::string response =
        SendRaw(explorer_->port(), std::string("GET ") + path +
                                       " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const int status = StatusOf(response);
    EXPECT_GE(status, 400) << path << " answered: " << response.substr(0, 300);
    EXPECT_LT(status, 500) << path;
    EXPECT_EQ(response.find("root:"), std::string::npos) << path;
  }
}

TEST_F(ExplorerApiTest, MalformedRequestsGet4xx) {
  const int port = explorer_->port();
  EXPECT_EQ(StatusOf(SendRaw(port,
                             "POST /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                             "close\r\nContent-Length: 2\r\n\r\n{}")),
            405);
  std::string many = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (int i = 0; i < 200; ++i) many += fmt::format("X-H{}: {}\r\n", i, i);
  EXPECT_EQ(StatusOf(SendRaw(port, many + "\r\n")), 431);
  const int garbage = StatusOf(SendRaw(port, "HELLO\r\n\r\n"));
  EXPECT_TRUE(garbage == 0 || (garbage >= 400 && garbage < 500)) << garbage;
  const int long_uri =
      StatusOf(SendRaw(port, "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(long_uri == 0 || (long_uri >= 400 && long_uri < 500)) << long_uri;
  // A declared body larger than the limit is refused before it is read.
  const int big_body = StatusOf(SendRaw(port,
                                        "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                                        "close\r\nContent-Length: 100000000\r\n\r\nxx"));
  EXPECT_EQ(big_body, 413);
  // Requests addressed to another host name (DNS rebinding) are refused on loopback.
  EXPECT_EQ(
      StatusOf(SendRaw(
          port, "GET /api/info HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n")),
      403);
  // The server is still fine.
  Get("/api/info");
}

// A page on another site cannot use the API (the browser would send the request).
TEST_F(ExplorerApiTest, CrossSiteApiRequestsAreRefused) {
  const int port = explorer_->port();
  auto status_with = [&](const std::string& path, const std::string& headers) {
    return StatusOf(SendRaw(port, "GET " + path +
                                      " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                      "\r\n" + headers + "Connection: close\r\n\r\n"));
  };
  EXPECT_EQ(status_with("/api/info", "Origin: https://evil.example\r\n"), 403);
  EXPECT_EQ(status_with("/api/trace/0/search?q=x", "Sec-Fetch-Site: cross-site\r\n"), 403);
  EXPECT_EQ(status_with("/api/info", "Sec-Fetch-Site: same-site\r\n"), 403);
  EXPECT_EQ(status_with("/api/info", "Origin: null\r\n"), 403);
  EXPECT_EQ(status_with("/api/info", "Sec-Fetch-Site: same-origin\r\nOrigin: http://127.0.0.1:" +
                                         std::to_string(port) + "\r\n"),
            200);
  EXPECT_EQ(status_with("/api/info", "Sec-Fetch-Site: none\r\n"), 200);
  EXPECT_EQ(status_with("/api/info", ""), 200);  // curl, scripts
  // Opening the UI from a link on another site is fine; only the API is guarded.
  EXPECT_EQ(status_with("/", "Sec-Fetch-Site: cross-site\r\n"), 200);
}

// Patterns that take std::regex exponential time are linear in RE2: several at once answer
// quickly and leave the server responsive.
TEST_F(ExplorerApiTest, PathologicalSearchesDoNotTieUpTheServer) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 9; ++i) {
    threads.emplace_back([&] {
      httplib::Client client("127.0.0.1", explorer_->port());
      client.set_read_timeout(5, 0);
      auto res = client.Get("/api/trace/0/search?regex=1&q=%28.%2A%29%7B20%7Dx");  // (.*){20}x
      if (res && res->status == 200 && IsValidJson(res->body)) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 9);
  simdjson::dom::parser p;
  auto doc = Parse(p, Get("/api/trace/0/search?regex=1&q=%28a%7Caa%29%2A%28a%7Caa%29%2Ab&limit=1"));
  EXPECT_TRUE(bool(doc["complete"]));
  Get("/api/info");
}

// The earliest `limit` matches come back in time order, whatever the limit.
TEST_F(ExplorerApiTest, SearchKeepsTheEarliestMatches) {
  simdjson::dom::parser p5, pall;
  auto five = Parse(p5, Get("/api/trace/0/search?q=aten&limit=5"));
  auto all = Parse(pall, Get("/api/trace/0/search?q=aten&limit=10000"));
  EXPECT_EQ(int64_t(five["total"]), int64_t(all["total"]));
  simdjson::dom::array few = five["events"];
  simdjson::dom::array many = all["events"];
  ASSERT_EQ(few.size(), 5u);
  ASSERT_EQ(many.size(), std::min<size_t>(10000, size_t(int64_t(all["total"]))));
  int64_t last_ts = INT64_MIN;
  for (size_t i = 0; i < many.size(); ++i) {
    EXPECT_GE(int64_t(many.at(i)["ts"]), last_ts);
    last_ts = many.at(i)["ts"];
    if (i < 5) {
      EXPECT_EQ(int64_t(few.at(i)["id"]), int64_t(many.at(i)["id"]));
    }
  }
}

// A time range's op table is aggregated over the index; it must equal the table of a trace
// holding only that range's slices (built by copying, the way it used to be computed).
TEST_F(ExplorerApiTest, OpsOfATimeRangeEqualTheTableOfTheCopiedRange) {
  SyntheticTraceOptions a;
  a.target_events = kEvents;
  const Trace same = MakeSyntheticNeuronTrace(a);  // trace 0, generated again
  const explorer::TraceIndex index(same);
  const int64_t span = index.end_ns() - index.start_ns();
  for (int part = 0; part < 6; ++part) {
    const int64_t t0 = index.start_ns() + span * part / 7 + 333;
    const int64_t t1 = t0 + span / (part + 2);
    for (int shapes : {0, 1}) {
      JsonWriter expected;
      explorer::WriteOpTable(explorer::SliceTimeRange(same, t0, t1), shapes == 1, &expected);
      // The API's times count from the trace's start.
      EXPECT_EQ(Get(fmt::format("/api/trace/0/ops?t0={}&t1={}&shapes={}", index.ToApi(t0),
                                index.ToApi(t1), shapes)),
                expected.str())
          << "range " << part << " shapes " << shapes;
    }
  }
}

TEST(ExplorerPortTest, BusyPortIsAClearErrorNamingIt) {
  Explorer first(ExplorerOptions{});
  ASSERT_TRUE(first.Start().ok());
  ExplorerOptions same;
  same.port = first.port();
  Explorer second(same);
  const Status st = second.Start();
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_NE(st.message().find(fmt::format("port {}", first.port())), std::string::npos)
      << st.message();
  same.fallback_to_any_port = true;
  Explorer third(same);
  ASSERT_TRUE(third.Start().ok());
  EXPECT_NE(third.port(), first.port());
}

TEST_F(ExplorerApiTest, ConcurrentClients) {
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < 8; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", explorer_->port());
      for (int i = 0; i < 25; ++i) {
        const std::string path =
            (i % 3 == 0)   ? fmt::format("/api/trace/{}/viewport?width={}", c % 2, 100 + i)
            : (i % 3 == 1) ? fmt::format("/api/trace/0/chain/{}", (c * 97 + i * 31) % 1000)
                           : std::string("/api/trace/1/summary");
        auto res = client.Get(path.c_str());
        if (res && res->status == 200 && IsValidJson(res->body))
          ++ok;
        else
          ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), 8 * 25);
}

TEST(ExplorerTokenTest, TokenIsRequiredOnEveryRequest) {
  ExplorerOptions options;
  options.token = "s3cret-token-0123456789";
  Explorer explorer(options);
  SyntheticTraceOptions small;
  small.target_events = 200;
  explorer.AddTrace("t", MakeSyntheticNeuronTrace(small));
  const Status st = explorer.Start();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_NE(explorer.Url().find("?token=s3cret-token-0123456789"), std::string::npos);
  httplib::Client client("127.0.0.1", explorer.port());
  EXPECT_EQ(client.Get("/api/info")->status, 401);
  EXPECT_EQ(client.Get("/")->status, 401);
  EXPECT_EQ(client.Get("/api/info?token=wrong")->status, 401);
  // A page opened with ?token= sets the cookie and is sent to its address without the token.
  auto with_query = client.Get("/?token=s3cret-token-0123456789&x=1");
  ASSERT_TRUE(with_query);
  EXPECT_EQ(with_query->status, 303);
  EXPECT_EQ(with_query->get_header_value("Location"), "/?x=1");
  EXPECT_NE(
      with_query->get_header_value("Set-Cookie").find("opscope_token=s3cret-token-0123456789"),
      std::string::npos);
  EXPECT_EQ(client.Get("/api/info?token=s3cret-token-0123456789")->status, 200);
  EXPECT_EQ(client.Get("/api/info", {{"X-Opscope-Token", "s3cret-token-0123456789"}})->status, 200);
  EXPECT_EQ(client.Get("/", {{"Cookie", "a=b; opscope_token=s3cret-token-0123456789"}})->status,
            200);
  EXPECT_EQ(client.Get("/api/info", {{"Cookie", "opscope_token=s3cret-token-012345678x"}})->status,
            401);
}

TEST(ExplorerTokenTest, ShortTokensAreRefused) {
  ExplorerOptions options;
  options.token = "x";
  Explorer explorer(options);
  const Status st = explorer.Start();
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("at least 16 characters"), std::string::npos) << st.message();
}

// Eight (and more) connections trickling headers without a token do not lock out the holder.
TEST(ExplorerTokenTest, SlowTokenlessClientsDoNotLockOutTheTokenHolder) {
  ExplorerOptions options;
  options.token = "s3cret-token-0123456789";
  options.threads = 2;
  Explorer explorer(options);
  SyntheticTraceOptions small;
  small.target_events = 200;
  explorer.AddTrace("t", MakeSyntheticNeuronTrace(small));
  const Status st = explorer.Start();
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(explorer.port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    send(fd, "GET /api/info HTTP/1.1\r\nX-Slow: 1\r\n", 36, MSG_NOSIGNAL);
    slow.push_back(fd);
  }
  httplib::Client client("127.0.0.1", explorer.port());
  client.set_read_timeout(2, 0);
  for (int i = 0; i < 10; ++i) {
    auto res = client.Get("/api/info", {{"X-Opscope-Token", "s3cret-token-0123456789"}});
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200);
  }
  for (int fd : slow) close(fd);
}

TEST(ExplorerTokenTest, NonLoopbackHostGetsAGeneratedToken) {
  ExplorerOptions options;
  options.host = "0.0.0.0";
  Explorer explorer(options);
  SyntheticTraceOptions small;
  small.target_events = 100;
  explorer.AddTrace("t", MakeSyntheticNeuronTrace(small));
  const Status st = explorer.Start();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(explorer.token().size(), 32u);
  httplib::Client client("127.0.0.1", explorer.port());
  EXPECT_EQ(client.Get("/api/info")->status, 401);
  EXPECT_EQ(client.Get("/api/info", {{"X-Opscope-Token", explorer.token()}})->status, 200);
}

TEST(ExplorerStartTest, BadPortAndTakenAddressAreStatusErrors) {
  ExplorerOptions bad;
  bad.port = 70000;
  Explorer out_of_range(bad);
  Status st = out_of_range.Start();
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("port 70000 is out of range"), std::string::npos) << st.message();

  Explorer first(ExplorerOptions{});
  ASSERT_TRUE(first.Start().ok());
  ExplorerOptions same;
  same.port = first.port();
  Explorer second(same);
  st = second.Start();
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_NE(st.message().find(fmt::format("port {} on 127.0.0.1 is already in use", first.port())),
            std::string::npos)
      << st.message();
  same.fallback_to_any_port = true;
  Explorer third(same);
  ASSERT_TRUE(third.Start().ok());
  EXPECT_NE(third.port(), first.port());
}

TEST(ExplorerHostTest, Loopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("127example.com"));
  EXPECT_FALSE(IsLoopbackHost("127.evil.example.com"));
}

}  // namespace
}  // namespace opscope
