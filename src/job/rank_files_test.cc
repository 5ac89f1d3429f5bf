// FindRankFiles: trace files named directly or found in folders, and a NotFound Status naming the
// path for a path that is missing, holds no trace, or is neither a file nor a folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "opscope/import.h"
#include "opscope/job.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

class RankFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("opscope_rank_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "rank_1");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

  fs::path dir_;
};

TEST_F(RankFilesTest, FindsTracesInFoldersSortedWithTheirRanks) {
  Write(dir_ / "rank_1" / "b.json", R"({"traceEvents": []})");
  Write(dir_ / "rank-0.json", R"({"traceEvents": []})");
  Write(dir_ / "notes.txt", "not a trace");
  std::vector<RankFile> files;
  const Status st = FindRankFiles({dir_.string()}, &files);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, (dir_ / "rank-0.json").string());
  EXPECT_EQ(files[0].name_rank, 0);
  EXPECT_EQ(files[1].path, (dir_ / "rank_1" / "b.json").string());
  EXPECT_EQ(files[1].name_rank, 1);
}

// A rank file that cannot be read as a file (a symlink loop, a device) is listed, not left out
// unsaid: its import fails naming it and saying why, and the job reports that rank as unread.
TEST_F(RankFilesTest, UnreadableRankFilesAreListedAndTheirImportSaysWhy) {
  Write(dir_ / "rank_0.json", R"({"traceEvents": []})");
  fs::create_symlink("rank_2.json", dir_ / "rank_2.json");  // points at itself
  fs::create_symlink("/dev/zero", dir_ / "rank_3.json");
  std::vector<RankFile> files;
  ASSERT_TRUE(FindRankFiles({dir_.string()}, &files).ok());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[1].path, (dir_ / "rank_2.json").string());
  EXPECT_EQ(files[2].path, (dir_ / "rank_3.json").string());
  Trace trace;
  ImportStats stats;
  Status st = ImportTrace(files[1].path, &trace, &stats);
  EXPECT_EQ(st.message(), "cannot open " + files[1].path + ": Too many levels of symbolic links");
  Trace device;
  st = ImportTrace(files[2].path, &device, &stats);
  EXPECT_EQ(st.message(), "cannot open " + files[2].path + ": it is a device, not a trace file");
  EXPECT_EQ(st.file(), files[2].path);
}

TEST_F(RankFilesTest, MissingPathIsNotFoundAndNamesThePath) {
  const std::string missing = (dir_ / "nope").string();
  std::vector<RankFile> files = {RankFile{"kept", 1, -1}};
  const Status st = FindRankFiles({missing}, &files);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), missing + ": no such file or directory");
  EXPECT_EQ(st.file(), missing);
  ASSERT_EQ(files.size(), 1u);  // unchanged on error
  EXPECT_EQ(files[0].path, "kept");
}

TEST_F(RankFilesTest, FolderWithoutTracesIsNotFound) {
  const std::string empty = (dir_ / "rank_1").string();
  std::vector<RankFile> files;
  const Status st = FindRankFiles({empty}, &files);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message().rfind(empty + ": no profiles in this folder; looked for", 0), 0u)
      << st.message();
  EXPECT_EQ(st.file(), empty);
}

}  // namespace
}  // namespace opscope
