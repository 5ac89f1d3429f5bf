// The Neuron Explorer profile schema as its public reference documents it (schema 7.4.0, Neuron
// SDK 2.31): every table name and every "Table.field", sorted. Generated at build time from the
// shared reference (documented_schema.cmake); nothing generated is committed.
#ifndef OPSCOPE_IMPORT_NEURON_DOCUMENTED_SCHEMA_H_
#define OPSCOPE_IMPORT_NEURON_DOCUMENTED_SCHEMA_H_

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

namespace opscope::import::neuron {

extern const std::string_view kDocumentedSchema[];
extern const size_t kDocumentedSchemaSize;

// The schema version the reference documents: what opscope's reader was checked against.
inline constexpr std::string_view kDocumentedSchemaVersion = "7.4.0";

// True when the reference documents table `name` ("Instruction") or field `name`
// ("Instruction.engine").
inline bool IsDocumented(std::string_view name) {
  const std::span<const std::string_view> all(kDocumentedSchema, kDocumentedSchemaSize);
  return std::binary_search(all.begin(), all.end(), name);
}

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_DOCUMENTED_SCHEMA_H_
