// Conformance of opscope's Parquet reader on the format's own test files (apache/parquet-testing,
// in the shared fixtures): each file either decodes to exactly what hyparquet (an independent
// pure-JavaScript reader, canonical_dump.mjs) decodes, in the canonical JSON form of
// canonical_json.h, or is refused with an error naming the file, the column and the reason.
// Which files are refused, and why, is listed below; a file that changes category fails.
//
// Needs node (skipped with a message without it); installs hyparquet with `npm ci` into this
// folder's node_modules when it is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"
#include "tests/import/parquet/canonical_json.h"

namespace opscope::parquet {
namespace {

namespace fs = std::filesystem;

enum class Category {
  kEqual,          // decodes to exactly hyparquet's values
  kRefused,        // opscope refuses it, naming the file, the column (where one is at fault), why
  kOracleDiffers,  // decodes; hyparquet's values are wrong in `rows_differing` rows (see `why`)
};

struct Expectation {
  Category category;
  std::string error;  // kRefused: what the message must contain
  std::string why;
  bool equal_unchecked = false;  // kRefused for a checksum: equal to hyparquet with checks off
  int rows_differing = 0;        // kOracleDiffers
};

// Every file not listed here must decode to exactly hyparquet's values.
const std::map<std::string, Expectation>& Expected() {
  static const std::map<std::string, Expectation> kExpected = {
      {"datapage_v1-corrupt-checksum.parquet",
       {Category::kRefused, "column 'a' row group 0, page at byte 4: page checksum mismatch",
        "its first page's CRC-32 does not match the page (the file exists to test this); "
        "hyparquet does not check CRCs",
        true, 0}},
      {"rle-dict-uncompressed-corrupt-checksum.parquet",
       {Category::kRefused,
        "column 'long_field' row group 0, page at byte 4: page checksum mismatch",
        "its dictionary page's CRC-32 does not match (the file exists to test this); hyparquet "
        "does not check CRCs",
        true, 0}},
      {"nation.dict-malformed.parquet",
       {Category::kRefused,
        "column 'name' row group 0, page at byte 421: page of 28 bytes runs "
        "past the column chunk's end",
        "malformed: a page runs past its column chunk (hyparquet refuses it too)", false, 0}},
      {"large_string_map.brotli.parquet",
       {Category::kRefused,
        "column 'arr.key_value.key' row group 0, page at byte 4: page of 1073741828 bytes "
        "uncompressed, over the reader's limit of 268435456 (ReadOptions::max_page_bytes)",
        "unsupported by default: a 1 GiB page (two 1 GiB strings from 4 KB of brotli) is over "
        "the page limit that stops decompression bombs; not given to hyparquet, which needs "
        "gigabytes of memory for it",
        false, 0}},
      {"int96_from_spark.parquet",
       {Category::kOracleDiffers, "",
        "row 5 holds an INT96 whose nanoseconds-of-day word has its top bit set (Spark wrote a "
        "year-290000 timestamp); hyparquet combines the words as BigInt(day) << 64n | "
        "signedLow, which drops the day when the low word is negative",
        false, 1}},
  };
  return kExpected;
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

bool HaveNode() { return std::system("node --version > /dev/null 2>&1") == 0; }

class ParquetConformanceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* fixtures = std::getenv("OPSCOPE_FIXTURES_DIR");
    const char* source = std::getenv("OPSCOPE_SOURCE_DIR");
    if (fixtures == nullptr || source == nullptr) {
      problem_ = "OPSCOPE_FIXTURES_DIR / OPSCOPE_SOURCE_DIR unset (run the test through ctest)";
      return;
    }
    dir_ = fs::path(fixtures) / "parquet" / "parquet-testing";
    script_dir_ = fs::path(source) / "tests" / "import" / "parquet";
    if (!fs::is_directory(dir_)) {
      problem_ = "no Parquet fixtures at " + dir_.string();
      return;
    }
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".parquet") files_.push_back(e.path());
    }
    std::sort(files_.begin(), files_.end());
    if (!HaveNode()) {
      no_node_ = true;
      return;
    }
    if (!fs::exists(script_dir_ / "node_modules" / "hyparquet" / "package.json")) {
      const std::string npm =
          "cd '" + script_dir_.string() + "' && npm ci --no-audit --no-fund > /dev/null 2>&1";
      if (std::system(npm.c_str()) != 0) {
        problem_ = "npm ci failed in " + script_dir_.string();
        return;
      }
    }
    out_ = std::make_unique<opscope::testing::ScopedTempDir>("parquet_conformance");
    std::string cmd = "node '" + (script_dir_ / "canonical_dump.mjs").string() + "' '" +
                      out_->path().string() + "'";
    for (const fs::path& f : files_) {
      const auto it = Expected().find(f.filename().string());
      // A file refused for its size is not handed to hyparquet (it would need gigabytes).
      if (it != Expected().end() && it->second.error.find("max_page_bytes") != std::string::npos) {
        continue;
      }
      cmd += " '" + f.string() + "'";
    }
    if (std::system(cmd.c_str()) != 0) problem_ = "node " + cmd + " failed";
  }
  static void TearDownTestSuite() { out_.reset(); }

  static inline fs::path dir_;
  static inline fs::path script_dir_;
  static inline std::vector<fs::path> files_;
  static inline std::string problem_;
  static inline bool no_node_ = false;
  static inline std::unique_ptr<opscope::testing::ScopedTempDir> out_;
};

