// Reading tables of an SQLite database with the SQLite C API (Debian's libsqlite3-dev), as the
// Nsight Systems reader needs: a file opened read-only (no journal, no lock files), or bytes in
// memory (sqlite3_deserialize, read-only), tables read row by row with columns looked up by name,
// and every error naming the table and the row. A table the database lacks reads as empty.
//
// Defensive: the schema is not trusted (SQLITE_DBCONFIG_TRUSTED_SCHEMA off, DEFENSIVE on) and only
// real tables are read, never views, so a crafted file cannot run code of its own.
//
// Not thread-safe: one database, one thread.
#ifndef OPSCOPE_IMPORT_NSYS_SQLITE_TABLES_H_
#define OPSCOPE_IMPORT_NSYS_SQLITE_TABLES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace opscope::import::nsys {

// One row of a table being read; valid during the callback.
class Row {
 public:
  // The value of column `column` (an index from Table::Column; -1 = the table lacks it).
  bool IsNull(int column) const;
  // An integer, or nullopt when the value is NULL or not an integer.
  std::optional<int64_t> Int(int column) const;
  // Text (a view valid during the callback); "" when NULL.
  std::string_view Text(int column) const;
  uint64_t index() const { return index_; }

 private:
  friend class SqliteDatabase;
  sqlite3_stmt* stmt_ = nullptr;
  uint64_t index_ = 0;
};

// The columns of a table, by name, once it is opened for reading.
class Table {
 public:
  // The column's index, or -1 when the table has no such column.
  int Column(std::string_view name) const;
  const std::string& name() const { return name_; }

 private:
  friend class SqliteDatabase;
  std::string name_;
  std::vector<std::string> columns_;
};

class SqliteDatabase {
 public:
  SqliteDatabase();
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  // The database file at `path`, read-only and immutable (nothing is written beside it).
  Status OpenFile(const std::string& path);
  // A database image in memory, which must outlive this object.
  Status OpenMemory(std::string_view image);

  // Whether the database has a table (not a view) of this name.
  bool HasTable(std::string_view name) const;
  // Reads every row of `table` in rowid order: `on_columns` once with its columns, then `on_row`
  // per row. An absent table reads as empty (neither is called). Errors name the table and the row
  // where reading stopped; the rows before it were handed over.
  Status ReadTable(const std::string& table, const std::function<void(const Table&)>& on_columns,
                   const std::function<void(const Row&)>& on_row) const;

 private:
  Status Configure();

  sqlite3* db_ = nullptr;
  std::set<std::string, std::less<>> tables_;
};

}  // namespace opscope::import::nsys

#endif  // OPSCOPE_IMPORT_NSYS_SQLITE_TABLES_H_
