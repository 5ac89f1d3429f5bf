// A trace's strings and args as a Perfetto TrackEvent carries them: names, categories, debug
// annotation names and string values interned per packet sequence, and each args object (the
// model's JSON text) as one debug annotation per member.
//
// A member's value is written typed (int, uint, double, bool, interned string) when the reader's
// rendering gives back its exact text (ints in decimal, strings as JSON escapes them); an array or
// object as its JSON text, interned as a string value under an iid from kJsonStringIidBase on
// (other readers show the text, opscope's reads the value); anything else as legacy_json_value
// with its text. So the args come back as they were. What a reader
// derives from them (the JSON reader's "External id", "correlation" and "Input Dims") is reported,
// so the writer knows which model fields it must state itself.
//
// Not thread-safe; one interner per sequence.
#ifndef OPSCOPE_SRC_PROFILER_PERFETTO_ARGS_H_
#define OPSCOPE_SRC_PROFILER_PERFETTO_ARGS_H_

#include <cstdint>
#include <optional>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opscope/trace.h"

namespace opscope::internal {

// The strings one packet sequence has interned; new ones go out with the next packet.
class SequenceInterner {
 public:
  uint64_t Name(StringId id, std::string_view text) { return Intern(&names_, id, text, 0); }
  uint64_t Category(StringId id, std::string_view text) {
    return Intern(&categories_, id, text, 1);
  }
  uint64_t AnnotationName(std::string_view text) { return Intern(&annotation_names_, text, 2, 1); }
  uint64_t AnnotationString(std::string_view text) { return Intern(&strings_, text, 3, 1); }
  // A JSON value's text, as a string value with an iid from kJsonStringIidBase on
  // (trace/perfetto_protos.h).
  uint64_t AnnotationJson(std::string_view text);
  // Writes what was interned since the last call as the packet's interned_data; nothing when none.
  void Flush(protozero::pbf_writer* packet);

 private:
  uint64_t Intern(std::unordered_map<StringId, uint32_t>* table, StringId id, std::string_view text,
                  int kind);
  uint64_t Intern(std::unordered_map<std::string, uint64_t>* table, std::string_view text, int kind,
                  uint64_t first_iid);

  std::unordered_map<StringId, uint32_t> names_, categories_;
  std::unordered_map<std::string, uint64_t> annotation_names_, strings_, json_;
  std::vector<std::pair<uint64_t, std::string>> pending_[5];  // by kind, in the order above
};

// What a reader derives from an args object (docs/formats.md, "Perfetto").
struct DerivedArgs {
  std::optional<int64_t> external_id;  // "External id" / "external id"
  std::optional<int64_t> correlation;  // "correlation"
  std::string input_dims;              // "Input Dims", when an array
};

// Writes the members of `args_json` as debug annotations of the TrackEvent being written to
// `event`. False when the text is not a JSON object (nothing is written).
bool WriteArgs(std::string_view args_json, protozero::pbf_writer* event, SequenceInterner* interner,
               DerivedArgs* derived);

// One debug annotation with a string value (opscope's reserved annotations).
void WriteStringAnnotation(std::string_view name, std::string_view value,
                           protozero::pbf_writer* event, SequenceInterner* interner);
void WriteIntAnnotation(std::string_view name, int64_t value, protozero::pbf_writer* event,
                        SequenceInterner* interner);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_PERFETTO_ARGS_H_
