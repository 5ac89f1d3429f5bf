// Finding a profile's tables and reading their fields row group by row group (profile_tables.h).
#include "import/neuron/profile_tables.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <new>

#include "base/parallel_for.h"
#include "import/parquet/list_assembly.h"

namespace opscope::import::neuron {
namespace {

namespace fs = std::filesystem;
using parquet::ColumnData;
using parquet::PhysicalType;

// "Instruction_12" -> ("Instruction", 12); a name without a numeric suffix -> (name, -1). Table
// names are CamelCase words, so a trailing "_<digits>" is always a part number.
std::pair<std::string, int> SplitPartName(const std::string& stem) {
  const size_t us = stem.rfind('_');
  if (us == std::string::npos || us == 0 || us + 1 == stem.size() || stem.size() - us > 7) {
    return {stem, -1};
  }
  int part = 0;
  for (size_t i = us + 1; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9') return {stem, -1};
    part = part * 10 + (stem[i] - '0');
  }
  return {stem.substr(0, us), part};
}

// Whether a column of physical type `t` (max_rep `rep`) holds what `want` expects.
bool TypeFits(FieldType want, PhysicalType t, int rep) {
  if (want == FieldType::kStringList) return t == PhysicalType::kByteArray && rep == 1;
  if (rep != 0) return false;
  switch (want) {
    case FieldType::kInt:
      return t == PhysicalType::kInt64 || t == PhysicalType::kInt32;
    case FieldType::kFloat:
      return t == PhysicalType::kDouble || t == PhysicalType::kFloat;
    case FieldType::kString:
      return t == PhysicalType::kByteArray;
    case FieldType::kBool:
      return t == PhysicalType::kBoolean;
    case FieldType::kStringList:
      break;
  }
  return false;
}

// A Parquet error for one of the table's files ("FILE: column 'c' row group N, ...: why") as the
// table's: "FILE: table T, column 'c' row group N, ...: why".
Status InTable(const Status& st, std::string_view table, const std::string& file) {
  std::string message = st.message();
  if (message.compare(0, file.size() + 2, file + ": ") == 0) message.erase(0, file.size() + 2);
  return Status::InvalidInput("table " + std::string(table) + ", " + message, st.offset())
      .InFile(file);
}

// Every value's row for a nullable leaf, when some rows are null.
void MapRows(const ColumnData& c, std::vector<int64_t>* value_of_row) {
  value_of_row->clear();
  if (c.descriptor().max_def == 0 || c.num_values() == c.num_levels()) return;
  const std::span<const int16_t> def = c.def_levels();
  value_of_row->resize(def.size());
  int64_t v = 0;
  for (size_t r = 0; r < def.size(); ++r) {
    (*value_of_row)[r] = def[r] == c.descriptor().max_def ? v++ : -1;
  }
}

}  // namespace

std::string_view FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kInt:
      return "an integer (INT64 or INT32)";
    case FieldType::kFloat:
      return "a number (DOUBLE or FLOAT)";
    case FieldType::kString:
      return "a string (BYTE_ARRAY)";
    case FieldType::kBool:
      return "a boolean (BOOLEAN)";
    case FieldType::kStringList:
      return "a list of strings";
  }
  return "";
}

Status ListProfileTables(const std::string& dir, std::map<std::string, TableParts>* tables) {
  std::map<std::string, std::map<int, std::string>> found;  // table -> part (-1 whole) -> file
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".parquet") continue;
    auto [table, part] = SplitPartName(it->path().stem().string());
    found[table][part] = it->path().string();
  }
  if (ec) return Status::IoError(dir + ": cannot list the folder: " + ec.message(), dir);
  for (auto& [table, parts] : found) {
    TableParts t{table, {}};
    if (parts.count(-1) && parts.size() > 1) {
      return Status::InvalidInput("table " + table + " is both whole (" + parts[-1] +
                                      ") and split (" + std::next(parts.begin())->second + ")",
                                  0, dir);
    }
    int expect = parts.count(-1) ? -1 : 0;
    for (auto& [part, file] : parts) {
      if (part != expect) {
        return Status::InvalidInput("table " + table + " is split but its part " +
                                        std::to_string(expect) + " (" + table + "_" +
                                        std::to_string(expect) + ".parquet) is missing",
                                    0, dir);
      }
      t.files.push_back(file);
      expect = part + 1;
    }
    (*tables)[table] = std::move(t);
  }
  return Status::Ok();
}

double FieldColumn::Float(int64_t row, double fallback) const {
  if (IsNull(row)) return fallback;
  const int64_t v = Value(row);
  return data_->type() == PhysicalType::kDouble ? data_->doubles()[v] : data_->floats()[v];
}

bool FieldColumn::Bool(int64_t row, bool fallback) const {
  return IsNull(row) ? fallback : data_->bools()[Value(row)] != 0;
}

std::string_view FieldColumn::Str(int64_t row) const {
  return IsNull(row) ? std::string_view() : data_->ByteArray(Value(row));
}

