// A packet sequence's incremental state (sequence_state.h).
#include "import/perfetto/sequence_state.h"

#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {

ArgRole RoleOfArgName(std::string_view name) {
  using namespace opscope::perfetto;  // NOLINT(build/namespaces): the reserved names
  if (name == "External id" || name == "external id") return ArgRole::kExternalId;
  if (name == "correlation") return ArgRole::kCorrelation;
  if (name == "Input Dims") return ArgRole::kInputDims;
  if (name == kKindAnnotation) return ArgRole::kKind;
  if (name == kExternalIdAnnotation) return ArgRole::kExternalIdOverride;
  if (name == kInputShapesAnnotation) return ArgRole::kInputShapesOverride;
  return ArgRole::kArg;
}

void SequenceState::Clear() {
  valid = true;
  event_names.Clear();
  categories.Clear();
  annotation_names.Clear();
  annotation_strings.Clear();
  annotation_json.Clear();
  correlation_strings.Clear();
  has_thread = false;
  pid = 0;
  tid = 0;
  reference_ts_us = 0;
  reference_thread_time_us = 0;
  reference_instructions = 0;
  counter_values.clear();
}

}  // namespace opscope::import::perfetto
