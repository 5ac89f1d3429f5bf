// Record assembly from levels: a recursive walk of the schema driven by each subtree's first leaf.
//
// At each node the first leaf column under it decides: its next entry's definition level says
// whether the node is present (an absent node has exactly one entry in every leaf below it, all
// skipped together), and after each element of a repeated node its next repetition level says
// whether another element of that node follows (rep == the node's max_rep) or the node ends.
#include "import/parquet/record_assembly.h"

#include <string>
#include <vector>

namespace opscope::parquet {
namespace {

class Assembler {
 public:
  Assembler(const Schema& schema, const RowGroupData& rg, RecordSink* sink)
      : schema_(schema),
        sink_(sink),
        cursors_(schema.num_columns()),
        first_leaf_(schema.nodes().size(), -1),
        leaves_(schema.nodes().size()) {
    for (const ColumnData& c : rg.columns) cursors_[c.descriptor().index].column = &c;
    for (int n = static_cast<int>(schema.nodes().size()) - 1; n >= 0; --n) {
      const SchemaNode& node = schema.node(n);
      if (node.is_leaf()) {
        first_leaf_[n] = node.column;
        leaves_[n] = {node.column};
        continue;
      }
      for (int child : node.children) {
        if (first_leaf_[n] < 0) first_leaf_[n] = first_leaf_[child];
        leaves_[n].insert(leaves_[n].end(), leaves_[child].begin(), leaves_[child].end());
      }
    }
  }

  // The top-level fields whose columns were all read.
  std::vector<int> Fields() const {
    std::vector<int> out;
    for (int child : schema_.root().children) {
      bool all = true;
      for (int c : leaves_[child]) all = all && cursors_[c].column != nullptr;
      if (all) out.push_back(child);
    }
    return out;
  }

  bool Row(const std::vector<int>& fields) {
    sink_->BeginStruct(schema_.root());
    for (int f : fields) {
      sink_->Field(schema_.node(f));
      if (!FieldValue(f)) return false;
    }
    sink_->EndStruct();
    return true;
  }

  // True when every read column's entries were all used.
  bool AllConsumed(const std::vector<int>& fields) const {
    for (int f : fields) {
      for (int c : leaves_[f]) {
        if (cursors_[c].level != cursors_[c].column->num_levels()) return false;
      }
    }
    return true;
  }

 private:
  struct Cursor {
    const ColumnData* column = nullptr;
    int64_t level = 0;  // next level entry
    int64_t value = 0;  // next dense value
  };

  // The first leaf's next definition / repetition level; false past its end.
  bool Peek(int node, int16_t* def, int16_t* rep) const {
    const int leaf = first_leaf_[node];
    const Cursor& c = cursors_[leaf];
    if (c.level >= c.column->num_levels()) return false;
    const ColumnData& col = *c.column;
    *def = col.def_levels().empty() ? col.descriptor().max_def : col.def_levels()[c.level];
    *rep = col.rep_levels().empty() ? 0 : col.rep_levels()[c.level];
    return true;
  }

  // Steps every leaf under `node` past the one entry that stands for its absence.
  bool Skip(int node) {
    for (int c : leaves_[node]) {
      Cursor& cur = cursors_[c];
      if (cur.level >= cur.column->num_levels()) return false;
      const ColumnData& col = *cur.column;
      if (!col.def_levels().empty() && col.def_levels()[cur.level] == col.descriptor().max_def) {
        ++cur.value;  // a leaf at its maximum here contradicts the absence above it
        return false;
      }
      ++cur.level;
    }
    return true;
  }

  // The value of field `n` inside a present parent.
  bool FieldValue(int n) {
    const SchemaNode& node = schema_.node(n);
    if (first_leaf_[n] < 0) {  // a group without columns: nothing is stored for it
      if (node.repetition == Repetition::kRepeated) {
        sink_->BeginList(node);
        sink_->EndList();
      } else {
        sink_->BeginStruct(node);
        sink_->EndStruct();
      }
      return true;
    }
    int16_t def = 0;
    int16_t rep = 0;
    if (!Peek(n, &def, &rep)) return false;
    // The parent is present, so every leaf below says at least that much.
    if (def < schema_.node(node.parent).max_def) return false;
    if (node.repetition == Repetition::kRepeated) {
      sink_->BeginList(node);
      if (def < node.max_def) {
        if (!Skip(n)) return false;  // no elements
      } else {
        do {
          if (!Instance(n)) return false;
        } while (Peek(n, &def, &rep) && rep == node.max_rep);
      }
      sink_->EndList();
      return true;
    }
    if (node.repetition == Repetition::kOptional && def < node.max_def) {
      sink_->Null();
      return Skip(n);
    }
    return Instance(n);
  }

  // One present instance of node `n`: its value, or its fields.
  bool Instance(int n) {
    const SchemaNode& node = schema_.node(n);
    if (node.is_leaf()) {
      Cursor& c = cursors_[node.column];
      if (c.level >= c.column->num_levels() || c.value >= c.column->num_values()) return false;
      const ColumnData& col = *c.column;
      if (!col.def_levels().empty() && col.def_levels()[c.level] != col.descriptor().max_def) {
        return false;
      }
      sink_->Value(col, c.value++);
      ++c.level;
      return true;
    }
    sink_->BeginStruct(node);
    for (int child : node.children) {
      sink_->Field(schema_.node(child));
      if (!FieldValue(child)) return false;
    }
    sink_->EndStruct();
    return true;
  }

  const Schema& schema_;
  RecordSink* sink_;
  std::vector<Cursor> cursors_;  // by column index; column == nullptr when not read
  std::vector<int> first_leaf_;  // by node: the column index of its first leaf, -1 when none
  std::vector<std::vector<int>> leaves_;  // by node: the column indices of its leaves
};

}  // namespace

Status AssembleRecords(const Schema& schema, const RowGroupData& rg, const std::string& file_name,
                       RecordSink* sink) {
  Assembler a(schema, rg, sink);
  const std::vector<int> fields = a.Fields();
  for (int64_t row = 0; row < rg.num_rows; ++row) {
    if (!a.Row(fields)) {
      return Status::InvalidInput("row group " + std::to_string(rg.row_group) + ", row " +
                                      std::to_string(row) +
                                      ": the columns' levels do not describe the same records",
                                  0)
          .InFile(file_name);
    }
  }
  if (!a.AllConsumed(fields)) {
    return Status::InvalidInput("row group " + std::to_string(rg.row_group) +
                                    ": columns hold entries past the row group's " +
                                    std::to_string(rg.num_rows) + " rows",
                                0)
        .InFile(file_name);
  }
  return Status::Ok();
}

}  // namespace opscope::parquet
