// ReadSmallFile: a small file read whole; a device, a large file, a directory, a named pipe and a
// binary file refused with the file named, without blocking or reading past the limit.
#include "base/small_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace opscope::internal {
namespace {

namespace fs = std::filesystem;

class SmallFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opscope_small_file_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const char* name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(SmallFileTest, ReadsATextFileWhole) {
  std::string text;
  const Status st = ReadSmallFile(Write("a.txt", "x = 1\n"), "config", 64, &text);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(text, "x = 1\n");
  ASSERT_TRUE(ReadSmallFile(Write("b.txt", std::string(64, 'y')), "config", 64, &text).ok());
  EXPECT_EQ(text.size(), 64u);
}

TEST_F(SmallFileTest, RefusesWhatIsNotASmallTextFile) {
  std::string text = "kept?";
  Status st = ReadSmallFile("/dev/zero", "device spec", kMaxSmallFileBytes, &text);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "device spec '/dev/zero' is larger than 1048576 bytes (the limit for "
            "this kind of file)");
  EXPECT_TRUE(text.empty());
  st = ReadSmallFile(Write("big.txt", std::string(65, 'y')), "config", 64, &text);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  st = ReadSmallFile(dir_.string(), "graph file", 64, &text);
  EXPECT_EQ(st.message(), "graph file '" + dir_.string() + "' is a directory, not a file");
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  st = ReadSmallFile(fifo, "graph file", 64, &text);  // no writer: must not block
  EXPECT_EQ(st.message(), "graph file '" + fifo +
                              "' is a named pipe, not a file (give a regular "
                              "file)");
  st = ReadSmallFile(Write("bin", std::string("ab\0c", 4)), "config", 64, &text);
  EXPECT_NE(st.message().find("not a text file (a NUL byte at offset 2)"), std::string::npos);
  EXPECT_EQ(st.offset(), 2u);
  st = ReadSmallFile((dir_ / "missing").string(), "config", 64, &text);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("No such file or directory"), std::string::npos);
  EXPECT_EQ(st.file(), (dir_ / "missing").string());
}

}  // namespace
}  // namespace opscope::internal
