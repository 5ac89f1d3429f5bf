// The Nsight Systems reader against the same SQL run on the export with SQLite's C API directly
// (the pipit fixture: MPI + CUDA saxpy), on exports built here (columns in another order, tables
// missing, a database of something else), on corrupt images, and as a job of two ranks' exports.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "tests/analysis/test_support.h"
#include "tests/common/temp_dir.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

const char kFixture[] = "nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite";

// One SQL query's rows, every value as text ("" for NULL), run with SQLite's C API.
std::vector<std::vector<std::string>> Query(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::vector<std::string>> rows;
  if (sqlite3_open_v2(("file:" + db_path + "?immutable=1").c_str(), &db,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db_path;
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sql << ": " << sqlite3_errmsg(db);
  while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      row.emplace_back(text != nullptr ? text : "");
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  const auto rows = Query(db_path, sql);
  return rows.empty() || rows[0].empty() || rows[0][0].empty() ? 0 : std::stoll(rows[0][0]);
}

// Runs SQL that changes a database (the test's own copies).
void Exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

struct Sums {
  int64_t count = 0, total_ns = 0;
};
Sums SumKind(const Trace& t, std::initializer_list<ActivityKind> kinds) {
  Sums s;
  for (const Slice& slice : t.slices()) {
    for (ActivityKind k : kinds) {
      if (slice.kind != k) continue;
      ++s.count;
      s.total_ns += slice.dur_ns;
    }
  }
  return s;
}

class NsysFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
    path_ = (testing::FixturesDir() / kFixture).string();
    const Status st = ImportTrace(path_, &trace_, &stats_);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  std::string path_;
  Trace trace_;
  ImportStats stats_;
};

TEST_F(NsysFixtureTest, CountsAndTimesEqualTheSameSql) {
  EXPECT_EQ(stats_.format, TraceFormat::kNsysSqlite);
  const std::pair<const char*, ActivityKind> tables[] = {
      {"CUPTI_ACTIVITY_KIND_KERNEL", ActivityKind::kKernel},
      {"CUPTI_ACTIVITY_KIND_MEMCPY", ActivityKind::kMemcpy},
      {"CUPTI_ACTIVITY_KIND_MEMSET", ActivityKind::kMemset},
      {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", ActivityKind::kSync},
  };
  for (const auto& [table, kind] : tables) {
    SCOPED_TRACE(table);
    const auto sql =
        Query(path_, std::string("SELECT count(*), coalesce(sum(end - start), 0) FROM ") + table);
    const Sums got = SumKind(trace_, {kind});
    EXPECT_EQ(got.count, std::stoll(sql[0][0]));
    EXPECT_EQ(got.total_ns, std::stoll(sql[0][1]));
  }
  EXPECT_EQ(SumKind(trace_, {ActivityKind::kKernel}).count, 5);
  // Runtime and driver calls together are the RUNTIME table.
  const Sums calls = SumKind(trace_, {ActivityKind::kRuntime, ActivityKind::kDriver});
  EXPECT_EQ(calls.count, QueryInt(path_, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  EXPECT_EQ(calls.total_ns,
            QueryInt(path_, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  // NVTX push/pop and start/end ranges (eventType 59, 60) are the op level.
  const Sums ranges = SumKind(trace_, {ActivityKind::kCpuOp});
  EXPECT_EQ(ranges.count, QueryInt(path_,
                                   "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) "
                                   "AND end IS NOT NULL"));
  EXPECT_EQ(ranges.total_ns, QueryInt(path_,
                                      "SELECT sum(end - start) FROM NVTX_EVENTS WHERE eventType "
                                      "IN (59, 60) AND end IS NOT NULL"));
  EXPECT_EQ(trace_.metadata().base_time_ns,
            QueryInt(path_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"));
}

TEST_F(NsysFixtureTest, ActivityLinksToItsRuntimeCallByCorrelationId) {
  // The runtime call each kernel / memcpy launched from, by the same join in SQL.
  const auto expected =
      Query(path_,
            "SELECT k.start, r.start, s.value FROM ("
            "  SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"
            "  UNION ALL SELECT start, correlationId FROM "
            "  CUPTI_ACTIVITY_KIND_MEMCPY) k "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = "
            "k.correlationId JOIN StringIds s ON s.id = r.nameId "
            "WHERE s.value LIKE 'cuda%' AND s.value NOT LIKE '%\\_v%' ESCAPE '\\' "
            "ORDER BY k.start");
  ASSERT_EQ(expected.size(), 20u);
  size_t checked = 0;
  for (uint32_t i = 0; i < trace_.slices().size(); ++i) {
    const Slice& s = trace_.slices()[i];
    if (s.kind != ActivityKind::kKernel && s.kind != ActivityKind::kMemcpy) continue;
    const uint32_t rt = trace_.Link(i).runtime;
    ASSERT_NE(rt, kNone);
    const Slice& call = trace_.slices()[rt];
    EXPECT_EQ(call.correlation, s.correlation);
    bool found = false;
    for (const auto& row : expected) {
      found = found || (std::stoll(row[0]) == s.ts_ns && std::stoll(row[1]) == call.ts_ns);
    }
    EXPECT_TRUE(found) << trace_.Str(s.name) << " at " << s.ts_ns;
    ++checked;
  }
  EXPECT_EQ(checked, expected.size());
  // Each kernel was launched inside the NVTX range "saxpy": that range is its op (the memcpys,
  // launched outside any range, are their runtime call's).
  const OpSummary ops = ComputeOpSummary(trace_);
  bool saxpy = false;
  for (const OpDeviceTime& op : ops.rows) {
    if (op.name != "saxpy") continue;
    saxpy = true;
    EXPECT_EQ(op.direct_activities, 5);
    EXPECT_EQ(op.direct_device_ns,
              QueryInt(path_, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
  }
  EXPECT_TRUE(saxpy);
}

TEST_F(NsysFixtureTest, ThreadsProcessesAndRankAsNsysDefinesThem) {
  // globalTid: pid = (globalTid / 0x1000000) % 0x1000000, tid = globalTid % 0x1000000.
  const auto ids = Query(path_,
                         "SELECT DISTINCT globalTid / 16777216 % 16777216, globalTid % 16777216 "
                         "FROM CUPTI_ACTIVITY_KIND_RUNTIME");
  ASSERT_EQ(ids.size(), 1u);
  bool thread = false;
  for (const Track& t : trace_.tracks()) {
    if (t.kind != TrackKind::kThread) continue;
    EXPECT_EQ(trace_.processes()[t.process].pid, std::stoll(ids[0][0]));
    if (t.tid == std::stoll(ids[0][1])) {
      thread = true;
      EXPECT_EQ(trace_.Str(t.name), "MPI Rank 0");  // ThreadNames
      EXPECT_EQ(trace_.Str(trace_.processes()[t.process].name), "./saxpy-mpi-cuda");
    }
  }
  EXPECT_TRUE(thread);
  bool rank = false, version = false, gpu = false;
  for (const auto& [key, value] : trace_.metadata().extra) {
    rank = rank || (key == "distributedInfo" && value == R"({"rank": 0})");
    version = version || (key == "nsysExport" &&
                          value.find(R"("EXPORT_SCHEMA_VERSION":"2.9.1")") != std::string::npos);
    gpu = gpu ||
          (key == "deviceProperties" && value.find("NVIDIA A100-SXM4-40GB") != std::string::npos);
  }
  EXPECT_TRUE(rank);
  EXPECT_TRUE(version);
  EXPECT_TRUE(gpu);
}

TEST_F(NsysFixtureTest, MemoryAndGzipGiveTheSameTrace) {
  const std::string bytes = testing::ReadMaybeGzip(path_);
  Trace from_memory;
  ASSERT_TRUE(ImportTraceFromMemory(bytes, &from_memory).ok());
  EXPECT_EQ(from_memory.slices().size(), trace_.slices().size());
  EXPECT_EQ(ReportJson(from_memory), ReportJson(trace_));
  EXPECT_EQ(DetectTraceFormatFromMemory(bytes), TraceFormat::kNsysSqlite);
}

// Every page of the image overwritten in turn: no crash, and an error names the table (and row)
// where reading stopped, with the trace finalized and warned.
TEST_F(NsysFixtureTest, ACorruptPageNamesTheTableAndRow) {
  const std::string bytes = testing::ReadMaybeGzip(path_);
  constexpr size_t kPage = 4096;
  size_t errors = 0;
  for (size_t page = 1; page * kPage < bytes.size(); page += 3) {
    std::string bad = bytes;
    std::fill(bad.begin() + static_cast<std::ptrdiff_t>(page * kPage),
              bad.begin() + static_cast<std::ptrdiff_t>((page + 1) * kPage), '\xA5');
    Trace trace;
    const Status st = ImportTraceFromMemory(bad, &trace);
    EXPECT_TRUE(trace.finalized());
    if (st.ok()) continue;
    ++errors;
    EXPECT_TRUE(st.message().find("table ") != std::string::npos ||
                st.message().find("sqlite_schema") != std::string::npos)
        << st.message();
    EXPECT_FALSE(trace.metadata().warnings.empty());
  }
  EXPECT_GT(errors, 0u);
}

TEST(NsysReaderTest, ColumnsByNameAndAbsentTablesEmpty) {
  testing::ScopedTempDir dir("opscope_nsys_minimal");
  const std::string db = dir.File("minimal.sqlite");
  // Columns in another order than nsys writes them, no RUNTIME, no NVTX.
  Exec(db,
       "CREATE TABLE StringIds (value TEXT, id INTEGER PRIMARY KEY);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (correlationId INTEGER, demangledName INTEGER, "
       "  streamId INTEGER, deviceId INTEGER, end INTEGER, start INTEGER, shortName INTEGER);"
       "INSERT INTO StringIds VALUES ('gemm_kernel', 1), ('gemm', 2);"
       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (9, 1, 3, 1, 250, 100, 2),"
       "  (10, 1, 3, 1, 'late', 300, 2), (11, 1, 4, 1, 600, 500, 2);");
  EXPECT_EQ(DetectTraceFormat(db), TraceFormat::kNsysSqlite);
  Trace trace;
  ImportStats stats;
  ASSERT_TRUE(ImportTrace(db, &trace, &stats).ok());
  ASSERT_EQ(trace.slices().size(), 2u);  // the row with a text end is skipped, with a warning
  EXPECT_EQ(stats.skipped, 1u);
  ASSERT_FALSE(stats.warnings.empty());
  EXPECT_NE(stats.warnings[0].find("table CUPTI_ACTIVITY_KIND_KERNEL row 1"), std::string::npos)
      << stats.warnings[0];
  EXPECT_EQ(trace.Str(trace.slices()[0].name), "gemm_kernel");
  EXPECT_EQ(trace.slices()[0].dur_ns, 150);
  EXPECT_EQ(trace.slices()[0].correlation, 9);
  EXPECT_EQ(trace.Str(trace.processes()[trace.tracks()[trace.slices()[0].track].process].labels),
            "GPU 1");
}

TEST(NsysReaderTest, AnSqliteFileOfSomethingElseIsNotClaimed) {
  testing::ScopedTempDir dir("opscope_nsys_other");
  const std::string db = dir.File("notes.sqlite");
  Exec(
      db,
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes VALUES (1, 'x');");
  EXPECT_EQ(DetectTraceFormat(db), TraceFormat::kUnknown);
  Trace trace;
  const Status st = ImportTrace(db, &trace);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Nsight Systems"), std::string::npos) << st.message();
}

// Two ranks' exports in one folder are a job: each rank from its own "MPI Rank N" thread.
TEST(NsysReaderTest, RankExportsInAFolderAreAJob) {
  ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
  testing::ScopedTempDir dir("opscope_nsys_job");
  const fs::path fixture = testing::FixturesDir() / kFixture;
  const std::string rank0 = dir.File("saxpy0.sqlite"), rank1 = dir.File("saxpy1.sqlite");
  fs::copy_file(fixture, rank0);
  fs::copy_file(fixture, rank1);
  fs::permissions(rank1, fs::perms::owner_write, fs::perm_options::add);
  Exec(rank1,
       "UPDATE StringIds SET value = 'MPI Rank 1' WHERE value = 'MPI Rank 0';"
       "UPDATE NVTX_EVENTS SET text = 'MPI Rank 1' WHERE text = 'MPI Rank 0';");
  std::vector<RankFile> files;
  ASSERT_TRUE(FindRankFiles({dir.path().string()}, &files).ok());
  ASSERT_EQ(files.size(), 2u);
  const std::vector<RankSummary> ranks = LoadRankSummaries(files, 1);
  ASSERT_EQ(ranks.size(), 2u);
  const JobReport report = AnalyzeJob(ranks);
  EXPECT_TRUE(report.error.empty()) << report.error;
  std::vector<int> seen;
  for (const RankSummary& r : ranks) {
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.rank_from_distributed_info);
    seen.push_back(r.rank);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace opscope
