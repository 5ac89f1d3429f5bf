// The Explorer's view endpoints end to end on loopback: search paging and match marks, the
// device view (engine lanes, utilisation, launch cost), the chain's per-lane instruction counts,
// the op table's kind column and the diff's device executions.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <simdjson.h>

#include <map>
#include <string>

#include "opscope/explorer.h"

namespace opscope {
namespace {

class ExplorerViewsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    explorer_ = new Explorer(ExplorerOptions{});
    SyntheticTraceOptions a;
    a.target_events = 4000;
    explorer_->AddTrace("a.json", MakeSyntheticNeuronTrace(a));
    SyntheticTraceOptions b;
    b.target_events = 2000;
    b.instructions_per_execution = 4;
    b.seed = 3;
    explorer_->AddTrace("b.json", MakeSyntheticNeuronTrace(b));
    const Status st = explorer_->Start();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  static void TearDownTestSuite() {
    delete explorer_;
    explorer_ = nullptr;
  }

  // GETs `path` (expecting 200) and parses it into `parser`.
  static simdjson::dom::element Get(simdjson::dom::parser& parser, const std::string& path) {
    httplib::Client client("127.0.0.1", explorer_->port());
    auto res = client.Get(path.c_str());
    EXPECT_TRUE(res && res->status == 200) << path << ": " << (res ? res->body : "no answer");
    body_ = res ? res->body : "{}";
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(body_).get(doc), simdjson::SUCCESS) << body_.substr(0, 200);
    return doc;
  }

  static int64_t FirstId(const std::string& query) {
    simdjson::dom::parser p;
    auto hit = Get(p, "/api/trace/0/search?regex=1&limit=1&q=" + query);
    return simdjson::dom::array(hit["events"]).at(0)["id"];
  }

  static Explorer* explorer_;
  static std::string body_;
};

Explorer* ExplorerViewsTest::explorer_ = nullptr;
std::string ExplorerViewsTest::body_;

TEST_F(ExplorerViewsTest, SearchPagesThroughEveryMatchInTimeOrder) {
  simdjson::dom::parser all_p, page_p;
  auto all = Get(all_p, "/api/trace/0/search?q=aten&limit=40");
  auto page = Get(page_p, "/api/trace/0/search?q=aten&offset=25&limit=10");
  EXPECT_EQ(int64_t(all["total"]), int64_t(page["total"]));
  EXPECT_EQ(int64_t(page["offset"]), 25);
  simdjson::dom::array a = all["events"], b = page["events"];
  ASSERT_EQ(b.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(int64_t(b.at(i)["id"]), int64_t(a.at(25 + i)["id"]));
  simdjson::dom::parser end_p;
  auto end = Get(end_p, "/api/trace/0/search?q=aten&offset=100000000&limit=10");
  EXPECT_EQ(simdjson::dom::array(end["events"]).size(), 0u);
}

// Text is found as pasted (no character is special), a kind narrows the matches, and the longest
// come first on request; marks follow the same filter.
TEST_F(ExplorerViewsTest, SearchFindsTextAsPastedByKindLongestFirst) {
  simdjson::dom::parser text_p, regex_p, paren_p;
  const int64_t text = Get(text_p, "/api/trace/0/search?q=aten%3A%3Am&limit=1")["total"];
  const int64_t regex = Get(regex_p, "/api/trace/0/search?regex=1&q=aten%3A%3Am&limit=1")["total"];
  EXPECT_GT(text, 0);
  EXPECT_EQ(text, regex) << "plain text finds what the same regular expression finds";
  // "(" and "*" are text: a name with them is found, none here has them, and it is no error.
  EXPECT_EQ(int64_t(Get(paren_p, "/api/trace/0/search?q=aten%3A%3Am(*&limit=1")["total"]), 0);
  simdjson::dom::parser all_p, ops_p, kern_p;
  const int64_t all = Get(all_p, "/api/trace/0/search?q=e&limit=1")["total"];
  auto ops = Get(ops_p, "/api/trace/0/search?q=e&kind=ops&limit=10000");
  auto kernels = Get(kern_p, "/api/trace/0/search?q=e&kind=kernels&limit=10000");
  const int64_t n_ops = ops["total"], n_kernels = kernels["total"];
  EXPECT_GT(n_ops, 0);
  EXPECT_GT(n_kernels, 0);
  EXPECT_LT(n_ops + n_kernels, all + 1);
  for (auto e : simdjson::dom::array(ops["events"])) {
    const std::string_view kind = e["kind"];
    EXPECT_TRUE(kind == "cpu_op" || kind == "user_annotation" || kind == "python_function") << kind;
  }
  for (auto e : simdjson::dom::array(kernels["events"])) {
    const std::string_view kind = e["kind"];
    EXPECT_TRUE(kind == "kernel" || kind == "instruction") << kind;
  }
  simdjson::dom::parser dur_p, page_p;
  auto longest = Get(dur_p, "/api/trace/0/search?q=e&sort=dur&limit=50");
  EXPECT_EQ(std::string_view(longest["order"]), "duration");
  int64_t previous = INT64_MAX;
  std::vector<int64_t> ids;
  for (auto e : simdjson::dom::array(longest["events"])) {
    EXPECT_LE(int64_t(e["dur"]), previous);
    previous = e["dur"];
    ids.push_back(e["id"]);
  }
  auto page = Get(page_p, "/api/trace/0/search?q=e&sort=dur&offset=20&limit=10");
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(int64_t(simdjson::dom::array(page["events"]).at(i)["id"]), ids[20 + i]);
  }
  simdjson::dom::parser mp;
  EXPECT_EQ(int64_t(Get(mp, "/api/trace/0/marks?q=e&kind=kernels&width=20000")["matches"]),
            n_kernels);
}

