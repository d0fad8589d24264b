#pragma once
// Db: one database connection the Store runs its SQL on, either SQLite (embedded, the default)
// or PostgreSQL (libpq). Statement (statement.h) wraps a Db's prepared statement, so that one
// implementation of the Store methods runs on both. The SQL the Store writes is the subset both
// accept (`?` placeholders, ON CONFLICT .. DO, RETURNING); the few real differences are the
// dialect helpers below.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace det::master::store {

enum class Dialect { kSqlite, kPostgres };

// One prepared statement; Statement is its typed front. Parameter indexes are 1-based, column
// indexes 0-based, as in SQLite.
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual Status prepared() const = 0;
  virtual void BindInt(int i, int64_t v) = 0;
  virtual void BindDouble(int i, double v) = 0;
  virtual void BindText(int i, const std::string& v) = 0;
  virtual void BindBlob(int i, const std::string& v) = 0;
  virtual void BindNull(int i) = 0;
  // Forgets the current result and every bound value (unbound parameters read as NULL).
  virtual void Reset() = 0;
  // True while a row is available; a constraint violation is AlreadyExists.
  virtual Result<bool> Step() = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  virtual std::string Text(int col) const = 0;
};

class Db {
 public:
  virtual ~Db() = default;
  virtual Dialect dialect() const = 0;
  virtual std::unique_ptr<StatementImpl> Prepare(const char* sql) = 0;
  // Runs one or more statements without parameters. "BEGIN IMMEDIATE" starts a write
  // transaction on either database.
  virtual Status Exec(const std::string& sql) = 0;
  // Rows changed by the latest statement run on this connection.
  virtual int64_t Changes() = 0;
  // The id the latest INSERT on this connection assigned (prefer `RETURNING id`).
  virtual int64_t LastInsertId() = 0;
  // After rows were inserted with explicit ids: moves every id sequence past the largest id
  // (PostgreSQL; SQLite's rowids need nothing).
  virtual Status SyncIdSequences() = 0;
};

// Opens (creating if needed) the SQLite database at `path`.
Result<std::unique_ptr<Db>> OpenSqliteDb(const std::string& path);
// Opens the existing SQLite database at `path` read-only (a reader beside the write connection).
Result<std::unique_ptr<Db>> OpenSqliteReadDb(const std::string& path);
// Connects to PostgreSQL; `conninfo` is a libpq connection string or postgres:// URI.
Result<std::unique_ptr<Db>> OpenPostgresDb(const std::string& conninfo);
// A read-only session beside the one OpenPostgresDb made (which created the helper functions).
Result<std::unique_ptr<Db>> OpenPostgresReadDb(const std::string& conninfo);

// Dialect helpers: SQL fragments for the few things the two databases spell differently.
namespace sql {

// The largest LIMIT: "no limit" in both (SQLite also takes -1, PostgreSQL does not).
inline constexpr int64_t kNoLimit = INT64_MAX;

// The larger of two scalar expressions (SQLite's two-argument MAX, PostgreSQL's GREATEST).
std::string Greatest(Dialect d, std::string_view a, std::string_view b);
// The text at `keys` in the JSON text `doc` (NULL when absent). Keys are literal identifiers.
std::string JsonText(Dialect d, std::string_view doc, std::initializer_list<std::string_view> keys);
// The number at `keys` in `doc` (NULL when absent or not a number).
std::string JsonNumber(Dialect d, std::string_view doc,
                       std::initializer_list<std::string_view> keys);
// 1 or 0 for the boolean (or number) at `keys` in `doc`, `fallback` when absent.
std::string JsonTruth(Dialect d, std::string_view doc, std::initializer_list<std::string_view> keys,
                      int fallback);
// The number in `doc` at a path bound as the parameter `param` (e.g. "?1"), made by
// JsonPathParam.
std::string JsonNumberAtParam(Dialect d, std::string_view doc, std::string_view param);
// The value to bind for JsonNumberAtParam's path: `keys` may hold any characters.
std::string JsonPathParam(Dialect d, std::initializer_list<std::string_view> keys);
// 1 when the JSON array at top-level `key` of `doc` holds the string bound as `?`.
std::string JsonArrayHasParam(Dialect d, std::string_view doc, std::string_view key);
// A subquery selecting each string of a JSON array bound as `?`.
std::string JsonArrayParamElements(Dialect d);
// `doc` with the JSON `patch` merged in (RFC 7396, as SQLite's json_patch).
std::string JsonPatch(Dialect d, std::string_view doc, std::string_view patch);
// Whether `needle` occurs in `haystack` (both SQL expressions).
std::string Contains(Dialect d, std::string_view haystack, std::string_view needle);
// `?` for an id parameter that is NULL when the table's next id is wanted (SQLite assigns a
// rowid for NULL; PostgreSQL needs the sequence's next value).
std::string IdOrNext(Dialect d, std::string_view table);

}  // namespace sql

}  // namespace det::master::store
