// Helpers for the end-to-end tests: locating the shared fixtures, reading CSV files, and running
// the opscope CLI (or any shell command) as a user would.
#ifndef OPSCOPE_TESTS_ANALYSIS_TEST_SUPPORT_H_
#define OPSCOPE_TESTS_ANALYSIS_TEST_SUPPORT_H_

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/read_file.h"  // ReadMaybeGzip

namespace opscope::testing {

// The shared fixture traces: OPSCOPE_FIXTURES_DIR, which ctest sets from the CMake cache variable
// OPSCOPE_SHARED_DIR (default ../shared beside the source tree). Empty when unset or missing:
// callers must fail, not skip.
inline std::filesystem::path FixturesDir() {
  const char* dir = std::getenv("OPSCOPE_FIXTURES_DIR");
  if (dir == nullptr || !std::filesystem::is_directory(dir)) return {};
  return std::filesystem::canonical(dir);
}

// Why FixturesDir() is empty, for a test's failure message; "" when it is not.
inline std::string FixturesProblem() {
  const char* dir = std::getenv("OPSCOPE_FIXTURES_DIR");
  if (dir == nullptr) return "OPSCOPE_FIXTURES_DIR is not set (run the test through ctest)";
  if (std::filesystem::is_directory(dir)) return "";
  return std::string("OPSCOPE_FIXTURES_DIR=") + dir +
         " is not a directory (configure with -DOPSCOPE_SHARED_DIR=...)";
}

// Every *.json / *.json.gz under `dir`, sorted.
inline std::vector<std::filesystem::path> TraceFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  if (dir.empty() || !std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One TraceLens MI300 fixture: its trace and the folder of TraceLens's perf-report CSVs beside it.
struct TraceLensCase {
  std::filesystem::path trace;
  std::filesystem::path csv_dir;
};

// Every trace under fixtures/traces/tracelens/mi300 with its `<stem>_perf_report_csvs` folder.
inline std::vector<TraceLensCase> TraceLensMi300Cases() {
  std::vector<TraceLensCase> out;
  const std::filesystem::path dir = FixturesDir() / "traces" / "tracelens" / "mi300";
  for (const std::filesystem::path& trace : TraceFiles(dir)) {
    std::string stem = trace.filename().string();
    stem = stem.substr(0, stem.find(".json"));
    out.push_back({trace, dir / (stem + "_perf_report_csvs")});
  }
  return out;
}

// A CSV file as rows of column name -> text (RFC 4180 quoting).
inline std::vector<std::map<std::string, std::string>> ReadCsv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      records.back().push_back(std::move(field));
      field.clear();
      records.emplace_back();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !records.back().empty()) records.back().push_back(std::move(field));
  std::vector<std::map<std::string, std::string>> rows;
  if (records.empty()) return rows;
  const auto& header = records.front();
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() < header.size()) continue;  // blank trailing line
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size(); ++c) row[header[c]] = records[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// True in the sanitizer build (OPSCOPE_SANITIZE): AddressSanitizer's shadow memory and quarantine
// are in every memory figure, and it reserves terabytes of address space, so checks of peak memory
// or runs under an address-space limit are left to the other builds.
#ifdef OPSCOPE_SANITIZE
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// What a command run by RunCommand or RunOpscope did.
struct CommandResult {
  int exit_code = -1;  // the exit status; -1 when it could not start or was killed by a signal
  std::string output;  // stdout, with stderr when the command line merges it
};

// Runs `command` with /bin/sh and collects its stdout. Blocks until the command exits.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  std::FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// This build's CLI: $OPSCOPE_BINARY_DIR/opscope (ctest sets the variable; "build" otherwise).
inline std::filesystem::path OpscopeBinary() {
  const char* dir = std::getenv("OPSCOPE_BINARY_DIR");
  return std::filesystem::path(dir ? dir : "build") / "opscope";
}

// OpscopeBinary() quoted for the shell, to start a command line with.
inline std::string OpscopeCommand() { return "'" + OpscopeBinary().string() + "'"; }

// Where the CLI's stderr goes: into CommandResult::output after stdout's text, or away.
enum class Stderr { kDropped, kMerged };

// Runs `opscope ARGS` (ARGS as the shell reads them: quote paths).
inline CommandResult RunOpscope(const std::string& args, Stderr stderr_to = Stderr::kDropped) {
  return RunCommand(OpscopeCommand() + " " + args +
                    (stderr_to == Stderr::kMerged ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_ANALYSIS_TEST_SUPPORT_H_