std::vector<std::string_view> FieldColumn::StrList(int64_t row) const {
  std::vector<std::string_view> out;
  if (data_ == nullptr || list_offsets_.empty()) return out;
  for (int64_t e = list_offsets_[row]; e < list_offsets_[row + 1]; ++e) {
    const int64_t v = list_values_.empty() ? e : list_values_[e];
    if (v >= 0) out.push_back(data_->ByteArray(v));
  }
  return out;
}

Status ProfileTable::Open(const TableParts& parts, std::unique_ptr<ProfileTable>* out) {
  auto table = std::unique_ptr<ProfileTable>(new ProfileTable());
  table->name_ = parts.name;
  for (const std::string& file : parts.files) {
    std::unique_ptr<parquet::ParquetFile> f;
    Status st = parquet::ParquetFile::Open(file, &f);
    if (!st.ok()) return InTable(st, parts.name, file);
    table->files_.push_back(std::move(f));
  }
  *out = std::move(table);
  return Status::Ok();
}

int64_t ProfileTable::num_rows() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f->num_rows();
  return n;
}

size_t ProfileTable::num_row_groups() const {
  size_t n = 0;
  for (const auto& f : files_) n += static_cast<size_t>(f->num_row_groups());
  return n;
}

Status ProfileTable::CheckFields(const std::vector<FieldRequest>& fields) const {
  std::vector<int> columns, lists;
  for (size_t p = 0; p < files_.size(); ++p) {
    if (Status st = Resolve(p, fields, &columns, &lists); !st.ok()) return st;
  }
  return Status::Ok();
}