// The first differing line of two canonical forms, for the failure message.
std::string FirstDifference(const std::string& ours, const std::string& theirs, int* differing) {
  const std::vector<std::string> a = Lines(ours);
  const std::vector<std::string> b = Lines(theirs);
  std::string first;
  *differing = static_cast<int>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] == b[i]) continue;
    ++*differing;
    if (first.empty()) {
      first = "line " + std::to_string(i + 1) + ":\n  opscope:   " + a[i].substr(0, 400) +
              "\n  hyparquet: " + b[i].substr(0, 400);
    }
  }
  if (first.empty() && a.size() != b.size()) {
    first =
        "opscope has " + std::to_string(a.size()) + " lines, hyparquet " + std::to_string(b.size());
  }
  return first;
}

TEST_F(ParquetConformanceTest, EveryFixtureDecodesAsHyparquetOrIsRefused) {
  ASSERT_EQ(problem_, "");
  ASSERT_GE(files_.size(), 60u) << "the parquet-testing fixtures look incomplete in " << dir_;
  for (const auto& [name, e] : Expected()) {
    EXPECT_TRUE(fs::exists(dir_ / name)) << name << " is listed but missing";
  }
  if (no_node_) GTEST_SKIP() << "node is not installed: cannot run hyparquet, the oracle";
  int equal = 0;
  int refused = 0;
  for (const fs::path& f : files_) {
    SCOPED_TRACE(f.filename().string());
    const auto it = Expected().find(f.filename().string());
    const Expectation e =
        it == Expected().end() ? Expectation{Category::kEqual, "", "", false, 0} : it->second;
    std::string ours;
    const Status st = CanonicalJson(f.string(), {}, &ours);
    const fs::path theirs_path = out_->path() / (f.filename().string() + ".json");
    const std::string theirs = fs::exists(theirs_path) ? ReadText(theirs_path) : "";
    if (e.category == Category::kRefused) {
      ASSERT_FALSE(st.ok()) << "now decodes; it was expected to be refused: " << e.why;
      EXPECT_EQ(st.message().rfind(f.string() + ": ", 0), 0u) << st.message();
      EXPECT_NE(st.message().find(e.error), std::string::npos) << st.message();
      ++refused;
      if (e.equal_unchecked) {
        ReadOptions unchecked;
        unchecked.verify_checksums = false;
        ASSERT_TRUE(CanonicalJson(f.string(), unchecked, &ours).ok());
        EXPECT_EQ(ours, theirs) << "with checksums off";
      }
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_TRUE(fs::exists(theirs_path))
        << "hyparquet refused it: " << ReadText(out_->path() / (f.filename().string() + ".error"));
    int differing = 0;
    const std::string diff = FirstDifference(ours, theirs, &differing);
    if (e.category == Category::kEqual) {
      EXPECT_EQ(differing, 0) << diff;
      ++equal;
    } else {
      EXPECT_EQ(differing, e.rows_differing) << e.why << "\n" << diff;
    }
    // The same values on two threads (row groups decoded in parallel, merged in order).
    std::string threaded;
    ReadOptions two;
    two.threads = 2;
    ASSERT_TRUE(CanonicalJson(f.string(), two, &threaded).ok());
    EXPECT_EQ(threaded, ours) << "on 2 threads";
  }
  std::printf(
      "parquet conformance: %d files equal to hyparquet, %d refused as listed, %zu "
      "files in all\n",
      equal, refused, files_.size());
}

}  // namespace
}  // namespace opscope::parquet
