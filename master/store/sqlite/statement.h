#pragma once
// Statement: a prepared SQLite statement with typed binds and column reads. Internal to the
// SQLite backend.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::store {

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status prepared() const {
    if (rc_ == SQLITE_OK) return Status::Ok();
    return Internal(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
  }

  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, bool v) { return Bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Statement& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindBlob(int i, const std::string& v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  template <typename T>
  Statement& Bind(int i, const std::optional<T>& v) {
    if (!v) {
      sqlite3_bind_null(stmt_, i);
      return *this;
    }
    return Bind(i, *v);
  }

  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  // Returns true while a row is available.
  Result<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (rc == SQLITE_CONSTRAINT) {
      return AlreadyExists(std::string("constraint: ") + sqlite3_errmsg(db_));
    }
    return Internal(std::string("sqlite step: ") + sqlite3_errmsg(db_));
  }
  Status Run() {
    Result<bool> r = Step();
    return r.status();
  }

  // Steps through every row, converting each with `read(*this)`.
  template <typename T, typename F>
  Result<std::vector<T>> Collect(F read) {
    std::vector<T> out;
    while (true) {
      DET_ASSIGN_OR_RETURN(bool row, Step());
      if (!row) break;
      out.push_back(read(*this));
    }
    return out;
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
  }
  std::optional<int64_t> OptInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Int(col);
  }
  std::optional<double> OptDouble(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Double(col);
  }
  std::optional<std::string> OptText(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Text(col);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

}  // namespace det::master::store

// Prepares `var` on the store's db_ and returns its error from the enclosing function.
#define DET_PREPARE(var, sql) \
  ::det::master::store::Statement var(db_, sql); \
  DET_RETURN_IF_ERROR(var.prepared())
