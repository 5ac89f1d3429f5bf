// The UI assets (ui/*) compiled into the binary by embed_assets.cmake: the Explorer's, and the
// HTML report's.
#ifndef OPSCOPE_EXPLORER_ASSETS_H_
#define OPSCOPE_EXPLORER_ASSETS_H_

#include <cstddef>
#include <string_view>

namespace opscope::explorer {

struct Asset {
  const char* path;  // "/index.html"
  const char* mime;  // "text/html; charset=utf-8"
  const unsigned char* data;
  size_t size;
};

// The asset served at `path` (exact match), or nullptr.
const Asset* FindAsset(std::string_view path);

// The HTML report's template, style and scripts (ui/report/, with uPlot from npm), by the same
// kind of path ("/report.js"); inlined into each report, never served.
const Asset* FindReportAsset(std::string_view path);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_ASSETS_H_
