// What a Perfetto packet sequence remembers between its packets: the incremental state (interned
// names, categories and annotation names; the legacy thread descriptor's reference times, which
// streaming profile packets advance too; incremental counters), its trace_packet_defaults, that
// SEQ_INCREMENTAL_STATE_CLEARED resets, and whether it is valid (packets that need it are skipped
// until a clear after a loss).
//
// One SequenceState per trusted_packet_sequence_id, owned by the packet decoder. Not thread-safe.
#ifndef OPSCOPE_IMPORT_PERFETTO_SEQUENCE_STATE_H_
#define OPSCOPE_IMPORT_PERFETTO_SEQUENCE_STATE_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::perfetto {

// Interned entries by iid: a vector for the small dense iids writers use, a map for the rest.
template <typename T>
class IidTable {
 public:
  void Set(uint64_t iid, T value) {
    if (iid < kDense) {
      if (dense_.size() <= iid) {
        dense_.resize(iid + 1);
        present_.resize(iid + 1, false);
      }
      dense_[iid] = std::move(value);
      present_[iid] = true;
    } else {
      sparse_[iid] = std::move(value);
    }
  }
  // Null when `iid` was not interned on the sequence.
  const T* Find(uint64_t iid) const {
    if (iid < kDense) return iid < dense_.size() && present_[iid] ? &dense_[iid] : nullptr;
    auto it = sparse_.find(iid);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  void Clear() {
    dense_.clear();
    present_.clear();
    sparse_.clear();
  }

 private:
  static constexpr uint64_t kDense = uint64_t{1} << 16;
  std::vector<T> dense_;
  std::vector<bool> present_;
  std::unordered_map<uint64_t, T> sparse_;
};

// What a top-level debug annotation's name means to the reader (docs/formats.md, "Perfetto").
enum class ArgRole : uint8_t {
  kArg,          // an arg like any other
  kExternalId,   // "External id" / "external id": also Slice::external_id (as the JSON reader)
  kCorrelation,  // "correlation": Slice::correlation when the event has no correlation_id
  kInputDims,    // "Input Dims": also Slice::input_shapes
  kKind,         // opscope.kind: the slice's ActivityKind (not kept as an arg)
  kExternalIdOverride,   // opscope.external_id (not kept as an arg)
  kInputShapesOverride,  // opscope.input_shapes (not kept as an arg)
};
ArgRole RoleOfArgName(std::string_view name);

// An interned debug annotation name: its JSON key text ("\"name\": ") and role.
struct AnnotationName {
  // ", " then the name quoted and escaped, then ": ": a member after the first takes it whole, in
  // one append; key() is the name alone.
  std::string member;
  ArgRole role = ArgRole::kArg;
  std::string_view key() const { return std::string_view(member).substr(2); }
};

struct SequenceState {
  // ---- Incremental state (reset by SEQ_INCREMENTAL_STATE_CLEARED) ----
  bool valid = false;  // a clear was seen and no loss since
  IidTable<StringId> event_names;
  IidTable<StringId> categories;
  IidTable<AnnotationName> annotation_names;
  IidTable<std::string> annotation_strings;  // the value as JSON string text (quoted)
  // Values opscope interned as JSON text (iids from kJsonStringIidBase on, by iid - that base).
  IidTable<std::string> annotation_json;
  IidTable<std::string> correlation_strings;
  // trace_packet_defaults: a writer must emit them again after a clear, but a reader keeps them
  // until new ones come (as Perfetto's does), so they are not reset by Clear().
  uint32_t default_clock_id = 0;  // 0: none
  bool has_default_track = false;
  uint64_t default_track_uuid = 0;
  uint32_t default_track_slot = kNone;  // its track slot, once looked up
  std::vector<uint64_t> default_extra_counters;
  std::vector<uint64_t> default_extra_double_counters;
  // The legacy ThreadDescriptor packet of this sequence (its thread, and the reference times that
  // timestamp_delta_us / thread_time_delta_us / thread_instruction_count_delta add to).
  bool has_thread = false;
  int32_t pid = 0;
  int64_t tid = 0;
  int64_t reference_ts_us = 0;
  int64_t reference_thread_time_us = 0;
  int64_t reference_instructions = 0;
  // Incremental counters: the running value per counter track uuid.
  std::unordered_map<uint64_t, double> counter_values;

  // Resets everything SEQ_INCREMENTAL_STATE_CLEARED resets and marks the state valid.
  void Clear();
};

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_SEQUENCE_STATE_H_
