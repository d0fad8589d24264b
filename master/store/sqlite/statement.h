#pragma once
// Statement: a prepared statement with typed binds and column reads, on either database the
// Store runs on (db.h). Internal to the store.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/sqlite/db.h"

namespace det::master::store {

class Statement {
 public:
  Statement(Db* db, const char* sql) : impl_(db->Prepare(sql)) {}
  Statement(Db* db, const std::string& sql) : Statement(db, sql.c_str()) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status prepared() const { return impl_->prepared(); }

  Statement& Bind(int i, int64_t v) {
    impl_->BindInt(i, v);
    return *this;
  }
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, bool v) { return Bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Statement& Bind(int i, double v) {
    impl_->BindDouble(i, v);
    return *this;
  }
  Statement& Bind(int i, const std::string& v) {
    impl_->BindText(i, v);
    return *this;
  }
  Statement& BindBlob(int i, const std::string& v) {
    impl_->BindBlob(i, v);
    return *this;
  }
  template <typename T>
  Statement& Bind(int i, const std::optional<T>& v) {
    if (!v) {
      impl_->BindNull(i);
      return *this;
    }
    return Bind(i, *v);
  }

  void Reset() { impl_->Reset(); }

  // Returns true while a row is available.
  Result<bool> Step() { return impl_->Step(); }
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

  int64_t Int(int col) const { return impl_->Int(col); }
  double Double(int col) const { return impl_->Double(col); }
  bool IsNull(int col) const { return impl_->IsNull(col); }
  std::string Text(int col) const { return impl_->Text(col); }
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
  std::unique_ptr<StatementImpl> impl_;
};

}  // namespace det::master::store

// Store methods written against the SQLite C API keep compiling and work on both databases.
inline int64_t sqlite3_changes(::det::master::store::Db* db) { return db->Changes(); }
inline int64_t sqlite3_last_insert_rowid(::det::master::store::Db* db) {
  return db->LastInsertId();
}

// Prepares `var` on the store's db_ and returns its error from the enclosing function.
#define DET_PREPARE(var, sql)                    \
  ::det::master::store::Statement var(db_, sql); \
  DET_RETURN_IF_ERROR(var.prepared())

// Prepares `var` on the connection `db` (e.g. a SqliteStore::Reader's) and returns its error from
// the enclosing function.
#define DET_PREPARE_ON(var, db, sql)            \
  ::det::master::store::Statement var(db, sql); \
  DET_RETURN_IF_ERROR(var.prepared())
