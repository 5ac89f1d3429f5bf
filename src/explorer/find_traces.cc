// FindTraceFiles: which files a path given to `opscope explore` names.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "opscope/explorer.h"

namespace opscope {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A plain .json file is a trace when its first megabyte mentions traceEvents.
bool LooksLikeTrace(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  if (EndsWith(name, ".json.gz")) return true;
  if (!EndsWith(name, ".json")) return false;
  std::ifstream in(p, std::ios::binary);
  std::string head(1 << 20, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"traceEvents\"") != std::string::npos;
}

}  // namespace

Status FindTraceFiles(const std::string& path, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return Status::NotFound(fmt::format("{}: no such file or directory", path), path);
  }
  // A named pipe (`opscope explore <(zcat trace.json.gz)`) is read as the stream it is.
  if (fs::is_regular_file(st) || fs::is_fifo(st)) {
    files->push_back(path);
    return Status::Ok();
  }
  if (!fs::is_directory(st)) {
    return Status::NotFound(fmt::format("{}: not a trace file or a profile directory", path), path);
  }
  std::vector<std::string> found;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && LooksLikeTrace(it->path())) found.push_back(it->path().string());
  }
  if (found.empty()) {
    return Status::NotFound(
        fmt::format("{}: no trace files (*.json with traceEvents, *.json.gz) found in this "
                    "directory",
                    path),
        path);
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return Status::Ok();
}

}  // namespace opscope
