// Finding a job's rank files and the rank a path names.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "opscope/job.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A .json.gz file is taken as a trace; a plain .json file when its first megabyte names
// traceEvents (folders also hold configs and Neuron's other JSON outputs).
bool LooksLikeTrace(const fs::path& p) {
  const std::string name = p.filename().string();
  if (EndsWith(name, ".json.gz")) return true;
  if (!EndsWith(name, ".json")) return false;
  std::ifstream in(p, std::ios::binary);
  std::string head(1 << 20, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"traceEvents\"") != std::string::npos;
}

// The first `rank[-_]?N` in `name` (case-insensitive), or -1.
int RankInName(std::string_view name) {
  for (size_t i = 0; i + 4 < name.size(); ++i) {
    bool match = true;
    for (size_t k = 0; k < 4 && match; ++k) {
      match = std::tolower(static_cast<unsigned char>(name[i + k])) == "rank"[k];
    }
    if (!match) continue;
    size_t j = i + 4;
    if (j < name.size() && (name[j] == '-' || name[j] == '_')) ++j;
    const size_t digits = j;
    int64_t value = 0;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) &&
           value < (1 << 24)) {
      value = value * 10 + (name[j] - '0');
      ++j;
    }
    if (j > digits) return static_cast<int>(value);
  }
  return -1;
}

Status AddPath(const std::string& path, std::vector<RankFile>* files) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return Status::NotFound(fmt::format("{}: no such file or directory", path), path);
  }
  std::vector<fs::path> found;
  if (fs::is_regular_file(st)) {
    found.emplace_back(path);
  } else if (fs::is_directory(st)) {
    for (fs::recursive_directory_iterator
             it(path, fs::directory_options::skip_permission_denied, ec),
         end;
         it != end; it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file(ec) && LooksLikeTrace(it->path())) found.push_back(it->path());
    }
    if (found.empty()) {
      return Status::NotFound(
          fmt::format("{}: no trace files (*.json with traceEvents, *.json.gz) in this directory",
                      path),
          path);
    }
  } else {
    return Status::NotFound(fmt::format("{}: not a trace file or a directory of traces", path),
                            path);
  }
  for (const fs::path& p : found) {
    RankFile f;
    f.path = p.string();
    f.bytes = fs::file_size(p, ec);
    if (ec) f.bytes = 0;
    // Only names below the folder the user gave count: its own name and its parents' may
    // contain anything.
    const fs::path below = fs::is_directory(st) ? p.lexically_relative(path) : p;
    f.name_rank = RankFromPath(below.empty() ? f.path : below.string());
    files->push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace

int RankFromPath(const std::string& path) {
  for (fs::path p(path); !p.empty() && p.has_filename(); p = p.parent_path()) {
    const int rank = RankInName(p.filename().string());
    if (rank >= 0) return rank;
    if (p == p.parent_path()) break;
  }
  return -1;
}

Status FindRankFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files) {
  std::vector<RankFile> out;
  for (const std::string& path : paths) {
    Status st = AddPath(path, &out);
    if (!st.ok()) return st;
  }
  std::sort(out.begin(), out.end(),
            [](const RankFile& a, const RankFile& b) { return a.path < b.path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const RankFile& a, const RankFile& b) { return a.path == b.path; }),
            out.end());
  *files = std::move(out);
  return Status::Ok();
}

}  // namespace opscope
