// `opscope explore` as a user runs it: argument checks, a busy port, a directory of many traces,
// names relative to what was opened, serving while the import runs, and SIGTERM while requests
// run. Each run is bounded in time.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/child_process.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

fs::path Binary() {
  const char* dir = std::getenv("OPSCOPE_BINARY_DIR");
  return fs::path(dir ? dir : "build") / "opscope";
}

// A running `opscope explore`; its stdout and stderr go to one pipe.
class ExploreProcess : public testing::ChildProcess {
 public:
  explicit ExploreProcess(std::vector<std::string> args)
      : ChildProcess(WithBinary(std::move(args))) {}

  // The port from "serving ... at http://127.0.0.1:PORT/", once the access text is printed whole;
  // 0 when it is not.
  int Port() {
    ReadUntil("press Ctrl-C", std::chrono::seconds(20));
    return LocalPort(Clock::now());
  }

 private:
  static std::vector<std::string> WithBinary(std::vector<std::string> args) {
    args.insert(args.begin(), Binary().string());
    return args;
  }
};

// Runs to completion (bounded) and returns {exit code, output}.
std::pair<int, std::string> RunToEnd(std::vector<std::string> args) {
  ExploreProcess p(std::move(args));
  const int code = p.Wait(std::chrono::seconds(20));
  return {code, p.output()};
}

class ExploreCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(Binary())) << Binary() << " not built";
    dir_ = fs::temp_directory_path() / fmt::format("opscope_explore_cli_{}", getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A small valid Kineto trace.
  void WriteTrace(const fs::path& path, int ops) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path);
    out << R"({"schemaVersion": 1, "traceEvents": [)";
    for (int i = 0; i < ops; ++i) {
      out << (i ? "," : "")
          << fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "aten::op{}", "pid": 1, )"
                         R"("tid": 1, "ts": {}, "dur": 5}})",
                         i % 3, 10 * i);
    }
    out << "]}";
  }

  fs::path dir_;
};

TEST_F(ExploreCliTest, BadArgumentsAreRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"explore", "--synthetic", "9e18"},
        {"explore", "--synthetic", "9000000000000000000"},
        {"explore", "--synthetic", "0"},
        {"explore", "--synthetic", "-5"},
        {"explore", "--synthetic", "100", "--token", "short"},
        {"explore", "--synthetic", "100", "--port", "70000"}}) {
    const auto [code, output] = RunToEnd(args);
    EXPECT_NE(code, 0) << fmt::format("{}", fmt::join(args, " ")) << "\n" << output;
    EXPECT_EQ(output.find("serving"), std::string::npos) << output;
  }
  const auto [code, output] = RunToEnd({"explore", "--synthetic", "100", "--token", "short"});
  EXPECT_NE(output.find("16 characters"), std::string::npos) << output;
}

TEST_F(ExploreCliTest, BusyPortIsAnErrorNamingThePort) {
  ExploreProcess first({"explore", "--synthetic", "200", "--port", "0"});
  const int port = first.Port();
  ASSERT_GT(port, 0) << first.output();
  const auto [code, output] =
      RunToEnd({"explore", "--synthetic", "200", "--port", std::to_string(port)});
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find(fmt::format("port {}", port)), std::string::npos) << output;
  EXPECT_NE(output.find("in use"), std::string::npos) << output;
}

// The ssh -L hint forwards to the address the server listens on: [::1] for --host ::1 (it named
// 127.0.0.1, where nothing listens).
TEST_F(ExploreCliTest, SshHintNamesTheAddressListenedOn) {
  for (const auto& [host, target] : std::vector<std::pair<std::string, std::string>>{
           {"::1", "[::1]"}, {"127.0.0.1", "127.0.0.1"}}) {
    ExploreProcess p({"explore", "--synthetic", "100", "--port", "0", "--host", host});
    p.ReadUntil("press Ctrl-C", std::chrono::seconds(20));
    const std::string& out = p.output();
    if (host == "::1" && out.find("press Ctrl-C") == std::string::npos &&
        out.find("ssh -L") == std::string::npos) {
      GTEST_SKIP() << "no IPv6 loopback here: " << out;
    }
    const size_t at = out.find("ssh -L ");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_EQ(out.substr(out.find(':', at), target.size() + 2), ":" + target + ":") << out;
  }
}

