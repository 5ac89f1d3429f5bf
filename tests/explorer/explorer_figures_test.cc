// The Explorer's numbers are the CLI's, on every shared fixture trace and on the demo profile:
// /api/trace/N/summary's "figures" equal `opscope report --json` key for key and value for value,
// the op table's rows are the report's key_averages rows, and /api/diff is `opscope diff --json`.
// The findings cite those figures: the idle gaps add up to the timeline's idle time, no finding
// says "0 calls", and the busy finding quotes the timeline's activity count.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <simdjson.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "opscope/import.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;

// stdout of `opscope ARGS` (stderr dropped); empty when it fails.
std::string Cli(const std::string& args) {
  testing::CommandResult r = testing::RunOpscope(args);
  return r.exit_code == 0 ? std::move(r.output) : std::string();
}

// Exact structural equality: same keys in the same order, same values; `why` says where not.
bool SameJson(element a, element b, const std::string& path, std::string* why) {
  if (a.type() != b.type()) {
    *why = path + ": different types";
    return false;
  }
  switch (a.type()) {
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object x = a, y = b;
      if (x.size() != y.size()) {
        *why = fmt::format("{}: {} keys vs {}", path, x.size(), y.size());
        return false;
      }
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (i.key() != j.key()) {
          *why = fmt::format("{}: key {} vs {}", path, i.key(), j.key());
          return false;
        }
        if (!SameJson(i.value(), j.value(), path + "." + std::string(i.key()), why)) return false;
      }
      return true;
    }
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array x = a, y = b;
      if (x.size() != y.size()) {
        *why = fmt::format("{}: {} items vs {}", path, x.size(), y.size());
        return false;
      }
      for (size_t k = 0; k < x.size(); ++k) {
        if (!SameJson(x.at(k), y.at(k), fmt::format("{}[{}]", path, k), why)) return false;
      }
      return true;
    }
    case simdjson::dom::element_type::DOUBLE:
      if (double(a) == double(b)) return true;
      break;
    case simdjson::dom::element_type::INT64:
      if (int64_t(a) == int64_t(b)) return true;
      break;
    case simdjson::dom::element_type::UINT64:
      if (uint64_t(a) == uint64_t(b)) return true;
      break;
    case simdjson::dom::element_type::STRING:
      if (std::string_view(a) == std::string_view(b)) return true;
      break;
    case simdjson::dom::element_type::BOOL:
      if (bool(a) == bool(b)) return true;
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      return true;
  }
  *why = path + ": different values";
  return false;
}

class ExplorerFiguresTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* fixtures = std::getenv("OPSCOPE_FIXTURES_DIR");
    ASSERT_TRUE(fixtures != nullptr && fs::is_directory(fixtures))
        << "OPSCOPE_FIXTURES_DIR is not set or missing (run through ctest)";
    demo_ = fs::temp_directory_path() / fmt::format("opscope_figures_{}", getpid());
    ASSERT_FALSE(Cli(fmt::format("demo rmsnorm --iters 3 --out '{}'", demo_.string())).empty());
    explorer_ = new Explorer(ExplorerOptions{});
    for (const std::string& dir : {demo_.string(), std::string(fixtures) + "/traces"}) {
      std::vector<std::string> found;
      const Status listed = FindTraces(dir, &found);
      ASSERT_TRUE(listed.ok()) << listed.message();
      for (const std::string& f : found) {
        Trace trace;
        const Status imported = ImportTrace(f, &trace);
        // A fixture that is not a valid trace (XPlaneTpuFixtureTest covers the corrupt XSpace
        // there) has no figures to compare; the demo's traces must all open.
        if (!imported.ok() && dir != demo_.string()) continue;
        ASSERT_TRUE(imported.ok()) << f << ": " << imported.message();
        explorer_->AddTrace(f, std::move(trace), f);
        files_.push_back(f);
      }
    }
    ASSERT_GE(files_.size(), 12u) << "the 3 demo traces and the fixtures";
    const Status started = explorer_->Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  static void TearDownTestSuite() {
    delete explorer_;
    explorer_ = nullptr;
    fs::remove_all(demo_);
  }

  static std::string Api(const std::string& path) {
    httplib::Client client("127.0.0.1", explorer_->port());
    client.set_read_timeout(60, 0);
    auto res = client.Get(path.c_str());
    EXPECT_TRUE(res && res->status == 200) << path;
    return res ? res->body : std::string();
  }

  static Explorer* explorer_;
  static std::vector<std::string> files_;
  static fs::path demo_;
};

