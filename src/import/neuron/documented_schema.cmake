# Writes documented_schema.cc: every table and field of the Neuron Explorer profile schema as the
# shared reference documents it (neuron-explorer-parquet-schema-7.4.0.md, "## Table" headings and
# "| `field` | type | unit | required |" rows), sorted, so the reader can tell the tables and
# fields a newer profile adds (counted as unknown) from those the documentation lists.
#   cmake -DREFERENCE=...md -DOUTPUT=...cc -P documented_schema.cmake
file(STRINGS "${REFERENCE}" lines)
set(entries "")
set(table "")
foreach(line IN LISTS lines)
  if(line MATCHES "^## ([A-Za-z0-9_]+)[ ]*$")
    set(table "${CMAKE_MATCH_1}")
    if(table STREQUAL "Enums")
      set(table "")
    else()
      list(APPEND entries "${table}")
    endif()
  elseif(NOT table STREQUAL "" AND line MATCHES "^\\| `([A-Za-z0-9_]+)` \\|")
    list(APPEND entries "${table}.${CMAKE_MATCH_1}")
  endif()
endforeach()
list(LENGTH entries count)
if(count LESS 100)
  message(FATAL_ERROR "${REFERENCE}: found only ${count} tables and fields; is it the schema?")
endif()
list(SORT entries)
set(body "")
foreach(e IN LISTS entries)
  string(APPEND body "    \"${e}\",\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated at build time by documented_schema.cmake from ${REFERENCE}: do not edit.
#include \"import/neuron/documented_schema.h\"

namespace opscope::import::neuron {

const std::string_view kDocumentedSchema[] = {
${body}};
const size_t kDocumentedSchemaSize = ${count};

}  // namespace opscope::import::neuron
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