// The environment of a running process, as "NAME=value" lines.
std::vector<std::string> EnvironOf(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  std::vector<std::string> vars;
  for (std::string var; std::getline(in, var, '\0');) vars.push_back(var);
  return vars;
}

std::string TunablesOf(pid_t pid) {
  for (const std::string& var : EnvironOf(pid)) {
    if (var.rfind("GLIBC_TUNABLES=", 0) == 0) return var.substr(15);
  }
  return "(unset)";
}

// Whether the kernel gives transparent huge pages on request.
bool HugePagesOnRequest() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return mode.find("[always]") != std::string::npos || mode.find("[madvise]") != std::string::npos;
}

// explore restarts itself once with glibc.malloc.hugetlb=1 (its arenas on huge pages), adding it
// to the tunables already set, and leaves a setting of that tunable alone; it serves either way.
// (glibc rewrites GLIBC_TUNABLES in place as it reads it, so /proc/PID/environ shows a list of
// several only up to its first entry.)
TEST_F(ExploreCliTest, RestartsOnHugePagesKeepingTheTunablesSet) {
#if !defined(__GLIBC__) || !__GLIBC_PREREQ(2, 35)
  GTEST_SKIP() << "glibc before 2.35 has no glibc.malloc.hugetlb";
#else
  if (!HugePagesOnRequest()) GTEST_SKIP() << "no transparent huge pages on request here";
  if (std::getenv("GLIBC_TUNABLES") != nullptr) GTEST_SKIP() << "GLIBC_TUNABLES set for the test";
  struct Case {
    const char* set;  // GLIBC_TUNABLES given, or null
    std::string seen;
  };
  for (const Case& c : {Case{nullptr, "glibc.malloc.hugetlb=1"},
                        Case{"glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0"},
                        Case{"glibc.malloc.perturb=0", "glibc.malloc.perturb=0"}}) {
    if (c.set != nullptr) setenv("GLIBC_TUNABLES", c.set, 1);
    ExploreProcess p({"explore", "--synthetic", "200", "--port", "0"});
    unsetenv("GLIBC_TUNABLES");
    const int port = p.Port();
    ASSERT_GT(port, 0) << p.output();
    EXPECT_EQ(TunablesOf(p.pid()), c.seen) << (c.set ? c.set : "(unset)");
    httplib::Client client("127.0.0.1", port);
    const auto info = client.Get("/api/info");
    ASSERT_TRUE(info) << p.output();
    EXPECT_EQ(info->status, 200);
  }
#endif
}

// More traces than any fixed cap, opened whole; /api/info names them relative to the directory.
TEST_F(ExploreCliTest, DirectoryOfManyTracesOpensAllWithRelativeNames) {
  const fs::path profiles = dir_ / "profiles";
  for (int i = 0; i < 40; ++i) {
    WriteTrace(profiles / fmt::format("rank{:02d}", i) / "trace.json", 3 + i % 4);
  }
  ExploreProcess p({"explore", profiles.string(), "--port", "0"});
  const int port = p.Port();
  ASSERT_GT(port, 0) << p.output();
  EXPECT_NE(p.output().find("serving 40 traces"), std::string::npos) << p.output();
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/api/info");
  ASSERT_TRUE(res);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(res->body).get(doc), simdjson::SUCCESS);
  simdjson::dom::array traces = doc["traces"];
  ASSERT_EQ(traces.size(), 40u);
  EXPECT_EQ(std::string_view(traces.at(0)["name"]), "profiles/rank00/trace.json");
  EXPECT_EQ(std::string_view(traces.at(0)["source"]), "rank00/trace.json");
  EXPECT_EQ(res->body.find(dir_.string()), std::string::npos) << "absolute path in /api/info";
  kill(p.pid(), SIGTERM);
  EXPECT_EQ(p.Wait(std::chrono::seconds(5)), 0);
}