Explorer* ExplorerFiguresTest::explorer_ = nullptr;
std::vector<std::string> ExplorerFiguresTest::files_;
fs::path ExplorerFiguresTest::demo_;

TEST_F(ExplorerFiguresTest, SummaryFiguresAreTheReportJson) {
  for (size_t i = 0; i < files_.size(); ++i) {
    // The summary's tables have the report's 20 rows (the CLI's --json gives every row unless
    // --rows is given).
    const std::string cli = Cli("report --json --rows 20 '" + files_[i] + "'");
    const std::string api = Api(fmt::format("/api/trace/{}/summary", i));
    simdjson::dom::parser pc, pa;
    element c, a;
    ASSERT_EQ(pc.parse(cli).get(c), simdjson::SUCCESS) << files_[i];
    ASSERT_EQ(pa.parse(api).get(a), simdjson::SUCCESS) << files_[i];
    std::string why;
    EXPECT_TRUE(SameJson(a["figures"], c, "figures", &why)) << files_[i] << ": " << why;
  }
}

// The op table's rows (ns) are the report's key_averages rows (us, 3 decimals), all of them.
TEST_F(ExplorerFiguresTest, OpTableRowsAreTheReportsKeyAverages) {
  for (size_t i = 0; i < files_.size(); ++i) {
    const std::string cli = Cli("report --json --rows -1 '" + files_[i] + "'");
    const std::string api = Api(fmt::format("/api/trace/{}/ops", i));
    simdjson::dom::parser pc, pa;
    element c, a;
    ASSERT_EQ(pc.parse(cli).get(c), simdjson::SUCCESS) << files_[i];
    ASSERT_EQ(pa.parse(api).get(a), simdjson::SUCCESS) << files_[i];
    using Key = std::tuple<std::string, bool, bool>;
    std::map<Key, element> rows;
    for (element r : simdjson::dom::array(a["rows"])) {
      rows[{std::string(std::string_view(r["name"])), bool(r["is_device"]),
            bool(r["user_annotation"])}] = r;
    }
    simdjson::dom::array report_rows = c["key_averages"]["rows"];
    EXPECT_EQ(report_rows.size(), rows.size()) << files_[i];
    for (element r : report_rows) {
      const Key key{std::string(std::string_view(r["name"])), bool(r["is_device"]),
                    bool(r["is_user_annotation"])};
      ASSERT_TRUE(rows.count(key)) << files_[i] << ": " << std::get<0>(key);
      element o = rows[key];
      EXPECT_EQ(int64_t(r["count"]), int64_t(o["count"])) << std::get<0>(key);
      for (const auto& [us, ns] : {std::pair{"self_cpu_time_total_us", "self_cpu_ns"},
                                   {"cpu_time_total_us", "cpu_total_ns"},
                                   {"self_device_time_total_us", "self_device_ns"},
                                   {"device_time_total_us", "device_total_ns"}}) {
        EXPECT_EQ(fmt::format("{:.3f}", double(r[us])),
                  fmt::format("{:.3f}", static_cast<double>(int64_t(o[ns])) / 1000.0))
            << files_[i] << ": " << std::get<0>(key) << " " << us;
      }
    }
  }
}

TEST_F(ExplorerFiguresTest, DiffIsTheCliDiff) {
  // The demo's naive -> compiled, and two fixtures of one kind (ROCm -> MI300 CUDA-style).
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < files_.size(); ++i)
    index[fs::path(files_[i]).parent_path().filename()] = i;
  ASSERT_TRUE(index.count("naive") && index.count("compiled"));
  const std::vector<std::pair<size_t, size_t>> pairs = {{index["naive"], index["compiled"]},
                                                        {files_.size() - 2, files_.size() - 1}};
  for (const auto& [x, y] : pairs) {
    const std::string cli = Cli("diff --json '" + files_[x] + "' '" + files_[y] + "'");
    const std::string api = Api(fmt::format("/api/diff?a={}&b={}", x, y));
    simdjson::dom::parser pc, pa;
    element c, a;
    ASSERT_EQ(pc.parse(cli).get(c), simdjson::SUCCESS) << files_[x];
    ASSERT_EQ(pa.parse(api).get(a), simdjson::SUCCESS);
    std::string why;
    EXPECT_TRUE(SameJson(a, c, "diff", &why)) << files_[x] << " -> " << files_[y] << ": " << why;
  }
}

