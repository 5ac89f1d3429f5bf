// Per-row lists from one repeated level.
#include "import/parquet/list_assembly.h"

#include <numeric>
#include <string>

namespace opscope::parquet {

Status AssembleLists(const Schema& schema, const ColumnData& column, Lists* out) {
  const ColumnDescriptor& d = column.descriptor();
  if (d.max_rep != 1) {
    return Status::InvalidArgument("column '" + d.path + "' has " + std::to_string(d.max_rep) +
                                   " repeated levels; lists need exactly one");
  }
  // The repeated node R on the path: the list is present when R's parent is (def >= its level),
  // and holds an element for each entry at R's level or deeper.
  int r = d.node;
  while (schema.node(r).repetition != Repetition::kRepeated) r = schema.node(r).parent;
  const int16_t present = schema.node(schema.node(r).parent).max_def;
  const int16_t element = schema.node(r).max_def;
  const int16_t max_def = d.max_def;

  *out = Lists();
  const std::span<const int16_t> def = column.def_levels();
  const std::span<const int16_t> rep = column.rep_levels();
  const int64_t n = column.num_levels();
  out->offsets.reserve(static_cast<size_t>(n / 2 + 2));
  int64_t elements = 0;
  int64_t values = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int16_t dl = def.empty() ? max_def : def[i];
    if (rep[i] == 0) {
      out->offsets.push_back(elements);
      if (dl < present) {
        if (out->valid.empty()) out->valid.assign(out->offsets.size() - 1, 1);
        out->valid.push_back(0);
        continue;
      }
      if (!out->valid.empty()) out->valid.push_back(1);
      if (dl < element) continue;  // an empty list
    }
    if (dl == max_def) {
      if (!out->value_index.empty()) out->value_index.push_back(values);
      ++values;
    } else {
      if (out->value_index.empty()) {
        out->value_index.resize(static_cast<size_t>(elements));
        std::iota(out->value_index.begin(), out->value_index.end(), int64_t{0});
      }
      out->value_index.push_back(-1);
    }
    ++elements;
  }
  out->offsets.push_back(elements);
  if (values != column.num_values()) {
    return Status::InvalidArgument("column '" + d.path + "': levels count " +
                                   std::to_string(values) + " values, the column holds " +
                                   std::to_string(column.num_values()));
  }
  return Status::Ok();
}

}  // namespace opscope::parquet
