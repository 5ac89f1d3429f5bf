// Schema: levels, dotted paths, leaf columns and the record nesting of a Parquet schema tree.
#include "import/parquet/schema.h"

#include <utility>

namespace opscope::parquet {
namespace {

// Deeper trees are refused: levels are kept as int16 and no writer nests this deep.
constexpr int kMaxDepth = 100;

bool IsListAnnotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kList ||
         n.logical_type.kind == LogicalType::Kind::kList;
}

bool IsMapAnnotated(const SchemaNode& n) {
  return n.converted_type == ConvertedType::kMap ||
         n.converted_type == ConvertedType::kMapKeyValue ||
         n.logical_type.kind == LogicalType::Kind::kMap;
}

}  // namespace

int Schema::AddNode(SchemaNode node) {
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

std::string Schema::Finish() {
  columns_.clear();
  if (nodes_.empty()) return "the schema has no root";
  std::vector<int> depth(nodes_.size(), 0);
  std::vector<std::string> paths(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    SchemaNode& n = nodes_[i];
    if (i == 0) {
      // The root's own repetition is meaningless (the record itself).
      n.max_def = 0;
      n.max_rep = 0;
    } else {
      if (n.parent < 0 || static_cast<size_t>(n.parent) >= i) return "a node's parent follows it";
      const SchemaNode& p = nodes_[n.parent];
      depth[i] = depth[n.parent] + 1;
      if (depth[i] > kMaxDepth) {
        return "the schema nests deeper than " + std::to_string(kMaxDepth) + " levels";
      }
      n.max_def = static_cast<int16_t>(p.max_def + (n.repetition != Repetition::kRequired));
      n.max_rep = static_cast<int16_t>(p.max_rep + (n.repetition == Repetition::kRepeated));
      paths[i] = n.parent == 0 ? n.name : paths[n.parent] + "." + n.name;
    }
    if (n.is_leaf()) {
      if (i == 0) return "the schema's root is a column";
      ColumnDescriptor c;
      c.index = static_cast<int>(columns_.size());
      c.node = static_cast<int>(i);
      c.path = paths[i];
      for (int a = static_cast<int>(i); a > 0; a = nodes_[a].parent) {
        c.path_parts.insert(c.path_parts.begin(), nodes_[a].name);
      }
      c.type = n.type;
      c.type_length = n.type_length;
      c.converted_type = n.converted_type;
      c.logical_type = n.logical_type;
      c.max_def = n.max_def;
      c.max_rep = n.max_rep;
      n.column = c.index;
      columns_.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].is_leaf()) ClassifyGroup(static_cast<int>(i));
  }
  return "";
}

// The LIST and MAP rules of the format's LogicalTypes.md, including its backward-compatibility
// rules for lists written before the 3-level form. A group whose annotation does not fit its
// shape is read as a plain struct (its fields are still all there).
void Schema::ClassifyGroup(int g) {
  SchemaNode& n = nodes_[g];
  n.nesting = Nesting::kStruct;
  if (g == 0 || n.children.size() != 1) return;
  const int r = n.children[0];
  const SchemaNode& rep = nodes_[r];
  if (rep.repetition != Repetition::kRepeated) return;
  if (IsListAnnotated(n)) {
    n.nesting = Nesting::kList;
    if (rep.is_leaf() || rep.children.size() != 1 || rep.name == "array" ||
        rep.name == n.name + "_tuple") {
      n.list_element = r;  // 2-level: the repeated field is the element itself
    } else {
      n.list_element = rep.children[0];  // 3-level: repeated group list { element }
    }
  } else if (IsMapAnnotated(n) && !rep.is_leaf() &&
             (rep.children.size() == 1 || rep.children.size() == 2)) {
    n.nesting = Nesting::kMap;
    n.list_element = r;
    n.map_key = rep.children[0];
    n.map_value = rep.children.size() == 2 ? rep.children[1] : -1;
  }
}

int Schema::FindColumn(std::string_view dotted_path) const {
  for (const ColumnDescriptor& c : columns_) {
    if (c.path == dotted_path) return c.index;
  }
  return -1;
}

std::vector<int> Schema::ColumnsUnder(int n) const {
  std::vector<int> out;
  std::vector<int> stack = {n};
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    const SchemaNode& node = nodes_[i];
    if (node.is_leaf()) {
      out.push_back(node.column);
      continue;
    }
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

int Schema::ListOf(int n) const {
  for (int a = nodes_[n].parent; a >= 0; a = nodes_[a].parent) {
    if (nodes_[a].nesting == Nesting::kList || nodes_[a].nesting == Nesting::kMap) return a;
  }
  return -1;
}

int32_t FixedWidth(PhysicalType t, int32_t type_length) {
  switch (t) {
    case PhysicalType::kBoolean:
      return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    case PhysicalType::kInt96:
      return 12;
    case PhysicalType::kFixedLenByteArray:
      return type_length;
    case PhysicalType::kByteArray:
      return 0;
  }
  return 0;
}

}  // namespace opscope::parquet