// Every diff row is the report's key_averages host row on each side (calls, host time, device
// total), no row counts "0 -> 0" calls, and the executions add up to each timeline's activities.
// Naive -> compiled keeps the compiled region and its runtime call.
TEST_F(ExplorerFiguresTest, DiffRowsAreTheReportsRows) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < files_.size(); ++i)
    index[fs::path(files_[i]).parent_path().filename()] = i;
  const std::vector<std::pair<size_t, size_t>> pairs = {{index["naive"], index["compiled"]},
                                                        {index["fused"], index["naive"]},
                                                        {files_.size() - 2, files_.size() - 1}};
  for (const auto& [x, y] : pairs) {
    simdjson::dom::parser pa, pd, pr[2];
    element report[2];
    for (int side = 0; side < 2; ++side) {
      const std::string cli = Cli("report --json --rows -1 '" + files_[side ? y : x] + "'");
      ASSERT_EQ(pr[side].parse(cli).get(report[side]), simdjson::SUCCESS);
    }
    element diff;
    ASSERT_EQ(pd.parse(Api(fmt::format("/api/diff?a={}&b={}", x, y))).get(diff), simdjson::SUCCESS);
    // name -> (count, cpu total us, device total us) of the report's host rows.
    std::map<std::string, std::tuple<int64_t, double, double>> host[2];
    for (int side = 0; side < 2; ++side) {
      for (element r : simdjson::dom::array(report[side]["key_averages"]["rows"])) {
        if (bool(r["is_device"])) continue;
        auto& [count, cpu, device] = host[side][std::string(std::string_view(r["name"]))];
        count += int64_t(r["count"]);
        cpu += double(r["cpu_time_total_us"]);
        device += double(r["device_time_total_us"]);
      }
    }
    int64_t executions[2] = {0, 0};
    bool region = false, runtime_counted = true;
    for (element d : simdjson::dom::array(diff["rows"])) {
      const std::string name{std::string_view(d["name"])};
      const char* ab[2] = {"a", "b"};
      EXPECT_GT(int64_t(d["calls_a"]) + int64_t(d["calls_b"]), 0) << name;
      for (int side = 0; side < 2; ++side) {
        const auto it = host[side].find(name);
        const auto [count, cpu, device] =
            it == host[side].end() ? std::tuple<int64_t, double, double>{} : it->second;
        EXPECT_EQ(int64_t(d[fmt::format("calls_{}", ab[side])]), count) << name;
        EXPECT_EQ(
            fmt::format("{:.3f}", double(int64_t(d[fmt::format("cpu_ns_{}", ab[side])])) / 1e3),
            fmt::format("{:.3f}", cpu))
            << name;
        EXPECT_EQ(
            fmt::format("{:.3f}",
                        double(int64_t(d[fmt::format("device_total_ns_{}", ab[side])])) / 1e3),
            fmt::format("{:.3f}", device))
            << name;
        executions[side] += int64_t(d[fmt::format("executions_{}", ab[side])]);
        if (int64_t(d[fmt::format("executions_{}", ab[side])]) > 0 && count == 0)
          runtime_counted = false;
      }
      if (name.starts_with("Torch-Compiled Region")) {
        region = true;
        EXPECT_GT(int64_t(d["device_total_ns_b"]), 0) << name;
      }
    }
    EXPECT_TRUE(runtime_counted) << "a launcher with executions and no calls";
    if (x == index["naive"] && y == index["compiled"]) {
      EXPECT_TRUE(region) << "the compiled region is a row of the diff";
      // Every device activity of either trace is launched by a row that changed here.
      for (int side = 0; side < 2; ++side) {
        element tl = report[side]["device_timeline"];
        EXPECT_EQ(executions[side], int64_t(tl["activities"]));
      }
      EXPECT_GT(executions[0], executions[1]) << "compile() fuses device executions";
    }
  }
}

