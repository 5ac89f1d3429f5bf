// SQLite tables read row by row (see sqlite_tables.h).
#include "import/nsys/sqlite_tables.h"

#include <fmt/format.h>
#include <sqlite3.h>

namespace opscope::import::nsys {
namespace {

// `path` as an SQLite URI filename opened read-only and immutable: no journal or lock file is
// looked for or made (the fixtures' folders are read-only, and a profile is never written).
std::string ReadOnlyUri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      uri += fmt::format("%{:02X}", c);
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?mode=ro&immutable=1";
}

std::string Quoted(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

bool Row::IsNull(int column) const {
  return column < 0 || sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::optional<int64_t> Row::Int(int column) const {
  if (column < 0 || sqlite3_column_type(stmt_, column) != SQLITE_INTEGER) return std::nullopt;
  return static_cast<int64_t>(sqlite3_column_int64(stmt_, column));
}

std::string_view Row::Text(int column) const {
  if (column < 0 || sqlite3_column_type(stmt_, column) == SQLITE_NULL) return {};
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

int Table::Column(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

SqliteDatabase::SqliteDatabase() = default;

SqliteDatabase::~SqliteDatabase() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status SqliteDatabase::OpenFile(const std::string& path) {
  const int rc =
      sqlite3_open_v2(ReadOnlyUri(path).c_str(), &db_,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    return Status::IoError(fmt::format("cannot open the SQLite database: {}",
                                       db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)),
                           path);
  }
  return Configure();
}

Status SqliteDatabase::OpenMemory(std::string_view image) {
  if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    return Status::Unavailable("cannot open an in-memory SQLite database");
  }
  // SQLITE_DESERIALIZE_READONLY: SQLite never writes the image, so a read-only mapping is fine.
  auto* data = reinterpret_cast<unsigned char*>(const_cast<char*>(image.data()));
  const auto size = static_cast<sqlite3_int64>(image.size());
  const int rc = sqlite3_deserialize(db_, "main", data, size, size, SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) {
    return Status::InvalidInput(
        fmt::format("not an SQLite database image: {}", sqlite3_errmsg(db_)), 0);
  }
  return Configure();
}

Status SqliteDatabase::Configure() {
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &stmt,
                              nullptr);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      if (name != nullptr) tables_.emplace(name);
    }
  }
  std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
  sqlite3_finalize(stmt);
  if (!error.empty()) {
    return Status::InvalidInput(
        "the database's list of tables (sqlite_schema) cannot be read: " + error, 0);
  }
  return Status::Ok();
}

bool SqliteDatabase::HasTable(std::string_view name) const { return tables_.count(name) > 0; }

Status SqliteDatabase::ReadTable(const std::string& table,
                                 const std::function<void(const Table&)>& on_columns,
                                 const std::function<void(const Row&)>& on_row) const {
  if (!HasTable(table)) return Status::Ok();
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, ("SELECT * FROM " + Quoted(table)).c_str(), -1, &stmt, nullptr) !=
      SQLITE_OK) {
    const std::string error = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return Status::InvalidInput(fmt::format("table {}: cannot be read: {}", table, error), 0);
  }
  Table columns;
  columns.name_ = table;
  for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
    const char* name = sqlite3_column_name(stmt, i);
    columns.columns_.emplace_back(name != nullptr ? name : "");
  }
  on_columns(columns);
  Row row;
  row.stmt_ = stmt;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    on_row(row);
    ++row.index_;
  }
  std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db_);
  sqlite3_finalize(stmt);
  if (!error.empty()) {
    return Status::InvalidInput(fmt::format("table {} row {}: {}", table, row.index_, error), 0);
  }
  return Status::Ok();
}

}  // namespace opscope::import::nsys