std::vector<std::string> ProfileTable::ColumnNames() const {
  std::vector<std::string> names;
  for (const auto& f : files_) {
    const parquet::Schema& s = f->schema();
    for (int child : s.root().children) names.push_back(s.node(child).name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool ProfileTable::HasField(std::string_view name) const {
  if (files_.empty()) return false;
  const parquet::Schema& s = files_[0]->schema();
  for (int child : s.root().children) {
    if (s.node(child).name == name) return true;
  }
  return false;
}

// The leaf column of each requested field in part `part` (-1 when absent), and for list fields
// the same in `list_columns`. A needed field that is absent is an error naming the file.
Status ProfileTable::Resolve(size_t part, const std::vector<FieldRequest>& fields,
                             std::vector<int>* columns, std::vector<int>* list_columns) const {
  const parquet::Schema& s = files_[part]->schema();
  columns->assign(fields.size(), -1);
  list_columns->assign(fields.size(), -1);
  for (size_t i = 0; i < fields.size(); ++i) {
    for (int child : s.root().children) {
      if (s.node(child).name != fields[i].name) continue;
      const std::vector<int> leaves = s.ColumnsUnder(child);
      (*columns)[i] = leaves.size() == 1 ? leaves[0] : -2;  // -2: a group, never a fit
      break;
    }
    if ((*columns)[i] == -1 && fields[i].needed) {
      return Status::InvalidInput("table " + name_ + " has no column '" +
                                      std::string(fields[i].name) +
                                      "', which opscope needs (the documented schema requires it)",
                                  0)
          .InFile(files_[part]->name());
    }
  }
  return Status::Ok();
}

Status TableError(const RowGroupView& rg, std::string_view column, const std::string& why) {
  return Status::InvalidInput("table " + std::string(rg.table) + ", column '" +
                                  std::string(column) + "' row group " +
                                  std::to_string(rg.row_group) + ": " + why,
                              0)
      .InFile(*rg.file);
}

namespace {

// One thread's working memory: the row group decoded, and its view.
struct Slot {
  parquet::RowGroupData data;
  RowGroupView view;
};

// Builds `view`'s fields from the decoded row group, checking each column's type.
Status BuildView(const std::vector<FieldRequest>& fields, const std::vector<int>& columns,
                 const parquet::Schema& schema, Slot* slot) {
  RowGroupView& view = slot->view;
  view.fields.resize(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    FieldColumn& f = view.fields[i];
    if (columns[i] == -1) {
      (void)f.Bind(schema, nullptr, false);
      continue;
    }
    const parquet::ColumnDescriptor* d = columns[i] >= 0 ? &schema.column(columns[i]) : nullptr;
    if (d == nullptr || !TypeFits(fields[i].type, d->type, d->max_rep)) {
      const std::string found = d == nullptr ? "a group of several columns"
                                             : std::string(parquet::ToString(d->type)) +
                                                   (d->max_rep > 0 ? " (repeated)" : "");
      return TableError(view, fields[i].name,
                        "expected " + std::string(FieldTypeName(fields[i].type)) +
                            " as the documented schema says, the file stores " + found);
    }
    const bool list = fields[i].type == FieldType::kStringList;
    if (Status st = f.Bind(schema, slot->data.Find(columns[i]), list); !st.ok()) {
      return TableError(view, fields[i].name, st.message());
    }
  }
  return Status::Ok();
}

// Reads row group `row_group` of `file` (part `part` of `table`, its first row `first_row` of the
// table's) into *slot: the `columns` of `fields` decoded, and the view over them.
Status ReadIntoSlot(const std::string& table, const parquet::ParquetFile& file, int part,
                    int row_group, int64_t first_row, size_t index,
                    const std::vector<FieldRequest>& fields, const std::vector<int>& columns,
                    const parquet::ReadOptions& options, Slot* slot) {
  std::vector<int> want;
  for (int c : columns) {
    if (c >= 0) want.push_back(c);
  }
  Status st = file.ReadRowGroup(row_group, want, options, &slot->data);
  if (!st.ok()) st = InTable(st, table, file.name());
  slot->view.table = table;
  slot->view.file = &file.name();
  slot->view.part = part;
  slot->view.row_group = row_group;
  slot->view.rows = file.row_group_rows(row_group);
  slot->view.first_row = first_row;
  slot->view.index = index;
  if (st.ok()) st = BuildView(fields, columns, file.schema(), slot);
  return st;
}

}  // namespace

Status FieldColumn::Bind(const parquet::Schema& schema, const ColumnData* c, bool list) {
  data_ = c;
  int64s_ = nullptr;
  int32s_ = nullptr;
  if (c != nullptr && c->type() == PhysicalType::kInt64) int64s_ = c->int64s().data();
  if (c != nullptr && c->type() == PhysicalType::kInt32) int32s_ = c->int32s().data();
  value_of_row_.clear();
  list_offsets_.clear();
  list_values_.clear();
  if (c == nullptr) return Status::Ok();
  if (!list) {
    MapRows(*c, &value_of_row_);
    return Status::Ok();
  }
  parquet::Lists lists;
  if (Status st = parquet::AssembleLists(schema, *c, &lists); !st.ok()) return st;
  list_offsets_ = std::move(lists.offsets);
  list_values_ = std::move(lists.value_index);
  for (size_t r = 0; r < lists.valid.size(); ++r) {  // a null list reads as an empty one
    if (!lists.valid[r]) list_offsets_[r + 1] = list_offsets_[r];
  }
  return Status::Ok();
}

Status ProfileTable::Read(const TableRead& read) const {
  struct Unit {
    size_t part;
    int row_group;
    int64_t first_row;
  };
  std::vector<Unit> units;
  std::vector<std::vector<int>> columns(files_.size()), lists(files_.size());
  std::vector<parquet::ReadOptions> options(files_.size());
  int64_t row = 0;
  for (size_t p = 0; p < files_.size(); ++p) {
    if (Status st = Resolve(p, read.fields, &columns[p], &lists[p]); !st.ok()) return st;
    for (size_t i = 0; i < read.fields.size(); ++i) {
      if (read.fields[i].indexed && columns[p][i] >= 0) {
        options[p].dictionary_index_columns.push_back(columns[p][i]);
      }
    }
    for (int rg = 0; rg < files_[p]->num_row_groups() && units.size() < read.row_groups; ++rg) {
      units.push_back({p, rg, row});
      row += files_[p]->row_group_rows(rg);
    }
  }
  const int threads = std::max(1, std::min<int>(read.threads, static_cast<int>(units.size())));
  std::vector<Slot> slots(static_cast<size_t>(threads));
  std::vector<int> free_slots;
  for (int s = threads - 1; s >= 0; --s) free_slots.push_back(s);
  std::mutex mu;
  std::condition_variable turn_cv;
  size_t turn = 0;  // the next row group to merge
  bool failed = false;
  Status error;
  internal::ParallelFor(threads, units.size(), [&](size_t i) {
    int slot_index;
    bool skip;  // an earlier row group failed: nothing more is read
    {
      std::lock_guard<std::mutex> lock(mu);
      slot_index = free_slots.back();
      free_slots.pop_back();
      skip = failed;
    }
    Slot& slot = slots[static_cast<size_t>(slot_index)];
    const Unit& u = units[i];
    Status st;
    if (!skip) {
      try {
        st = ReadIntoSlot(name_, *files_[u.part], static_cast<int>(u.part), u.row_group,
                          u.first_row, i, read.fields, columns[u.part], options[u.part], &slot);
        if (st.ok() && read.decode) st = read.decode(slot.view, slot_index);
      } catch (const std::bad_alloc&) {
        st = Status::InvalidInput(
                 "table " + name_ + " row group " + std::to_string(u.row_group) + ": out of memory",
                 0)
                 .InFile(files_[u.part]->name());
      }
    }
    std::unique_lock<std::mutex> lock(mu);
    turn_cv.wait(lock, [&] { return turn == i; });
    if (!failed && !skip) {
      if (st.ok() && read.merge) {
        lock.unlock();
        try {
          st = read.merge(slot.view, slot_index);
        } catch (const std::bad_alloc&) {
          st = Status::InvalidInput("table " + name_ + ": out of memory", 0)
                   .InFile(files_[u.part]->name());
        }
        lock.lock();
      }
      if (!st.ok()) {
        failed = true;
        error = std::move(st);
      }
    }
    ++turn;
    free_slots.push_back(slot_index);
    turn_cv.notify_all();
  });
  return error;
}

}  // namespace opscope::import::neuron