// Marks count every match in range however coarse the viewport, merging within a pixel.
TEST_F(ExplorerViewsTest, MarksCoverEveryMatch) {
  simdjson::dom::parser sp;
  const int64_t total = Get(sp, "/api/trace/0/search?regex=1&q=%5Eaten::m&limit=1")["total"];
  ASSERT_GT(total, 10);
  for (int width : {20, 500, 20000}) {
    simdjson::dom::parser mp;
    auto marks = Get(mp, fmt::format("/api/trace/0/marks?regex=1&q=%5Eaten::m&width={}", width));
    int64_t sum = 0;
    std::map<std::pair<int64_t, int64_t>, int64_t> per_row;
    for (auto lane : simdjson::dom::array(marks["lanes"])) {
      for (auto m : simdjson::dom::array(lane["items"])) {
        sum += int64_t(m.at(3));
        ++per_row[{int64_t(lane["lane"]), int64_t(m.at(2))}];
      }
    }
    EXPECT_EQ(sum, total) << "width " << width;
    EXPECT_EQ(int64_t(marks["matches"]), total);
    for (const auto& [row, n] : per_row) EXPECT_LE(n, width + 1) << "width " << width;
  }
  simdjson::dom::parser ep;
  auto exact = Get(ep, "/api/trace/0/marks?q=aten::mul&exact=1");
  simdjson::dom::parser cp;
  EXPECT_EQ(int64_t(exact["matches"]),
            int64_t(Get(cp, "/api/trace/0/search?q=aten::mul&exact=1")["total"]));
}

TEST_F(ExplorerViewsTest, DeviceViewOfAnExecution) {
  const int64_t mul = FirstId("%5Eaten::mul%24");
  simdjson::dom::parser p;
  auto d = Get(p, fmt::format("/api/trace/0/device/{}", mul));
  EXPECT_EQ(std::string_view(d["mode"]), "engines");
  EXPECT_EQ(std::string_view(d["execution"]["name"]), "nc_exec_running");
  const int64_t t0 = d["t0"], t1 = d["t1"];
  simdjson::dom::array lanes = d["lanes"], use = d["utilization"];
  ASSERT_EQ(lanes.size(), use.size());
  int64_t events = 0;
  for (auto u : use) {
    EXPECT_GE(int64_t(u["busy_ns"]), 0);
    EXPECT_LE(int64_t(u["busy_ns"]), t1 - t0);
    events += int64_t(u["events"]);
  }
  EXPECT_GT(events, 0);
  // The fixed launch cost runs from the execution's start to its first instruction.
  const int64_t launch_t0 = d["launch"]["t0"], launch_t1 = d["launch"]["t1"];
  EXPECT_EQ(launch_t0, t0);
  EXPECT_GT(launch_t1, launch_t0);
  EXPECT_LE(launch_t1, t1);
  EXPECT_EQ(std::string_view(simdjson::dom::array(d["ops"]).at(0)["name"]), "aten::mul");
}

TEST_F(ExplorerViewsTest, ChainCountsInstructionsPerLane) {
  simdjson::dom::parser p;
  auto chain = Get(p, fmt::format("/api/trace/0/chain/{}", FirstId("%5Eaten::mul%24")));
  bool seen = false;
  for (auto level : simdjson::dom::array(chain["levels"])) {
    if (std::string_view(level["key"]) != "instructions") continue;
    seen = true;
    int64_t sum = 0;
    for (auto g : simdjson::dom::array(level["by_lane"])) {
      EXPECT_GT(int64_t(g["count"]), 0);
      EXPECT_FALSE(std::string_view(g["title"]).empty());
      sum += int64_t(g["count"]);
    }
    EXPECT_EQ(sum, int64_t(level["total"]));
  }
  EXPECT_TRUE(seen) << body_;
}

TEST_F(ExplorerViewsTest, OpTableSaysWhatEachRowIs) {
  simdjson::dom::parser p;
  auto ops = Get(p, "/api/trace/0/ops");
  std::map<std::string, std::string> kind;
  for (auto r : simdjson::dom::array(ops["rows"])) {
    kind[std::string(std::string_view(r["name"]))] = std::string_view(r["kind"]);
  }
  EXPECT_EQ(kind["aten::mul"], "cpu op");
  EXPECT_EQ(kind["nrta_execute_schedule"], "runtime");
  EXPECT_EQ(kind["nc_exec_running"], "kernel");
  EXPECT_EQ(kind["RMSNorm"], "annotation");
}

TEST_F(ExplorerViewsTest, DiffCountsDeviceExecutionsPerOp) {
  simdjson::dom::parser p;
  auto diff = Get(p, "/api/diff?a=0&b=1");
  int64_t executions = 0;
  for (auto r : simdjson::dom::array(diff["rows"])) {
    executions += int64_t(r["executions_a"]) + int64_t(r["executions_b"]);
  }
  EXPECT_GT(executions, 0) << body_.substr(0, 400);
}

}  // namespace
}  // namespace opscope
