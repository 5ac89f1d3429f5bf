// Finding a job's rank files and the rank a path names.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "opscope/import.h"
#include "opscope/job.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

// The bytes a profile takes on disk: a file's size, or a folder's files' (a profile made of
// several files), for spreading a job's ranks by size.
uint64_t StoredBytes(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_directory(p, ec)) {
    const uint64_t bytes = fs::file_size(p, ec);
    return ec ? 0 : bytes;
  }
  uint64_t bytes = 0;
  for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return bytes;
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
  if (!fs::is_regular_file(st) && !fs::is_directory(st)) {
    return Status::NotFound(fmt::format("{}: not a trace file or a directory of traces", path),
                            path);
  }
  std::vector<std::string> traces;
  if (Status found = FindTraces(path, &traces); !found.ok()) return found;
  for (const std::string& trace : traces) {
    const fs::path p(trace);
    RankFile f;
    f.path = trace;
    f.bytes = StoredBytes(p);
    // Only names below the folder the user gave count: its own name and its parents' may
    // contain anything.
    const fs::path below = fs::is_directory(st) ? p.lexically_relative(path) : p;
    f.name_rank = RankFromPath(below.empty() ? f.path : below.string());
    // A profile of several hosts is a rank per host. One that cannot be listed stays whole: its
    // import then says what is wrong with it.
    std::vector<std::string> parts;
    if (!ListTraceParts(trace, &parts).ok()) parts.clear();
    for (size_t i = 0; i < parts.size(); ++i) {
      RankFile part = f;
      part.part = parts[i];
      part.name_rank = static_cast<int>(i);
      part.bytes = f.bytes / parts.size();
      files->push_back(std::move(part));
    }
    if (parts.empty()) files->push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace

std::string RankFileName(const std::string& path, const std::string& part) {
  return part.empty() ? path : path + "#" + part;
}

int RankFromPath(const std::string& path) {
  for (fs::path p(path); !p.empty() && p.has_filename(); p = p.parent_path()) {
    const int rank = RankInName(p.filename().string());
    if (rank >= 0) return rank;
    if (p == p.parent_path()) break;
  }
  return -1;
}

Status FindRankFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files) {
  if (paths.empty()) {  // as the CLI, which requires a path: an empty job is no job
    return Status::NotFound(
        "no trace given: name a trace file, a folder of rank traces, or a list of rank files");
  }
  std::vector<RankFile> out;
  for (const std::string& path : paths) {
    Status st = AddPath(path, &out);
    if (!st.ok()) return st;
  }
  // A profile's parts are in name order already (ListTraceParts).
  std::sort(out.begin(), out.end(), [](const RankFile& a, const RankFile& b) {
    return a.path != b.path ? a.path < b.path : a.part < b.part;
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const RankFile& a, const RankFile& b) {
                          return a.path == b.path && a.part == b.part;
                        }),
            out.end());
  *files = std::move(out);
  return Status::Ok();
}

}  // namespace opscope
