// Translating a run of traceEvents entries into chunk-local staging, so that chunks can be
// translated on any thread and merged into the trace model in stream order.
//
// ChunkTranslator is the EventSink that turns each event's fields into model records, as
// EventTranslator used to do straight into the trace, but with chunk-local ids: strings are
// numbered in the order the chunk first uses them, processes and tracks likewise (keyed by pid and
// tid as the JSON gives them), args are kept as views of their text, and warnings are kept with the
// chunk-local index and byte offset of their entry. EventTranslator::Merge then remaps the ids to
// the trace's, in the chunk's own first-use order, so strings, processes, tracks and arg handles
// get the numbers a one-thread import gives them, and replays the warnings with their global index.
// What depends on earlier chunks stays in the merge: "B"/"E" matching (the chunk records both as
// markers in slice order) and the device family.
//
// Ownership: a ChunkTranslation's views point into the chunk's batch text (args) or its own string
// storage; the batch text must stay unchanged until the chunk is merged. A ChunkTranslator is used
// by one thread at a time; the translations it fills may move between threads.
#ifndef OPSCOPE_IMPORT_KINETO_CHUNK_TRANSLATION_H_
#define OPSCOPE_IMPORT_KINETO_CHUNK_TRANSLATION_H_

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/kineto/event_parser.h"
#include "opscope/import.h"
#include "opscope/trace.h"
#include "trace/packed_args.h"

namespace opscope::import {

// The records of one chunk of entries, with chunk-local ids.
struct ChunkTranslation {
  // Slice::lane of a slice record: a complete slice, or the marker of a "B" (the slice it opens)
  // or an "E" (ts_ns is the end; parent is the entry's local index) matched in the merge.
  static constexpr uint16_t kComplete = 0, kBegin = 1, kEnd = 2;

  // How a process or track is named in the JSON: numeric ids, or the original text (pid_text /
  // tid_text, as TrackMap takes them).
  struct ProcessKey {
    int64_t pid = 0;
    std::string_view pid_text;
  };
  struct TrackKey {
    uint32_t process = 0;  // local process
    int64_t tid = 0;
    std::string_view tid_text;
    TrackKind kind = TrackKind::kThread;  // at first use
    uint32_t series = kNone;              // counter tracks: local string id of the series
    bool device = false;                  // device activity was seen on it (TrackMap::MarkDevice)
  };
  struct FlowEndpoint {
    uint64_t id;
    int64_t ts_ns;
    StringId category, name;  // local
    uint32_t track;           // local
    bool is_start, binds_enclosing;
  };
  // A process or thread name, label or sort index ("M" events), applied in order.
  struct MetadataUpdate {
    enum Field : uint8_t { kProcessName, kProcessLabels, kProcessSort, kThreadName, kThreadSort };
    Field field;
    uint32_t target;  // local process, or local track for the thread fields
    StringId value;   // local string (names, labels)
    int64_t sort_index;
  };
  // A warning about an entry: "traceEvents entry N at byte B: WHY; event skipped" when `skipped`,
  // else "traceEvents entry N: WHY".
  struct Note {
    uint64_t entry;  // local index
    uint64_t offset;
    bool skipped;
    std::string why;
  };

  std::vector<std::string_view> strings;  // by local id; 0 is ""
  std::vector<ProcessKey> processes;      // by local id, in first-use order
  std::vector<TrackKey> tracks;           // by local id, in first-use order
  std::vector<StringId> categories;       // local ids used as a slice's category, first-use order
  std::vector<std::string_view> args;     // by local handle, in event order
  // `args` packed into arg store blocks by the thread that translated the chunk (empty when the
  // merge adds them one by one); the merge takes them.
  PackedArgs packed_args;
  std::vector<Slice> slices;  // local ids; lane says which record (see above)
  std::vector<Instant> instants;
  std::vector<CounterSample> counters;
  std::vector<FlowEndpoint> flows;
  std::vector<MetadataUpdate> metadata;
  std::vector<Note> notes;
  uint64_t entries = 0;  // traceEvents entries this chunk holds
  uint64_t slice_events = 0, instant_events = 0, counter_samples = 0, flow_endpoints = 0,
           metadata_events = 0;
  // Copies of strings that are not in the batch text (unescaped, or built), in blocks that never
  // move.
  std::vector<std::unique_ptr<char[]>> text_blocks;
  size_t block_size = 0, block_used = 0;  // of the last block
  size_t first_block_size = 0;

