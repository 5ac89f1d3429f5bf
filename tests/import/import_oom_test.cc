// Running out of memory on an import thread other than the caller's: the import returns an error
// naming the file instead of ending the process (an exception escaping a std::thread calls
// std::terminate). The binary replaces the global allocator so that, while the test arms it,
// every allocation of 4 KiB or more off the main thread throws std::bad_alloc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"

#if !defined(__SANITIZE_ADDRESS__)
namespace {
std::atomic<bool> g_fail_off_main{false};
thread_local bool t_main_thread = false;
}  // namespace

void* operator new(std::size_t n) {
  if (n >= 4096 && !t_main_thread && g_fail_off_main.load(std::memory_order_relaxed)) {
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace opscope {
namespace {

TEST(ImportOutOfMemoryTest, AWorkerThreadOutOfMemoryIsAnErrorNamingTheFile) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizers own the allocator";
#else
  t_main_thread = true;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("opscope_oom_" + std::to_string(getpid()) + ".json"))
                               .string();
  {
    std::ofstream out(path);
    out << "{\"traceEvents\": [";
    // Enough chunks (~300 of 16 KiB) that the threads take some: the reading thread parses and
    // merges too, and a trace of a few chunks may be done before another thread gets a core.
    for (int i = 0; i < 40000; ++i) {
      out << (i ? ",\n" : "") << "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", "
          << "\"pid\": 1, \"tid\": 1, \"ts\": " << i * 10 << ", \"dur\": 5, \"args\": "
          << "{\"External id\": " << i << "}}";
    }
    out << "]}";
  }
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    ImportOptions options;
    options.threads = threads;
    options.chunk_bytes = 16u << 10;
    Trace trace;
    ASSERT_TRUE(ImportTrace(path, &trace, nullptr, options).ok());
    if (threads == 1) continue;
    ASSERT_EQ(trace.slices().size(), 40000u);
    g_fail_off_main = true;
    const Status st = ImportTrace(path, &trace, nullptr, options);
    g_fail_off_main = false;
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("out of memory"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
    EXPECT_TRUE(trace.slices().empty());
  }
  std::filesystem::remove(path);
#endif
}

}  // namespace
}  // namespace opscope
