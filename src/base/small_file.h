// Reading a small file whole (a device config, a model graph, a device spec): a size limit that
// holds whatever the path names (a device such as /dev/zero, a huge file), and no wait on a named
// pipe.
#ifndef OPSCOPE_BASE_SMALL_FILE_H_
#define OPSCOPE_BASE_SMALL_FILE_H_

#include <cstddef>
#include <string>

#include "opscope/status.h"

namespace opscope::internal {

// The limit on every small text input (configs, graphs, specs): they are a few lines.
inline constexpr size_t kMaxSmallFileBytes = size_t{1} << 20;

// Reads `path` into *text, reading at most one byte past `max_bytes`. Errors name the file with
// `what` ("device spec", ...): kNotFound when it does not exist or cannot be opened, kInvalidInput
// for a directory, a named pipe or socket (refused before any read: a pipe without a writer
// would block), a file larger than `max_bytes` or one with NUL bytes (not text), kIoError when a
// read fails. *text is left empty on error.
Status ReadSmallFile(const std::string& path, const char* what, size_t max_bytes,
                     std::string* text);

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_SMALL_FILE_H_