// The server listens and prints its address before the import is done: a named pipe with no
// writer yet keeps the import waiting while /api/status says "importing" and the trace answers
// 503; once the trace is written into the pipe, it is served.
TEST_F(ExploreCliTest, ServesItsProgressBeforeTheImportIsDone) {
  const fs::path fifo = dir_ / "streamed.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExploreProcess p({"explore", fifo.string(), "--port", "0"});
  const int port = p.Port();
  ASSERT_GT(port, 0) << p.output();
  httplib::Client client("127.0.0.1", port);
  // The loader thread starts the import (and waits on the pipe) just after the address is out.
  std::string status;
  for (auto until = Clock::now() + std::chrono::seconds(5);
       status.find(R"("phase":"importing")") == std::string::npos && Clock::now() < until;) {
    auto res = client.Get("/api/status");
    ASSERT_TRUE(res);
    status = res->body;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(status.find(R"("phase":"importing")"), std::string::npos) << status;
  EXPECT_NE(status.find(R"("ready":false)"), std::string::npos) << status;
  auto early = client.Get("/api/trace/0/lanes");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 503) << early->body;
  EXPECT_EQ(early->get_header_value("Retry-After"), "1");

  const fs::path trace = dir_ / "trace.json";
  WriteTrace(trace, 12);
  std::ifstream in(trace);
  std::ofstream(fifo) << in.rdbuf();  // blocks until the server reads; closing ends the input
  const auto until = Clock::now() + std::chrono::seconds(10);
  int code = 0;
  while (Clock::now() < until) {
    auto res = client.Get("/api/trace/0/lanes");
    code = res ? res->status : 0;
    if (code != 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(code, 200);
  p.ReadUntil("opened", std::chrono::seconds(5));
  EXPECT_NE(p.output().find("opened " + fifo.string() + ": 12 events"), std::string::npos)
      << p.output();
  kill(p.pid(), SIGTERM);
  EXPECT_EQ(p.Wait(std::chrono::seconds(5)), 0);
}

// The other profilers' formats are served as JSON traces are: an XPlane (its GPUs by plane name)
// and an Nsight Systems export (its GPU as "GPU 0").
TEST_F(ExploreCliTest, XPlaneAndNsysProfilesAreServed) {
  const char* fixtures = std::getenv("OPSCOPE_FIXTURES_DIR");
  ASSERT_NE(fixtures, nullptr) << "OPSCOPE_FIXTURES_DIR is not set (run the test through ctest)";
  const std::pair<const char*, const char*> cases[] = {
      {"traces/xplane/tensorflow-profiler/34.83.195.179_6003.xplane.pb", "/device:GPU:4"},
      {"nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "GPU 0"},
  };
  for (const auto& [relative, device] : cases) {
    SCOPED_TRACE(relative);
    const fs::path file = fs::path(fixtures) / relative;
    ExploreProcess p({"explore", file.string(), "--port", "0"});
    const int port = p.Port();
    ASSERT_GT(port, 0) << p.output();
    httplib::Client client("127.0.0.1", port);
    int code = 0;
    std::string lanes;
    for (auto until = Clock::now() + std::chrono::seconds(20); Clock::now() < until;) {
      auto res = client.Get("/api/trace/0/lanes");
      code = res ? res->status : 0;
      if (code != 503) {
        lanes = res ? res->body : "";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(code, 200) << lanes;
    EXPECT_NE(lanes.find(device), std::string::npos) << lanes.substr(0, 2000);
    auto summary = client.Get("/api/trace/0/summary");
    ASSERT_TRUE(summary);
    EXPECT_EQ(summary->status, 200) << summary->body;
    kill(p.pid(), SIGTERM);
    EXPECT_EQ(p.Wait(std::chrono::seconds(5)), 0);
  }
}

// SIGTERM stops the server promptly even while heavy requests are running.
TEST_F(ExploreCliTest, SigtermStopsWithinASecondWhateverIsRunning) {
  ExploreProcess p({"explore", "--synthetic", "300000", "--port", "0"});
  const int port = p.Port();
  ASSERT_GT(port, 0) << p.output();
  std::vector<std::thread> clients;
  for (const char* path : {"/api/trace/0/summary", "/api/trace/0/ops?shapes=1",
                           "/api/trace/0/search?regex=1&q=%28.%2A%29%7B20%7Dx",
                           "/api/trace/0/select", "/api/trace/0/viewport?width=20000"}) {
    clients.emplace_back([port, path] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(5, 0);
      client.Get(path);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = Clock::now();
  kill(p.pid(), SIGTERM);
  const int code = p.Wait(std::chrono::seconds(10));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& t : clients) t.join();
  EXPECT_EQ(code, 0) << p.output();
  EXPECT_LT(seconds, 1.5) << "took " << seconds << " s to stop";
  EXPECT_NE(p.output().find("stopped"), std::string::npos) << p.output();
}

}  // namespace
}  // namespace opscope
