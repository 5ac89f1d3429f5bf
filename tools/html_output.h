// Writing a command's self-contained HTML report (--html FILE) and saying where it went.
#ifndef OPSCOPE_TOOLS_HTML_OUTPUT_H_
#define OPSCOPE_TOOLS_HTML_OUTPUT_H_

#include <string>
#include <string_view>

namespace opscope::tools {

// Row limit of the HTML report's tables when --rows was not given (the text's 20 is for a
// terminal).
inline constexpr int kHtmlDefaultRows = 500;

// Writes `html` to `path` and prints "opscope COMMAND: wrote PATH (N KB)" on stderr; false (the
// error printed, naming the path) when it cannot.
bool WriteHtmlOutput(const char* command, const std::string& path, std::string_view html);

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_HTML_OUTPUT_H_
