// Db over SQLite: a thin layer over sqlite3 prepared statements.
#include <sqlite3.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/store/session_token.h"
#include "master/store/sqlite/db.h"

namespace det::master::store {
namespace {

// Finished statements kept for their SQL text's next use: compiling a statement costs more than
// running most of them (the metric writer prepares the same few per batch and per trial). A
// statement comes back reset with its bindings cleared, so it holds no lock and no value. When
// the pool is full it starts over, which bounds it under SQL built with inlined values.
class StatementPool {
 public:
  static constexpr size_t kMaxIdle = 256;

  ~StatementPool() { Clear(); }

  // A compiled statement for `sql`, or nullptr when none is idle.
  sqlite3_stmt* Take(const std::string& sql) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = idle_.find(sql);
    if (it == idle_.end() || it->second.empty()) return nullptr;
    sqlite3_stmt* stmt = it->second.back();
    it->second.pop_back();
    --count_;
    return stmt;
  }

  void Give(std::string sql, sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    std::lock_guard<std::mutex> lock(mu_);
    if (count_ >= kMaxIdle) ClearLocked();
    idle_[std::move(sql)].push_back(stmt);
    ++count_;
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    ClearLocked();
  }

 private:
  void ClearLocked() {
    for (auto& [sql, stmts] : idle_) {
      for (sqlite3_stmt* s : stmts) sqlite3_finalize(s);
    }
    idle_.clear();
    count_ = 0;
  }

  std::mutex mu_;
  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> idle_;
  size_t count_ = 0;
};

class SqliteStatement : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, const char* sql, StatementPool* pool)
      : db_(db), pool_(pool), sql_(sql) {
    stmt_ = pool_->Take(sql_);
    rc_ = stmt_ != nullptr ? SQLITE_OK : sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~SqliteStatement() override {
    if (rc_ == SQLITE_OK && stmt_ != nullptr) {
      pool_->Give(std::move(sql_), stmt_);
    } else {
      sqlite3_finalize(stmt_);
    }
  }

  Status prepared() const override {
    if (rc_ == SQLITE_OK) return Status::Ok();
    return Internal(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
  }
  void BindInt(int i, int64_t v) override { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) override { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, const std::string& v) override {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindBlob(int i, const std::string& v) override {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) override { sqlite3_bind_null(stmt_, i); }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Result<bool> Step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if (rc == SQLITE_CONSTRAINT) {
      return AlreadyExists(std::string("constraint: ") + sqlite3_errmsg(db_));
    }
    return Internal(std::string("sqlite step: ") + sqlite3_errmsg(db_));
  }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const override { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const override {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
  }

 private:
  sqlite3* db_;
  StatementPool* pool_;
  std::string sql_;  // the pool's key
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

class SqliteDb : public Db {
 public:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  ~SqliteDb() override {
    pool_.Clear();  // close fails while any statement is unfinalized
    sqlite3_close(db_);
  }

  Dialect dialect() const override { return Dialect::kSqlite; }
  std::unique_ptr<StatementImpl> Prepare(const char* sql) override {
    return std::make_unique<SqliteStatement>(db_, sql, &pool_);
  }
  Status Exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return Internal("sqlite: " + msg);
    }
    return Status::Ok();
  }
  int64_t Changes() override { return sqlite3_changes(db_); }
  int64_t LastInsertId() override { return sqlite3_last_insert_rowid(db_); }
  Status SyncIdSequences() override { return Status::Ok(); }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_;
  StatementPool pool_;
};

// det_sha256_hex(text): SessionTokenDigest, for migration 0022 (hashing stored session tokens).
void Sha256HexFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const unsigned char* text = sqlite3_value_text(argv[0]);
  std::string in(reinterpret_cast<const char*>(text), sqlite3_value_bytes(argv[0]));
  std::string digest = SessionTokenDigest(in);
  sqlite3_result_text(ctx, digest.c_str(), static_cast<int>(digest.size()), SQLITE_TRANSIENT);
}

}  // namespace

sqlite3* SqliteHandle(Db* db) {
  auto* sqlite = dynamic_cast<SqliteDb*>(db);
  return sqlite == nullptr ? nullptr : sqlite->handle();
}

Result<std::unique_ptr<Db>> OpenSqliteDb(const std::string& path) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Unavailable("cannot open sqlite database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 10000);
  sqlite3_create_function_v2(db, "det_sha256_hex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                             Sha256HexFunction, nullptr, nullptr, nullptr);
  return std::unique_ptr<Db>(new SqliteDb(db));
}

Result<std::unique_ptr<Db>> OpenSqliteReadDb(const std::string& path) {
  sqlite3* db = nullptr;
  // No mutex of SQLite's own: the read pool hands a connection to one thread at a time.
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Unavailable("cannot open sqlite database " + path + " for reading: " + msg);
  }
  // WAL readers wait only while the WAL is recovered (e.g. after the master was killed).
  sqlite3_busy_timeout(db, 10000);
  auto out = std::unique_ptr<Db>(new SqliteDb(db));
  // A larger page cache than the default 2 MB: list pages and series seeks revisit index pages.
  DET_RETURN_IF_ERROR(out->Exec("PRAGMA cache_size=-32768"));
  return out;
}

}  // namespace det::master::store
