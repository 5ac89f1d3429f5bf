// WriteChromeTrace under a file-size limit (SIGXFSZ must be a write error, not the end of the
// process) and the removal of temporary files that killed processes left behind.
#include "profiler/chrome_trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace opscope::internal {
namespace {

namespace fs = std::filesystem;

Trace MakeTrace(int slices) {
  Trace t;
  const uint32_t p = t.AddProcess(7, "python");
  const uint32_t track = t.AddThreadTrack(p, 7, "main");
  for (int i = 0; i < slices; ++i) {
    Slice s;
    s.ts_ns = 1000 * i;
    s.dur_ns = 500;
    s.name = t.Intern(fmt::format("aten::op_{}", i % 50));
    s.track = track;
    s.kind = ActivityKind::kCpuOp;
    t.AddSlice(s);
  }
  t.Finalize();
  return t;
}

std::string Host() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// A pid that belonged to a process that has exited.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

class ChromeTraceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("opscope_chrome_trace_{}", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

// Under `ulimit -f` (as on a full disk), exporting a larger trace fails with a message and leaves
// an earlier file at the path as it was (in a child process, so the limit and a SIGXFSZ that
// would kill it stay there).
TEST_F(ChromeTraceFileTest, FileSizeLimitIsAWriteError) {
  const Trace trace = MakeTrace(5000);  // ~600 KB of JSON, ~20 KB gzip'd
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "earlier";
    const pid_t child = fork();
    if (child == 0) {
      const rlimit limit{8 * 1024, RLIM_INFINITY};
      setrlimit(RLIMIT_FSIZE, &limit);
      const Status st = WriteChromeTrace(trace, path);
      const std::string& error = st.message();
      const bool ok = st.code() == Status::Code::kIoError &&
                      error.find("File too large") != std::string::npos &&
                      error.find("'" + path + "' was not written") != std::string::npos &&
                      error.find("had been written") != std::string::npos;
      if (!ok) std::fprintf(stderr, "unexpected message: %s\n", error.c_str());
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status))
        << name << ": killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << name;
    EXPECT_EQ(Files(), std::vector<std::string>{name})
        << fmt::format("{}", fmt::join(Files(), " "));
    std::string kept;
    std::getline(std::ifstream(path), kept);
    EXPECT_EQ(kept, "earlier");
    fs::remove(path);
  }
  // Without the limit the same export works.
  EXPECT_TRUE(WriteChromeTrace(trace, (dir_ / "trace.json").string()).ok());
}

TEST_F(ChromeTraceFileTest, TempFilesOfDeadProcessesAreRemovedAtTheNextExport) {
  const pid_t dead = DeadPid();
  const std::string host = Host();
  const std::vector<std::string> stale = {fmt::format("trace.json.tmp.{}@{}", dead, host),
                                          fmt::format("trace.json.tmp.{}", dead),
                                          fmt::format("other.json.gz.tmp.{}@{}", dead, host)};
  const std::vector<std::string> kept = {
      fmt::format("trace.json.tmp.1@{}", host),           // a live process (init)
      fmt::format("trace.json.tmp.{}@other-host", dead),  // another machine's
      fmt::format("notes.txt.tmp.{}", dead),              // not a trace
      fmt::format("trace.json.tmp.{}x", dead)};           // not a pid
  for (const auto& name : stale) std::ofstream(dir_ / name) << "partial";
  for (const auto& name : kept) std::ofstream(dir_ / name) << "partial";
  ASSERT_TRUE(WriteChromeTrace(MakeTrace(10), (dir_ / "trace.json").string()).ok());
  std::vector<std::string> expected = kept;
  expected.push_back("trace.json");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Files(), expected);

  // The profile layout: leftovers deeper in the tree.
  const fs::path deep = dir_ / "host_pid_1" / "1700000000" / "naive";
  fs::create_directories(deep);
  std::ofstream(deep / fmt::format("trace.json.tmp.{}@{}", dead, host)) << "partial";
  EXPECT_EQ(RemoveStaleTempTraces(dir_.string(), 1), 0u);  // too deep
  EXPECT_EQ(RemoveStaleTempTraces(dir_.string(), 4), 1u);
  EXPECT_TRUE(fs::is_empty(deep));
}

}  // namespace
}  // namespace opscope::internal
