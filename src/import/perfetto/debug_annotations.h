// A TrackEvent's debug annotations as the model's args: one JSON object, a member per annotation
// ({"name": value, ...}), values as their types say (ints, doubles, bools, strings, pointers as
// "0x..." strings, nested dicts and arrays, legacy_json_value's text as it is once its brackets are
// checked, else as a string). The names the JSON reader reads fields from ("External id",
// "correlation", "Input Dims") also fill those fields; opscope's reserved annotations
// (opscope.kind, ...) fill theirs and are not kept as args.
//
// Not thread-safe; one builder per reader, reused for every event.
#ifndef OPSCOPE_IMPORT_PERFETTO_DEBUG_ANNOTATIONS_H_
#define OPSCOPE_IMPORT_PERFETTO_DEBUG_ANNOTATIONS_H_

#include <cstdint>
#include <optional>
#include <protozero/pbf_reader.hpp>
#include <string>
#include <string_view>

#include "import/perfetto/sequence_state.h"

namespace opscope::import::perfetto {

class ArgsBuilder {
 public:
  explicit ArgsBuilder(int max_depth) : max_depth_(max_depth) {}

  // Starts an event's args; `sequence` resolves interned names and strings.
  void Reset(const SequenceState* sequence);
  // Adds one DebugAnnotation. False, with `why`, when it is malformed or nests too deep (the event
  // is then skipped). Throws protozero::exception on bytes that are not a message.
  bool Add(protozero::data_view annotation, std::string* why);

  bool empty() const { return members_ == 0; }
  // The args object; valid until the next Reset.
  std::string_view Json();

  // What the annotations' roles gave (sequence_state.h, ArgRole).
  std::optional<int64_t> external_id, correlation, external_id_override;
  std::optional<std::string> input_shapes_override, kind;
  // "Input Dims"'s value text; valid until the next Reset.
  std::optional<std::string_view> input_dims() const {
    if (!input_dims_) return std::nullopt;
    return std::string_view(text_).substr(input_dims_->first, input_dims_->second);
  }

 private:
  bool AddSimple(protozero::data_view annotation);
  bool Key(protozero::data_view annotation, std::string* out, ArgRole* role,
           std::string* why) const;
  bool Member(protozero::data_view annotation, int depth, std::string* out, ArgRole* role,
              size_t* value_start, std::string* why);
  // The value of the annotation `r` reads (from its start, or past its name).
  bool Value(protozero::pbf_reader r, int depth, std::string* out, std::string* why);
  bool Scalar(protozero::pbf_reader& r, uint32_t tag, int depth, std::string* out,
              std::string* why);
  // The value text of interned string `iid` (as JSON): opscope's JSON-valued strings (iids from
  // kJsonStringIidBase), else the sequence's debug annotation strings; null when neither has it.
  const std::string* FindString(uint64_t iid) const;
  bool InternedString(uint64_t iid, std::string* out, std::string* why) const;
  bool Nested(protozero::data_view nested, int depth, std::string* out, std::string* why);
  void NoteRole(ArgRole role, size_t value_start);

  const SequenceState* sequence_ = nullptr;
  int max_depth_;
  size_t members_ = 0;
  std::string text_;                                     // "{" + members so far
  std::optional<std::pair<size_t, size_t>> input_dims_;  // (offset, length) in text_
};

// Begin's args with end's merged in (Perfetto merges an end event's annotations into its slice):
// objects merge key by key, arrays append, other values are replaced. Either may be "" (none).
std::string MergeArgs(std::string_view begin, std::string_view end);

// A legacy_json_value's text trimmed, when its brackets and strings are well formed; else empty.
std::string_view CheckedJsonValue(std::string_view text);

}  // namespace opscope::import::perfetto

#endif  // OPSCOPE_IMPORT_PERFETTO_DEBUG_ANNOTATIONS_H_