// /api/trace/N/memory?samples=1 is `report --memory --json`'s "memory", and each memory lane
// carries its device's peak, peak time and holders; a whole-trace viewport draws the peak
// exactly, in the bucket that holds the peak's time. Both MI300 fixtures have [memory] events.
TEST_F(ExplorerFiguresTest, MemoryLanesAreTheReportsMemoryTimeline) {
  int with_memory = 0;
  for (size_t i = 0; i < files_.size(); ++i) {
    const std::string cli = Cli("report --memory --json '" + files_[i] + "'");
    simdjson::dom::parser pc, pa, pl, pv;
    element c, a, l, v;
    ASSERT_EQ(pc.parse(cli).get(c), simdjson::SUCCESS) << files_[i];
    ASSERT_EQ(pa.parse(Api(fmt::format("/api/trace/{}/memory?samples=1", i))).get(a),
              simdjson::SUCCESS);
    std::string why;
    EXPECT_TRUE(SameJson(a, c["memory"], "memory", &why)) << files_[i] << ": " << why;
    simdjson::dom::array devices = c["memory"]["devices"];
    if (devices.size() == 0) continue;
    ++with_memory;
    // The memory lanes: the hardware group's nested "memory" group, in the report's order.
    ASSERT_EQ(pl.parse(Api(fmt::format("/api/trace/{}/lanes", i))).get(l), simdjson::SUCCESS);
    std::vector<element> lanes;
    for (element g : simdjson::dom::array(l["groups"])) {
      if (std::string_view(g["key"]) != "hardware") continue;
      for (element n : simdjson::dom::array(g["groups"])) {
        for (element lane : simdjson::dom::array(n["lanes"])) lanes.push_back(lane);
      }
    }
    ASSERT_EQ(lanes.size(), devices.size()) << files_[i];
    // The report's times are the trace's own; the API's count from the trace's start.
    const int64_t origin = std::stoll(std::string(std::string_view(l["trace"]["origin_ns"])));
    for (size_t d = 0; d < lanes.size(); ++d) {
      element dev = devices.at(d), m = lanes[d]["memory"];
      EXPECT_EQ(std::string_view(lanes[d]["title"]),
                "Memory: " + std::string(std::string_view(dev["device"])));
      for (const char* key : {"peak_allocated", "peak_reserved"}) {
        EXPECT_EQ(int64_t(m[key]), int64_t(dev[key])) << files_[i] << " " << key;
      }
      const int64_t peak_ts = int64_t(dev["peak_ts_ns"]) - origin;
      EXPECT_EQ(int64_t(m["peak_ts_ns"]), peak_ts) << files_[i];
      EXPECT_TRUE(SameJson(m["holders_at_peak"], dev["holders_at_peak"], "holders", &why))
          << files_[i] << ": " << why;
      // The whole trace in 800 px: the highest bucket is the peak, and holds its time.
      const int64_t lane = int64_t(lanes[d]["id"]);
      ASSERT_EQ(
          pv.parse(Api(fmt::format("/api/trace/{}/viewport?width=800&lanes={}", i, lane))).get(v),
          simdjson::SUCCESS);
      simdjson::dom::array points = v["memory"].at(0)["points"];
      int64_t highest = INT64_MIN;
      size_t at = 0;
      for (size_t k = 0; k < points.size(); ++k) {
        const int64_t hi = int64_t(points.at(k).at(2));
        if (hi > highest) highest = hi, at = k;
      }
      EXPECT_EQ(highest, int64_t(dev["peak_allocated"])) << files_[i];
      EXPECT_LE(int64_t(points.at(at).at(0)), peak_ts) << files_[i];
      if (at + 1 < points.size()) {
        EXPECT_GT(int64_t(points.at(at + 1).at(0)), peak_ts) << files_[i];
      }
    }
  }
  EXPECT_GE(with_memory, 2) << "both MI300 fixtures have [memory] events";
}

TEST_F(ExplorerFiguresTest, FindingsCiteTheFigures) {
  for (size_t i = 0; i < files_.size(); ++i) {
    const std::string api = Api(fmt::format("/api/trace/{}/summary", i));
    simdjson::dom::parser p;
    element s;
    ASSERT_EQ(p.parse(api).get(s), simdjson::SUCCESS);
    element tl = s["figures"]["device_timeline"];
    EXPECT_EQ(int64_t(s["gaps"]["total_ns"]), int64_t(tl["idle_ns"])) << files_[i];
    simdjson::dom::array findings = s["findings"];
    ASSERT_GT(findings.size(), 0u);
    for (element f : findings) {
      const std::string_view text = f;
      EXPECT_EQ(text.find(" 0 calls"), std::string_view::npos) << files_[i] << ": " << text;
      EXPECT_EQ(text.find("(0 calls"), std::string_view::npos) << files_[i] << ": " << text;
    }
    if (int64_t(tl["activities"]) > 0) {
      EXPECT_NE(std::string_view(findings.at(0))
                    .find(fmt::format(", {} activities).", int64_t(tl["activities"]))),
                std::string_view::npos)
          << files_[i] << ": " << std::string_view(findings.at(0));
    }
    // A repetition counts real consecutive copies: never more than the trace has top-level ops.
    if (!s["repetition"].is_null()) {
      EXPECT_GE(int64_t(s["repetition"]["repeats"]), 3);
      EXPECT_LE(int64_t(s["repetition"]["repeats"]) *
                    int64_t(simdjson::dom::array(s["repetition"]["names"]).size()),
                int64_t(tl["activities"]))
          << files_[i];
    }
  }
}

}  // namespace
}  // namespace opscope
