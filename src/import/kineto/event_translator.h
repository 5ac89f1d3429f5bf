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
// Translation is in two steps (chunk_translation.h): a ChunkTranslator turns a run of entries into
// chunk-local records on any thread, and Merge, called in stream order, remaps them to the trace's
// ids and adds them. As an EventSink the translator does both on the calling thread, a batch at a
// time (Flush), so one thread and many take the same path. As the document's sink it also takes
// the top-level values (base time, device type, deviceProperties, distributedInfo, ...).
//
// `trace` and `log` must outlive the translator. Not thread-safe: Merge and the EventSink calls
// come from one thread at a time.
#ifndef OPSCOPE_IMPORT_KINETO_EVENT_TRANSLATOR_H_
#define OPSCOPE_IMPORT_KINETO_EVENT_TRANSLATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/import_log.h"
#include "import/kineto/chunk_translation.h"
#include "import/kineto/event_category.h"
#include "import/kineto/event_parser.h"
#include "import/kineto/intern_cache.h"
#include "import/kineto/slice_stage.h"
#include "import/kineto/track_map.h"
#include "opscope/import.h"

namespace opscope::import {

class EventTranslator final : public DocumentSink {
 public:
  EventTranslator(Trace* trace, const ImportOptions& options, ImportLog* log)
      : trace_(trace),
        options_(options),
        log_(log),
        stats_(log->stats()),
        strings_(trace),
        tracks_(trace),
        own_(options) {
    own_.Start(&pending_);
  }

  // One thread: entries are translated into pending_ and merged by Flush.
  void Begin(uint64_t offset) override { own_.Begin(offset); }
  void Add(const EventFields& f) override { own_.Add(f); }
  void Skip(std::string_view why) override { own_.Skip(why); }
  // Merges what was translated since the last Flush (before the batch's text changes).
  void Flush() override;

  // The document's top-level values: into the trace's metadata, and what they say of the device
  // into the device family.
  void SetSchemaVersion(int64_t version) override;
  void SetBaseTime(int64_t epoch_ns) override;
  void SetTraceName(std::string name) override;
  void SetDeviceType(std::string type) override { device_family_.SetHint(std::move(type)); }
  void AddDropped(std::string reason, uint64_t count) override;
  void AddTopLevelValue(std::string key, std::string raw_json) override;

  // Adds a chunk's records to the trace, after every chunk before it in the stream. Takes the
  // chunk's packed args (ChunkTranslation::packed_args), leaving them empty.
  void Merge(ChunkTranslation& chunk);
  // Readies memory the merge will write next (SliceStage::PrepareSpare). Thread-safe against
  // Merge; called by the parse threads between chunks.
  void PrepareMerge() { stage_.PrepareSpare(); }
  // Ends the import: "B" events never ended are kept with dur 0 (and a warning); the device type,
  // skipped count and warnings go into the metadata; the slices go to the trace, which is
  // finalized (on up to `threads` threads, the caller's included).
  void Finish(int threads = 1);

 private:
  // Merge's work (Merge times it into ImportStats::merge_seconds).
  void MergeRecords(ChunkTranslation& chunk);
  // Trace ids of the chunk's strings, processes and tracks (in the chunk's first-use order).
  void MapIds(ChunkTranslation& chunk);
  // The chunk's notes with local index below `entry`, from `*next` on, to the log.
  void ReplayNotes(const ChunkTranslation& chunk, uint64_t entry, size_t* next);
  void MergeSlices(const ChunkTranslation& chunk, size_t* next_note);
  // A "B" or "E" marker, matched against the open "B"s of its track.
  void MatchBeginEnd(Slice s);

  Trace* trace_;
  const ImportOptions& options_;
  ImportLog* log_;
  ImportStats& stats_;
  InternCache strings_;
  TrackMap tracks_;
  DeviceFamily device_family_;
  ChunkTranslator own_;       // the calling thread's translator
  ChunkTranslation pending_;  // own_'s records not yet merged
  SliceStage stage_;          // slices per track until Finish hands them to the trace
  // Per chunk: trace ids by local id.
  std::vector<StringId> string_map_;
  std::vector<uint32_t> process_map_, track_map_, args_map_;
  std::unordered_map<StringId, ActivityKind> kind_by_cat_;
  std::unordered_map<uint32_t, std::vector<Slice>> open_begins_;  // per track, "B" not yet ended
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_EVENT_TRANSLATOR_H_
