// JSON string escaping for everything the profiler writes.
#ifndef OPSCOPE_BASE_JSON_ESCAPE_H_
#define OPSCOPE_BASE_JSON_ESCAPE_H_

#include <string>
#include <string_view>

namespace opscope::internal {

// Appends `s` as a quoted JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 bytes replaced by U+FFFD, so the output is always valid JSON and valid UTF-8.
void AppendJsonString(std::string& out, std::string_view s);
std::string JsonString(std::string_view s);
// `s` with its invalid UTF-8 bytes replaced by U+FFFD, as AppendJsonString writes them (for text
// from binary formats, whose strings are bytes).
std::string ValidUtf8(std::string_view s);

// Python's len() and slicing on UTF-8 text: code points, not bytes.
size_t Utf8Length(std::string_view s);
std::string_view Utf8Prefix(std::string_view s, size_t code_points);

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_JSON_ESCAPE_H_
