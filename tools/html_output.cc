// --html FILE of `opscope report`, `diff` and `check` (tools/html_output.h).
#include "tools/html_output.h"

#include <cstdio>

#include "opscope/html_report.h"

namespace opscope::tools {

bool WriteHtmlOutput(const char* command, const std::string& path, std::string_view html) {
  const Status st = WriteHtmlReport(path, html);
  if (!st.ok()) {
    std::fprintf(stderr, "opscope %s: %s\n", command, st.message().c_str());
    return false;
  }
  std::fprintf(stderr, "opscope %s: wrote %s (%.1f KB, self-contained HTML)\n", command,
               path.c_str(), static_cast<double>(html.size()) / 1024.0);
  return true;
}

}  // namespace opscope::tools