  // Empties it for the next chunk, keeping capacity.
  void Clear();
  // A copy of `s` that lives as long as the translation (until Clear).
  std::string_view Keep(std::string_view s);
};

// Fills a ChunkTranslation from the parser's calls. Not thread-safe; one per thread.
class ChunkTranslator final : public EventSink {
 public:
  explicit ChunkTranslator(const ImportOptions& options);

  // Translates the following entries into `out` (cleared), until the next Start.
  void Start(ChunkTranslation* out);

  void Begin(uint64_t offset) override {
    offset_ = offset;
    ++out_->entries;
  }
  void Add(const EventFields& f) override;
  void Skip(std::string_view why) override { Note(why, true); }

 private:
  void AddComplete(const EventFields& f);
  void AddBeginEnd(const EventFields& f);
  void AddInstant(const EventFields& f);
  void AddCounter(const EventFields& f);
  void AddFlow(const EventFields& f);
  void AddMetadata(const EventFields& f);
  bool ReadTimes(const EventFields& f, int64_t* ts, int64_t* dur, bool need_dur);
  void Note(std::string_view why, bool skipped);
  // Chunk-local ids.
  StringId Intern(std::string_view s);
  StringId Category(std::string_view s, ActivityKind* kind);
  uint32_t ProcessOf(const EventFields& f);
  uint32_t TrackOf(const EventFields& f, TrackKind kind);
  uint32_t CounterTrack(uint32_t process, StringId series);
  uint32_t Args(std::string_view text);
  // Whether an event's args are stored: it has some, and the options keep them for its kind and
  // name (`name`: its local id). ImportOptions::keep_args_of is asked once per name and kind in a
  // chunk, not once per event: a job's filter takes a lock and hashes the name (2% of a job's
  // import when asked per event).
  bool KeepsArgs(ActivityKind kind, StringId name, const EventFields& f);

  // A pid or tid as the JSON gives it: a number (numeric text parsed), or other text by its local
  // string id.
  struct IdKey {
    int64_t value = 0;
    bool text = false;
    bool operator==(const IdKey& o) const { return value == o.value && text == o.text; }
  };
  struct PairKey {
    IdKey a, b;
    bool operator==(const PairKey& o) const { return a == o.a && b == o.b; }
  };
  struct PairHash {
    size_t operator()(const PairKey& k) const {
      uint64_t h = static_cast<uint64_t>(k.a.value) * 0x9E3779B97F4A7C15ull;
      h ^= (static_cast<uint64_t>(k.b.value) + (k.a.text ? 1 : 0) + (k.b.text ? 2 : 0)) *
           0xbf58476d1ce4e5b9ull;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct Slot {
    std::string_view text;
    StringId id = kNone;
    uint32_t generation = 0;
  };
  // A chunk uses a few hundred distinct strings at most; every import thread holds one table.
  static constexpr int kSlotBits = 10;
  IdKey KeyOf(int64_t number, std::string_view text);
  // A copy of pid or tid text that lives with the translation.
  std::string_view Kept(std::string_view text) {
    auto it = text_keys_.find(text);
    return it != text_keys_.end() ? it->first : out_->Keep(text);
  }

  const ImportOptions& options_;
  ChunkTranslation* out_ = nullptr;
  uint64_t offset_ = 0;
  uint32_t generation_ = 0;  // string slots of older generations are empty
  std::vector<Slot> string_slots_;
  std::unordered_map<std::string_view, StringId> string_ids_;
  std::vector<ActivityKind> kind_of_;  // by local string id (categories; kOther until known)
  std::vector<bool> is_category_;      // by local string id
  // By local string id, keep_args_of's answers in this chunk: bit k set when asked for kind k,
  // bit 16 + k its answer.
  std::vector<uint32_t> keeps_args_of_;
  static_assert(static_cast<unsigned>(ActivityKind::kOther) < 16);
  std::unordered_map<std::string_view, int64_t> text_keys_;    // non-numeric pid/tid text
  std::unordered_map<PairKey, uint32_t, PairHash> processes_;  // (pid, -) -> local process
  std::unordered_map<PairKey, uint32_t, PairHash> tracks_;     // (pid, tid) -> local track
  std::unordered_map<uint64_t, uint32_t> counter_tracks_;      // (process << 32 | series) -> track
  // The last track looked up: events come in runs on one thread.
  PairKey last_track_key_;
  uint32_t last_track_ = kNone;
  simdjson::ondemand::parser args_parser_;  // counter and metadata args
};

}  // namespace opscope::import

#endif  // OPSCOPE_IMPORT_KINETO_CHUNK_TRANSLATION_H_
