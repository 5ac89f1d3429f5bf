// What an import reports besides the trace: events seen, events skipped and the first warnings.
#ifndef OPSCOPE_ANALYSIS_IMPORT_LOG_H_
#define OPSCOPE_ANALYSIS_IMPORT_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "opscope/analysis.h"

namespace opscope::analysis {

// Counts events into ImportStats and keeps the first options.max_warning_messages warnings. Every
// message about an event names its index in traceEvents and its byte offset. `stats` must outlive
// the log. Not thread-safe.
class ImportLog {
 public:
  ImportLog(ImportStats* stats, size_t max_messages) : stats_(stats), max_messages_(max_messages) {}

  // Counts the next traceEvents entry, which starts at byte `offset` of the JSON stream.
  void BeginEvent(uint64_t offset) {
    ++stats_->events;
    event_offset_ = offset;
  }
  // Index in traceEvents of the entry being read.
  uint64_t event_index() const { return stats_->events - 1; }

  // Records a warning; `skipped` counts the current event as skipped.
  void Warn(std::string message, bool skipped) {
    if (skipped) ++stats_->skipped;
    if (stats_->warnings.size() < max_messages_) stats_->warnings.push_back(std::move(message));
  }
  // Skips the current event: "traceEvents entry N at byte B: WHY; event skipped".
  void SkipEvent(std::string_view why) {
    Warn("traceEvents entry " + std::to_string(event_index()) + " at byte " +
             std::to_string(event_offset_) + ": " + std::string(why) + "; event skipped",
         true);
  }

  ImportStats& stats() { return *stats_; }

 private:
  ImportStats* stats_;
  size_t max_messages_;
  uint64_t event_offset_ = 0;  // stream offset of the event being read
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_IMPORT_LOG_H_
