// Progress of long work on stderr, for people at a terminal: a bar with the bytes done of the
// total, the rate and the time left, redrawn in place at most ten times a second.
//
//   import trace.json.gz  [##########..........]  412 / 1024 MB  560 MB/s  1.1 s left
//
// Nothing is drawn when stderr is not a terminal or when the user asked for quiet (--quiet).
// Not thread-safe: one thread updates a bar.
#ifndef OPSCOPE_TOOLS_PROGRESS_H_
#define OPSCOPE_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "opscope/import.h"

namespace opscope::tools {

class ProgressBar {
 public:
  // `label` names the work ("import trace.json"). Drawn only when `quiet` is false and stderr is a
  // terminal.
  ProgressBar(std::string label, bool quiet);
  ~ProgressBar() { Done(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }
  // `done` of `total` bytes (total 0: unknown, no bar or time left).
  void Update(uint64_t done, uint64_t total);
  // `done` of `total` items named `unit` ("rank files"), with a bar and the time left.
  void UpdateCount(uint64_t done, uint64_t total, const char* unit);
  // Clears the line (the work's own output follows on a clean terminal).
  void Done();
  // Update as a callback for ImportOptions::progress; empty when the bar is not drawn.
  std::function<void(uint64_t, uint64_t)> Callback();

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_PROGRESS_H_
