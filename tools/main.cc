// opscope: profile, import, compare and explore ML traces.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#endif

#include "tools/commands.h"

namespace {

// Every command prints through stdout's buffer (reports, JSON, tables, help): a write that failed
// there (a full disk, /dev/full, a file over its size limit) left the output incomplete, so the
// command fails with `failed_write` (1; `opscope check`'s "could not compare", 2) whatever it
// returned. Returns the exit code to use.
int FinishStdout(int exit_code, int failed_write) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout)) return exit_code;
  std::fprintf(stderr,
               "opscope: error: writing the output to stdout failed: %s; it is incomplete\n",
               flush_errno != 0 ? std::strerror(flush_errno) : "write error");
  return exit_code == 0 ? failed_write : exit_code;
}

#if defined(__GLIBC__)
// The heap grows in steps of 64 MiB and keeps what is freed (up to 1 GiB): an import allocates and
// frees arrays of many MiB (growing vectors, Finalize's index arrays), and with glibc's default
// each freed top of the heap went back to the system and the next array faulted its pages in
// again, one 4 KiB trap each (15-30 us apiece on the development VM). Kept, they are reused:
// one-thread `opscope report` of a 134 MB trace took 7,780 -> 4,400 page faults and 19% less CPU
// time, for 1-3 MB more peak RSS.
//
// Then the heap's first 256 MiB are put on transparent huge pages (where the kernel gives them on
// request: /sys/kernel/mm/transparent_hugepage/enabled `madvise` or `always`), with blocks up to
// 32 MiB taken from it rather than mapped one by one. Every page a process touches first is a
// trap and a page zeroed by the kernel; on a VM whose host backs guest memory lazily or takes
// freed pages back that is ~10 us per 4 KiB page (bench/import_bench prints what it is on the
// machine at hand), against ~0.2-2.5 us per 4 KiB on huge pages. A mid-size trace's import touches
// a few thousand fresh pages (the library's own arrays ask for huge pages only from 2-8 MiB up,
// to keep a small trace's peak memory low), which made page faults about a third of `opscope
// report`'s wall time on a 15 MB trace. The batch commands' threads share that heap (one arena:
// glibc would give each thread an arena of its own, on 4 KiB pages, and the import parses on
// threads); `opscope explore` keeps glibc's arenas, because one shared arena lets its
// lowest-priority thread (the deferred index) hold the allocator's lock while a page's request
// waits. The heap past its first 256 MiB stays on 4 KiB pages. Measured on the development VM:
// `opscope report` of a 15 MB real trace 2,400 -> 1,600-1,900 page faults and 0.074-0.082 ->
// 0.062 s wall, of a 53 MB one 4,400-5,700 -> 2,700 and 0.16-0.19 -> 0.13-0.16 s;
// peak RSS 2.5-5.5 MB higher (a huge page's unused rest, freed blocks kept).
// A process-wide choice, so made here, for the CLI, not in the library; a setting made with
// glibc's MALLOC_* variables is kept.
bool AddressSpaceLimited() {
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit lim{};
    if (getrlimit(resource, &lim) != 0 || lim.rlim_cur != RLIM_INFINITY) return true;
  }
  return false;
}

void PrepareHeap(bool one_arena) {
  constexpr int kTopPad = 64 << 20;
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (one_arena && std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
#if defined(MADV_HUGEPAGE)
  // A block the heap's top must grow for, by it and a pad: from it to the new top, address space
  // only until written, is advised before anything is written there. 256 MiB of it where the
  // address space is not limited (`ulimit -v` counts address space, written or not), else the
  // usual step.
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  mallopt(M_TOP_PAD, AddressSpaceLimited() ? kTopPad : 256 << 20);
  const auto heap_end = reinterpret_cast<uintptr_t>(sbrk(0));
  void* volatile probe = std::malloc(kHuge);  // volatile: a malloc/free pair may be elided
  mallopt(M_TOP_PAD, kTopPad);
  if (probe == nullptr) return;
  const auto at = reinterpret_cast<uintptr_t>(probe);
  const auto top = reinterpret_cast<uintptr_t>(sbrk(0));
  // Only where the heap grew for the block, at its top (not a mapping of its own, nor a
  // sanitizer's allocator, where the heap's end does not move).
  if (top > heap_end && at < top && at + kHuge > heap_end) {
    const uintptr_t from = (at + kHuge - 1) & ~(kHuge - 1), to = top & ~(kHuge - 1);
    if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  }
  std::free(probe);
#else
  mallopt(M_TOP_PAD, kTopPad);
#endif
}

// `opscope explore` keeps glibc's per-thread arenas (above), and glibc maps those on 4 KiB pages:
// the import threads of an 8-rank job of 40 MB faulted ~14,600 pages, a quarter of the server's
// CPU time on the development VM, while the browser loading the page wants the same cores.
// Started with its `glibc.malloc.hugetlb=1` tunable (read once, at start-up; glibc 2.35 on),
// glibc asks for transparent huge pages for every block and arena it maps. So `explore` starts
// itself again once with it, where the kernel gives huge pages on request and no setting of that
// tunable was made (GLIBC_TUNABLES=glibc.malloc.hugetlb=0 keeps 4 KiB pages): 14,600 -> 3,050
// page faults, 0.39-0.48 -> 0.26-0.37 s of CPU and the job made at 0.20-0.28 -> 0.15-0.22 s after
// start. Not for the batch commands: a second start costs them more than it saves (their heap is
// prepared above).
void RestartOnHugePages(char** argv) {
#if __GLIBC_PREREQ(2, 35)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  if (getauxval(AT_SECURE) != 0) return;  // tunables ignored: no restart loop
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f == nullptr) return;
  char mode[128] = {};
  const size_t n = std::fread(mode, 1, sizeof(mode) - 1, f);
  std::fclose(f);
  mode[n] = '\0';
  if (std::strstr(mode, "[always]") == nullptr && std::strstr(mode, "[madvise]") == nullptr) return;
  const std::string before = tunables != nullptr ? tunables : "";
  const std::string with =
      before.empty() ? "glibc.malloc.hugetlb=1" : before + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not restarted (no /proc): go on as started.
  if (tunables != nullptr) {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  (void)argv;
#endif
}
#endif

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  const bool explore = argc > 1 && std::string_view(argv[1]) == "explore";
  if (explore) RestartOnHugePages(argv);
  PrepareHeap(/*one_arena=*/!explore);
#endif
  CLI::App app{
      "opscope: profile models on simulated and real accelerators, read torch.profiler "
      "traces, and explore them in a browser"};
  app.require_subcommand(1);
  int exit_code = 0;
  const bool check = argc > 1 && std::string_view(argv[1]) == "check";
  const int failed_write = check ? 2 : 1;
  opscope::tools::AddDemoCommand(app, &exit_code);
  opscope::tools::AddReportCommand(app, &exit_code);
  opscope::tools::AddDiffCommand(app, &exit_code);
  opscope::tools::AddCheckCommand(app, &exit_code);
  opscope::tools::AddExploreCommand(app, &exit_code);
  opscope::tools::AddModelCommand(app, &exit_code);
  opscope::tools::AddConvertCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `opscope check` promises CI three exit codes: a command line it cannot use is "could not
    // compare" (2), not CLI11's own codes.
    const int code = app.exit(e);
    return FinishStdout(check && code != 0 ? 2 : code, failed_write);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope: error: %s\n", e.what());
    return FinishStdout(1, failed_write);
  }
  return FinishStdout(exit_code, failed_write);
}
