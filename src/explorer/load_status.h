// The Explorer's answers about traces that are not served yet: the loading progress
// (/api/status) and the error a request gets when it names a trace still loading (503, with
// Retry-After) or one whose import failed (422).
//
// Thread safety: every function reads a LoadedTrace only as its publication contract allows
// (explorer_api.h), so any may run while the traces load.
#ifndef OPSCOPE_EXPLORER_LOAD_STATUS_H_
#define OPSCOPE_EXPLORER_LOAD_STATUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "explorer/explorer_api.h"
#include "explorer/http_server.h"

namespace opscope::explorer {

// Thrown by a request handler that needs trace `index` while it is not served.
class TraceUnavailable {
 public:
  TraceUnavailable(const LoadedTrace& trace, size_t index);
  // 503 {"error","status","loading":true,"phase","trace"} with Retry-After: 1 while it loads;
  // 422 {"error","status","failed":true,"trace","file","offset"} when its import failed.
  void Answer(HttpResponse& res) const;

 private:
  bool failed_ = false;
  std::string message_;
  std::string phase_;
  std::string file_;
  uint64_t offset_ = 0;
  size_t index_ = 0;
};

// 503 {"error": message, "status": 503, "loading": true} with Retry-After: 1.
void SetLoadingError(HttpResponse& res, std::string_view message);

// True when no trace is still loading (each is served or failed).
bool AllLoaded(const std::vector<std::unique_ptr<LoadedTrace>>& traces);

// {"ready": AllLoaded, "job": `job` (none, loading, ready), "traces":
// [{"index","name","source","phase","bytes_read","bytes_total",
//  "fraction" (of bytes_total read; 0 when unknown), "mb_per_s" (import speed so far, 1 MB =
//  1e6 bytes), "seconds" (since loading began; until served or failed once done),
//  "import_seconds" (once imported), and for a failed one "error", "file", "offset"}]}.
void WriteLoadStatus(const std::vector<std::unique_ptr<LoadedTrace>>& traces, std::string_view job,
                     JsonWriter* w);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_LOAD_STATUS_H_
