// What an import reports besides the trace: events seen, events skipped and the first warnings.
#ifndef OPSCOPE_IMPORT_IMPORT_LOG_H_
#define OPSCOPE_IMPORT_IMPORT_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "opscope/import.h"

namespace opscope::import {

// Counts events into ImportStats and keeps the first options.max_warning_messages warnings. Every
// message about an event names its index in traceEvents and its byte offset. `stats` must outlive
// the log. Not thread-safe.
class ImportLog {
 public:
  ImportLog(ImportStats* stats, size_t max_messages) : stats_(stats), max_messages_(max_messages) {}

  // Records a warning; `skipped` counts the current event as skipped.
  void Warn(std::string message, bool skipped) {
    if (skipped) ++stats_->skipped;
    if (stats_->warnings.size() < max_messages_) stats_->warnings.push_back(std::move(message));
  }
  // A warning about traceEvents entry `index` at byte `offset`: when `skipped`, "traceEvents entry
  // N at byte B: WHY; event skipped" (and counted), else "traceEvents entry N: WHY".
  void NoteEvent(uint64_t index, uint64_t offset, std::string_view why, bool skipped) {
    std::string head = "traceEvents entry " + std::to_string(index);
    if (skipped) {
      Warn(
          head + " at byte " + std::to_string(offset) + ": " + std::string(why) + "; event skipped",
          true);
    } else {
      Warn(head + ": " + std::string(why), false);
    }
  }

  ImportStats& stats() { return *stats_; }

 private:
  ImportStats* stats_;
  size_t max_messages_;
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_IMPORT_LOG_H_
