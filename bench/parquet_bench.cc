// Parquet decode throughput (src/import/parquet): rows/s per core and MB/s on a generated
// instruction table like Neuron Explorer's, written by an independent writer (parquet-wasm, the
// Rust parquet crate), against hyparquet (pure JavaScript) decoding the same file in the same run.
//
//   parquet_bench [--rows N]        (default 8,000,000 rows: 8 row groups; needs node and npm)
//
// For each file (snappy with v1 pages and dictionaries, zstd with v2 pages): every column of
// every row group on 1 thread and on 2 (best of 3 runs each, the file in the page cache), then
// each column alone on 1 thread. The Neuron reader needs >= 20 M rows/s per core on its tables.
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/page_cache.h"
#include "bench/usage.h"
#include "import/parquet/parquet_file.h"

namespace {

namespace fs = std::filesystem;
using opscope::Status;
using opscope::parquet::ParquetFile;
using opscope::parquet::ReadOptions;
using opscope::parquet::RowGroupData;

double Seconds(const std::function<void()>& run, int runs = 3) {
  double best = 1e100;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

bool Shell(const std::string& cmd) { return std::system(cmd.c_str()) == 0; }

std::string Output(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  pclose(p);
  return out;
}

// Reads `columns` of every row group; returns the decoded bytes.
// What 2 threads can gain on this machine right now: a loop that touches no memory, on 1 thread
// and split over 2 (on a shared VM the second core may be busy with other work).
double CpuScaling() {
  auto spin = [](long n) {
    volatile uint64_t sink = 0;
    uint64_t x = 1;
    for (long i = 0; i < n; ++i) x = x * 6364136223846793005ull + 1;
    sink = x;
    (void)sink;
  };
  constexpr long kSteps = 300000000;
  const double one = Seconds([&] { spin(kSteps); });
  const double two = Seconds([&] {
    std::thread other(spin, kSteps / 2);
    spin(kSteps / 2);
    other.join();
  });
  return one / two;
}

uint64_t ReadColumns(const ParquetFile& f, const std::vector<int>& columns, int threads) {
  std::atomic<uint64_t> bytes{0};
  ReadOptions options;
  options.threads = threads;
  const Status st = f.ReadRowGroups(columns, options, [&](RowGroupData& rg) {
    uint64_t b = 0;
    for (const auto& c : rg.columns) b += c.bytes_held();
    bytes += b;
    return Status::Ok();
  });
  if (!st.ok()) {
    std::fprintf(stderr, "parquet_bench: %s\n", st.message().c_str());
    std::exit(1);
  }
  return bytes;
}

void Measure(const std::string& label, const std::string& path, const std::string& script_dir) {
  opscope::bench::WarmPageCache(path);
  std::unique_ptr<ParquetFile> f;
  if (Status st = ParquetFile::Open(path, &f); !st.ok()) {
    std::fprintf(stderr, "parquet_bench: %s\n", st.message().c_str());
    std::exit(1);
  }
  const double rows = static_cast<double>(f->num_rows());
  const double file_mb = static_cast<double>(f->size()) / 1e6;
  std::vector<int> all(f->schema().num_columns());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  uint64_t decoded = 0;
  const double t1 = Seconds([&] { decoded = ReadColumns(*f, all, 1); });
  const double t2 = Seconds([&] { ReadColumns(*f, all, 2); });
  // The memcpy of what was decoded: the floor no decoder beats.
  std::vector<char> src(decoded), dst(decoded);
  std::memset(src.data(), 1, src.size());
  const double tcopy = Seconds([&] { std::memcpy(dst.data(), src.data(), src.size()); });
  const std::string js = Output("node '" + script_dir + "/read_hyparquet.mjs' '" + path + "' 1");
  const double tjs = std::atof(js.c_str()) / 1e3;

  std::printf("\n%s: %.0f rows, %zu columns, %d row groups, %.1f MB file, %.1f MB decoded\n",
              label.c_str(), rows, all.size(), f->num_row_groups(), file_mb, decoded / 1e6);
  std::printf(
      "  all columns, 1 thread : %7.3f s  %6.1f M rows/s per core  %7.1f MB/s file  "
      "%7.1f MB/s decoded\n",
      t1, rows / t1 / 1e6, file_mb / t1, decoded / 1e6 / t1);
  constexpr double kTargetRowsPerCore = 20e6;  // what the Neuron reader needs (issue 31)
  std::printf("  target >= %.0f M rows/s per core on 1 thread: %s\n", kTargetRowsPerCore / 1e6,
              rows / t1 >= kTargetRowsPerCore ? "met" : "NOT met");
  std::printf(
      "  all columns, 2 threads: %7.3f s  %6.1f M rows/s (%.2fx, %.1f M rows/s per core; "
      "a CPU-only loop gains %.2fx on 2 threads in this run)\n",
      t2, rows / t2 / 1e6, t1 / t2, rows / t2 / 2e6, CpuScaling());
  std::printf("  baseline memcpy of the decoded bytes: %.3f s (decode costs %.1fx a copy)\n", tcopy,
              t1 / tcopy);
  if (tjs > 0) {
    std::printf(
        "  baseline hyparquet (node, 1 thread): %.3f s, %.1f M rows/s: opscope %.1fx faster\n", tjs,
        rows / tjs / 1e6, tjs / t1);
  } else {
    std::printf("  baseline hyparquet: not measured (%s)\n", js.c_str());
  }
  for (const int c : all) {
    const auto& d = f->schema().column(c);
    const double tc = Seconds([&] { ReadColumns(*f, {c}, 1); });
    std::printf("    %-22s %-10s %6.1f M rows/s\n", d.path.c_str(),
                std::string(opscope::parquet::ToString(d.type)).c_str(), rows / tc / 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  long rows = 8000000;
  constexpr const char* kUsage = "usage: parquet_bench [--rows N]";
  if (opscope::bench::WantsHelp(argc, argv)) return opscope::bench::Usage(kUsage);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      rows = std::atol(argv[++i]);
    } else {
      return opscope::bench::Usage(kUsage, argv[i]);
    }
  }
  const std::string script_dir = std::string(OPSCOPE_SOURCE_DIR) + "/bench/parquet";
  if (!Shell("node --version > /dev/null 2>&1")) {
    std::printf("parquet_bench: skipped: node is not installed (it runs the table's writer)\n");
    return 0;
  }
  if (!fs::exists(script_dir + "/node_modules/parquet-wasm/package.json") &&
      !Shell("cd '" + script_dir + "' && npm ci --no-audit --no-fund > /dev/null 2>&1")) {
    std::fprintf(stderr, "parquet_bench: npm ci failed in %s\n", script_dir.c_str());
    return 1;
  }
  const fs::path dir = fs::temp_directory_path() / ("parquet_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  struct Variant {
    const char* label;
    const char* codec;
    const char* pages;
  };
  int rc = 0;
  for (const Variant& v :
       {Variant{"snappy, v1 pages", "SNAPPY", "V1"}, Variant{"zstd, v2 pages", "ZSTD", "V2"}}) {
    const std::string path = (dir / (std::string(v.codec) + ".parquet")).string();
    if (!Shell("node '" + script_dir + "/write_table.mjs' '" + path + "' " + std::to_string(rows) +
               " " + v.codec + " " + v.pages)) {
      std::fprintf(stderr, "parquet_bench: writing %s failed\n", path.c_str());
      rc = 1;
      break;
    }
    Measure(v.label, path, script_dir);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rc;
}
