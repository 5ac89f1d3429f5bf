// The Explorer serving while its traces load (Explorer::AddLoading): /api/status follows each
// trace through queued, importing, indexing and ready or failed; requests naming a trace still
// loading answer 503 with Retry-After and never wait; a failed trace answers 422 with its error,
// file (as added, not the path read) and byte offset; readers racing the publication see either
// the loading answer or the whole trace; /api/job?wait=1 is answered once the job is settled.
#include <gtest/gtest.h>
#include <httplib.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "opscope/explorer.h"

namespace opscope {
namespace {

Trace SmallTrace(int64_t events) {
  SyntheticTraceOptions o;
  o.target_events = events;
  return MakeSyntheticNeuronTrace(o);
}

class ExplorerLoadingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    explorer_ = std::make_unique<Explorer>(ExplorerOptions{});
    ASSERT_EQ(explorer_->AddLoading("big.json", "runs/big.json", 1000), 0u);
    ASSERT_EQ(explorer_->AddLoading("bad.json", "bad.json", 50), 1u);
    explorer_->ExpectJob();
    ASSERT_TRUE(explorer_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", explorer_->port());
  }

  simdjson::dom::element Json(const std::string& path, int want_status) {
    auto res = client_->Get(path);
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, want_status) << path << ": " << res->body;
    bodies_.push_back(res->body);
    simdjson::dom::element doc;
    EXPECT_EQ(parsers_.emplace_back().parse(bodies_.back()).get(doc), simdjson::SUCCESS);
    return doc;
  }

  std::unique_ptr<Explorer> explorer_;
  std::unique_ptr<httplib::Client> client_;
  std::vector<std::string> bodies_;
  std::deque<simdjson::dom::parser> parsers_;
};

TEST_F(ExplorerLoadingTest, StatusFollowsEachTraceAndRequestsNeverWait) {
  simdjson::dom::element st = Json("/api/status", 200);
  EXPECT_FALSE(st["ready"].get_bool().value());
  EXPECT_EQ(std::string_view(st["traces"].at(0)["phase"]), "queued");
  EXPECT_EQ(st["traces"].at(0)["bytes_total"].get_uint64().value(), 1000u);

  explorer_->ReportProgress(0, 400, 1000);
  st = Json("/api/status", 200);
  simdjson::dom::element t0 = st["traces"].at(0);
  EXPECT_EQ(std::string_view(t0["phase"]), "importing");
  EXPECT_EQ(t0["bytes_read"].get_uint64().value(), 400u);
  EXPECT_DOUBLE_EQ(t0["fraction"].get_double().value(), 0.4);
  EXPECT_GE(t0["mb_per_s"].get_double().value(), 0.0);

  // Every route naming trace 0 answers at once: 503, Retry-After, "loading".
  for (const char* path :
       {"/api/trace/0/lanes", "/api/trace/0/viewport?width=100", "/api/trace/0/summary",
        "/api/trace/0/ops", "/api/trace/0/search?q=x", "/api/trace/0/slice/0",
        "/api/trace/0/critical_path", "/api/diff?a=0&b=1", "/api/job"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 503) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Retry-After"), "1") << path;
    EXPECT_NE(res->body.find("\"loading\":true"), std::string::npos) << path << res->body;
  }
  simdjson::dom::element info = Json("/api/info", 200);
  EXPECT_FALSE(info["ready"].get_bool().value());
  EXPECT_EQ(std::string_view(info["traces"].at(0)["name"]), "big.json");
  EXPECT_TRUE(info["traces"].at(0)["slices"].error() == simdjson::NO_SUCH_FIELD);

  explorer_->FailTrace(1, Status::InvalidInput("/abs/dir/bad.json: byte 42: unexpected end", 42,
                                               "/abs/dir/bad.json"));
  auto failed = client_->Get("/api/trace/1/lanes");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 422) << failed->body;
  EXPECT_EQ(failed->body.find("/abs/dir"), std::string::npos)
      << "a path read served: " << failed->body;
  simdjson::dom::element err = Json("/api/trace/1/viewport", 422);
  EXPECT_TRUE(err["failed"].get_bool().value());
  EXPECT_EQ(std::string_view(err["file"]), "bad.json");
  EXPECT_EQ(err["offset"].get_uint64().value(), 42u);
  EXPECT_NE(std::string_view(err["error"]).find("bad.json: byte 42: unexpected end"),
            std::string_view::npos);

  explorer_->CompleteTrace(0, SmallTrace(500), 2);
  st = Json("/api/status", 200);
  EXPECT_TRUE(st["ready"].get_bool().value());
  EXPECT_EQ(std::string_view(st["traces"].at(0)["phase"]), "ready");
  EXPECT_EQ(std::string_view(st["traces"].at(1)["phase"]), "failed");
  EXPECT_EQ(st["traces"].at(1)["offset"].get_uint64().value(), 42u);
  Json("/api/trace/0/lanes", 200);
  Json("/api/trace/0/viewport?width=100", 200);
  info = Json("/api/info", 200);
  EXPECT_GT(info["traces"].at(0)["slices"].get_uint64().value(), 0u);
  EXPECT_EQ(std::string_view(info["traces"].at(1)["phase"]), "failed");

  explorer_->ExpectJob(false);
  Json("/api/job", 404);
}

// /api/job?wait=1 (the job page's first request) holds until the job is settled and is answered
// then: by ExpectJob(false) with the 404, by Stop at once rather than after its 10 s.
TEST_F(ExplorerLoadingTest, JobWaitIsAnsweredOnceTheJobIsSettled) {
  auto ask = [this] {
    return std::async(std::launch::async, [port = explorer_->port()] {
      httplib::Client client("127.0.0.1", port);
      const auto t0 = std::chrono::steady_clock::now();
      auto res = client.Get("/api/job?wait=1");
      return std::make_pair(res ? res->status : 0, std::chrono::steady_clock::now() - t0);
    });
  };
  auto waiting = ask();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  explorer_->ExpectJob(false, "rank 3 is missing");
  const auto [status, took] = waiting.get();
  EXPECT_EQ(status, 404);
  EXPECT_LT(took, std::chrono::seconds(8));

  explorer_->ExpectJob(true);
  auto stopped = ask();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  explorer_->Stop();
  EXPECT_LT(stopped.get().second, std::chrono::seconds(8));
}

// Readers hammer the trace while it is published: each answer is 503 (loading) or the whole
// trace's 200, never anything half-built (ASan/UBSan runs catch a torn read).
TEST_F(ExplorerLoadingTest, ReadersRacingThePublicationSeeLoadingOrTheWholeTrace) {
  explorer_->ReportProgress(0, 10, 1000);
  std::atomic<bool> stop{false};
  std::atomic<int> loading{0}, served{0}, other{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      httplib::Client c("127.0.0.1", explorer_->port());
      const char* paths[] = {"/api/trace/0/viewport?width=200", "/api/info", "/api/status"};
      while (!stop) {
        auto res = c.Get(paths[r]);
        if (!res) continue;
        if (res->status == 503) {
          ++loading;
        } else if (res->status == 200) {
          ++served;
        } else {
          ++other;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  explorer_->CompleteTrace(0, SmallTrace(20000), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(loading.load(), 0);
  EXPECT_GT(served.load(), 0);
  Json("/api/trace/0/viewport?width=200", 200);
}

}  // namespace
}  // namespace opscope
