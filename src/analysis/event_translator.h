// Turning traceEvents into the trace model: one event's fields become a slice, an instant,
// counter samples, a flow endpoint or a process/thread name, by its phase ("ph").
//
//   X            a slice (device activity marks its track a device stream)
//   B / E        a slice, begin and end matched per track in stack order
//   i / I        an instant
//   C            one counter sample per numeric series in args
//   s / f / t    flow endpoints (steps are counted, not kept)
//   M            process and thread names, labels and sort indices
//
// Events that cannot be used (missing or out-of-range times, unknown phases, an "E" with no "B")
// are skipped with a warning through the ImportLog. Slices are staged per track (SliceStage) and
// handed to the trace by Finish(), which also finalizes it.
//
// `trace` and `log` must outlive the translator. Not thread-safe.
#ifndef OPSCOPE_ANALYSIS_EVENT_TRANSLATOR_H_
#define OPSCOPE_ANALYSIS_EVENT_TRANSLATOR_H_

#include <simdjson.h>

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/event_category.h"
#include "analysis/event_parser.h"
#include "analysis/import_log.h"
#include "analysis/intern_cache.h"
#include "analysis/slice_stage.h"
#include "analysis/track_map.h"
#include "opscope/analysis.h"

namespace opscope::analysis {

class EventTranslator final : public EventSink {
 public:
  EventTranslator(Trace* trace, const ImportOptions& options, ImportLog* log)
      : trace_(trace),
        options_(options),
        log_(log),
        stats_(log->stats()),
        strings_(trace),
        tracks_(trace) {}

  void Begin(uint64_t offset) override { log_->BeginEvent(offset); }
  void Add(const EventFields& f) override;
  void Skip(std::string_view why) override { log_->SkipEvent(why); }
  // What the categories seen say of the device; the document reader adds what it says itself.
  DeviceFamily& device_family() { return device_family_; }
  // Ends the import: "B" events never ended are kept with dur 0 (and a warning); the device type,
  // skipped count and warnings go into the metadata; the slices go to the trace, which is
  // finalized.
  void Finish();

 private:
  void AddComplete(const EventFields& f);
  void AddBeginEnd(const EventFields& f);
  void AddInstant(const EventFields& f);
  void AddCounter(const EventFields& f);
  void AddFlow(const EventFields& f);
  void AddMetadata(const EventFields& f);
  // ts (and dur when `need_dur`) in ns; false (the event skipped) when missing or out of range.
  bool ReadTimes(const EventFields& f, int64_t* ts, int64_t* dur, bool need_dur);
  // The kind of a category, decided once per distinct category.
  ActivityKind KindOf(StringId cat, std::string_view text);

  Trace* trace_;
  const ImportOptions& options_;
  ImportLog* log_;
  ImportStats& stats_;
  InternCache strings_;
  TrackMap tracks_;
  DeviceFamily device_family_;
  SliceStage stage_;                        // slices per track until Finish hands them to the trace
  simdjson::ondemand::parser args_parser_;  // counter and metadata args
  std::unordered_map<StringId, ActivityKind> kind_by_cat_;
  std::unordered_map<uint32_t, std::vector<Slice>> open_begins_;  // per track, "B" not yet ended
};

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_EVENT_TRANSLATOR_H_
