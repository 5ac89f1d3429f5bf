// The tracks of a Perfetto trace and what they become in opscope's model.
//
// Perfetto names a track by a 64-bit uuid and describes it with TrackDescriptor packets: a process
// track (ProcessDescriptor), a thread track (ThreadDescriptor), a counter track, or a named track
// nested under another by parent_uuid; legacy events name tracks by pid / tid / async id instead.
// Each distinct track becomes a slot here, in the order first seen; Materialize() turns the slots
// into the model's processes and tracks once the whole trace is read:
//   - a process descriptor becomes a Process (a later descriptor with the same pid and another uuid
//     is a new process: pid reuse); its own track, when events use it, a track named after it;
//   - a thread descriptor becomes a thread track of its process (tid reuse gives a new track);
//   - a named track becomes a track of the process it is nested under (at any depth), or of a
//     process with pid 0 and no name that holds the tracks no process owns ("global" tracks);
//   - a counter track becomes a TrackKind::kCounter track of its process.
// A track's name follows Perfetto's rules: the descriptor's name given before its first event (a
// later one is ignored), else the first event's name, unless sibling_merge_behavior is NONE (the
// last descriptor's name wins) or no descriptor had named it by its first event (a later name then
// wins). A track is device-like (TrackKind::kDeviceStream, its process is_device) when its name,
// its parent's or its process's name says so ("GPU", "TPU", "XPU", "MTIA", "NeuronCore",
// "/device:", or a track name starting with "stream"), or when a slice on it has a device category
// (as the JSON reader decides). Not thread-safe.
#ifndef OPSCOPE_IMPORT_PERFETTO_TRACK_TABLE_H_
#define OPSCOPE_IMPORT_PERFETTO_TRACK_TABLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "import/perfetto/opscope_blob.h"
#include "opscope/trace.h"

namespace opscope::import::perfetto {

// A TrackDescriptor as read.
struct TrackDescription {
  uint64_t uuid = 0;
  std::optional<uint64_t> parent_uuid;
  std::optional<std::string> name;
  bool merge_none = false;  // sibling_merge_behavior: SIBLING_MERGE_BEHAVIOR_NONE
  enum class What : uint8_t { kNamed, kProcess, kThread, kCounter } what = What::kNamed;
  int32_t pid = 0;
  int64_t tid = 0;
  std::optional<std::string> process_or_thread_name;
  std::vector<std::string> process_labels;
  // Counter tracks: CounterDescriptor's type (1 thread time, 2 instruction count), multiplier,
  // delta encoding.
  int32_t counter_type = 0;
  int64_t unit_multiplier = 1;
  bool incremental = false;
};

class TrackTable {
 public:
  enum class SlotType : uint8_t { kNamed, kProcess, kThread, kCounter };
  struct Slot {
    SlotType type = SlotType::kNamed;
    std::optional<uint64_t> uuid;
    std::optional<uint64_t> parent_uuid;
    uint32_t process = kNone;  // process slot (kProcess, kThread; others: found through parents)
    int64_t tid = 0;
    std::optional<std::string> descriptor_name;
    std::string event_name;  // the first event's name
    bool merge_none = false;
    bool events_seen = false;
    bool name_locked = false;  // a descriptor had named it by its first event
    bool has_events = false;
    bool device = false;  // a slice with a device category landed on it
    int32_t counter_type = 0;
    int64_t unit_multiplier = 1;
    bool incremental = false;
    uint32_t model_track = kNone;  // after Materialize
  };
  struct ProcessSlot {
    std::optional<uint64_t> uuid;
    int32_t pid = 0;
    std::string name;
    std::string labels;
    uint32_t track_slot = kNone;  // its own track
    uint32_t model_process = kNone;
  };

  // The slot a descriptor describes (created or updated).
  uint32_t Describe(const TrackDescription& d);
  // The slot of track `uuid`; one named after its first event when no descriptor was seen yet.
  uint32_t ForUuid(uint64_t uuid);
  // Legacy tracks: the thread (pid, tid), the process pid's own track, the global legacy track, an
  // async track by its id and the id's scope (named after its first event).
  uint32_t ForThread(int32_t pid, int64_t tid);
  uint32_t ForProcess(int32_t pid);
  uint32_t ForGlobalLegacy();
  uint32_t ForAsync(bool process_scoped, int32_t pid, uint64_t id, const std::string& id_scope,
                    const std::string& name);
  // The counter track of a thread's CPU time (counter_type 1, "thread_time", ns) or instruction
  // count (2, "thread_instruction_count"), which TrackEvent's thread_time fields fill.
  uint32_t ForThreadCounter(uint32_t thread_slot, int32_t counter_type);
  // The pid of the process a track belongs to, if any.
  std::optional<int32_t> PidOf(uint32_t slot) const;
  // An event named `name` lands on `slot` (fixes its name per the rules above).
  void NoteEvent(uint32_t slot, std::string_view name);

  uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }
  Slot& slot(uint32_t i) { return slots_[i]; }
  const Slot& slot(uint32_t i) const { return slots_[i]; }
  // The process slot a track belongs to (through its parents), or kNone for a global track.
  uint32_t ProcessOf(uint32_t slot) const;
  // The thread slot a track is (or is nested under), or kNone.
  uint32_t ThreadOf(uint32_t slot) const;

  // Processes and tracks as opscope wrote them (the blob), created in the model now, in its order:
  // slots of these uuids then map to them.
  void UseBlob(const OpscopeBlob& blob, Trace* trace);
  // Creates the model's processes and tracks for every slot (those the blob did not), sets each
  // slot's model_track.
  void Materialize(Trace* trace);

 private:
  uint32_t NewSlot(Slot s);
  void DescribeProcess(const TrackDescription& d, uint32_t index);
  void DescribeThread(const TrackDescription& d, uint32_t index);
  uint32_t NewProcess(ProcessSlot p);
  uint32_t ProcessForPid(int32_t pid);
  std::string NameOf(const Slot& s) const;
  bool LooksLikeDevice(uint32_t slot) const;
  uint32_t GlobalProcess(Trace* trace);

  std::vector<Slot> slots_;
  std::vector<ProcessSlot> processes_;
  std::unordered_map<uint64_t, uint32_t> by_uuid_;
  std::unordered_map<int32_t, uint32_t> process_by_pid_;  // the current process of each pid
  std::map<std::pair<int32_t, int64_t>, uint32_t> thread_by_id_;
  std::map<std::tuple<bool, int32_t, uint64_t, std::string>, uint32_t> async_;
  std::map<std::pair<uint32_t, int32_t>, uint32_t> thread_counters_;
  uint32_t global_legacy_ = kNone;
  int64_t next_synthetic_tid_ = int64_t{1} << 32;
  // From the blob: model indices by uuid, and lanes (uuid -> the uuid of the track they belong to).
  std::unordered_map<uint64_t, uint32_t> blob_tracks_;
  std::unordered_map<uint64_t, uint32_t> blob_processes_;
  uint32_t global_process_ = kNone;
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_TRACK_TABLE_H_
