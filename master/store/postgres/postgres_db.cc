// Db over PostgreSQL (libpq); the PostgreSQL-only SQL (JSON helpers, sequence sync) is here.
// Statements are translated once (`?` -> `$n`), prepared on the server once per connection and
// shape of parameters, and run with typed parameters; a result is fetched whole, then Step walks
// its rows. Helper functions that stand in for SQLite's JSON functions (db.h's dialect helpers use
// them) are created at connect time.
#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "master/store/sqlite/db.h"
#include "master/store/sqlite/sql_translate.h"

namespace det::master::store {
namespace {

constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kByteaOid = 17;
constexpr Oid kBoolOid = 16;
// Prepared statements kept per connection; SQL built with a variable number of placeholders
// beyond this runs unprepared.
constexpr size_t kMaxPrepared = 2000;

constexpr const char* kPrelude = R"SQL(
CREATE OR REPLACE FUNCTION det_json_number(doc text, path text[]) RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(doc::jsonb #> path) = 'number'
              THEN (doc::jsonb #>> path)::double precision END
$$;
CREATE OR REPLACE FUNCTION det_json_truth(doc text, path text[]) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE jsonb_typeof(doc::jsonb #> path)
           WHEN 'boolean' THEN CASE WHEN (doc::jsonb #>> path)::boolean THEN 1 ELSE 0 END
           WHEN 'number' THEN CASE WHEN (doc::jsonb #>> path)::double precision <> 0
                                   THEN 1 ELSE 0 END
         END::bigint
$$;
CREATE OR REPLACE FUNCTION det_json_patch(target jsonb, patch jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k text;
  v jsonb;
  result jsonb;
BEGIN
  IF jsonb_typeof(patch) IS DISTINCT FROM 'object' THEN RETURN patch; END IF;
  IF jsonb_typeof(target) IS DISTINCT FROM 'object' THEN
    result := '{}'::jsonb;
  ELSE
    result := target;
  END IF;
  FOR k, v IN SELECT * FROM jsonb_each(patch) LOOP
    IF jsonb_typeof(v) = 'null' THEN
      result := result - k;
    ELSE
      result := jsonb_set(result, ARRAY[k], det_json_patch(result -> k, v));
    END IF;
  END LOOP;
  RETURN result;
END
$$;
)SQL";

// Moves each id sequence of the current schema past its table's largest id, never backwards.
constexpr const char* kSyncSequences = R"SQL(
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT table_name AS t, column_name AS c FROM information_schema.columns
           WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%' LOOP
    EXECUTE format(
      'SELECT setval(pg_get_serial_sequence(%L, %L), GREATEST(COALESCE((SELECT MAX(%I) FROM %I), 0) + 1, '
      'COALESCE(pg_sequence_last_value(pg_get_serial_sequence(%L, %L)::regclass) + 1, 1)), false)',
      r.t, r.c, r.c, r.t, r.t, r.c);
  END LOOP;
END
$$;
)SQL";

std::string ErrorOf(PGconn* conn, const PGresult* res) {
  const char* m = res ? PQresultErrorMessage(res) : nullptr;
  std::string msg = m && *m ? m : PQerrorMessage(conn);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

Status StatusOf(PGconn* conn, const PGresult* res, const char* what) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string msg = ErrorOf(conn, res);
  // Class 23: integrity constraint violation (unique, foreign key, not null, check).
  if (state && std::strncmp(state, "23", 2) == 0) return AlreadyExists("constraint: " + msg);
  return Internal(std::string("postgres ") + what + ": " + msg);
}

class PostgresDb;

class PgStatement : public StatementImpl {
 public:
  PgStatement(PostgresDb* db, const char* sql);
  ~PgStatement() override { PQclear(res_); }

  Status prepared() const override { return Status::Ok(); }
  void BindInt(int i, int64_t v) override {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    Set(i, kInt8Oid, std::string(buf, r.ptr), false);
  }
  void BindDouble(int i, double v) override {
    std::string text;
    if (std::isnan(v)) {
      text = "NaN";
    } else if (std::isinf(v)) {
      text = v > 0 ? "Infinity" : "-Infinity";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", v);
      text = buf;
    }
    Set(i, kFloat8Oid, std::move(text), false);
  }
  void BindText(int i, const std::string& v) override { Set(i, kTextOid, v, false); }
  void BindBlob(int i, const std::string& v) override { Set(i, kByteaOid, v, true); }
  void BindNull(int i) override {
    if (i < 1 || i > static_cast<int>(params_.size())) return;
    params_[i - 1] = Param{};
  }
  void Reset() override {
    PQclear(res_);
    res_ = nullptr;
    row_ = -1;
    for (Param& p : params_) p = Param{};
  }
  Result<bool> Step() override;

  int64_t Int(int col) const override {
    if (PQgetisnull(res_, row_, col)) return 0;
    const char* v = PQgetvalue(res_, row_, col);
    if (PQftype(res_, col) == kBoolOid) return v[0] == 't' ? 1 : 0;
    return std::strtoll(v, nullptr, 10);
  }
  double Double(int col) const override {
    if (PQgetisnull(res_, row_, col)) return 0;
    return std::strtod(PQgetvalue(res_, row_, col), nullptr);
  }
  bool IsNull(int col) const override { return PQgetisnull(res_, row_, col) != 0; }
  std::string Text(int col) const override {
    if (PQgetisnull(res_, row_, col)) return std::string();
    const char* v = PQgetvalue(res_, row_, col);
    if (PQftype(res_, col) != kByteaOid) return std::string(v, PQgetlength(res_, row_, col));
    size_t n = 0;
    unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(v), &n);
    if (bytes == nullptr) return std::string();
    std::string out(reinterpret_cast<const char*>(bytes), n);
    PQfreemem(bytes);
    return out;
  }

 private:
  struct Param {
    Oid type = 0;  // 0: NULL of unknown type
    std::string value;
    bool binary = false;
    bool null = true;
  };
  void Set(int i, Oid type, std::string value, bool binary) {
    if (i < 1 || i > static_cast<int>(params_.size())) return;
    params_[i - 1] = Param{type, std::move(value), binary, false};
  }

  PostgresDb* db_;
  std::string sql_;
  std::vector<Param> params_;
  PGresult* res_ = nullptr;
  int row_ = -1;
};

class PostgresDb : public Db {
 public:
  // `reader`: a read connection (read_pool.h): read-only sessions, and no helper functions
  // created (the write connection made them; creating them from several sessions at once
  // fails with "tuple concurrently updated").
  PostgresDb(PGconn* conn, bool reader) : conn_(conn), reader_(reader) {}
  ~PostgresDb() override { PQfinish(conn_); }

  Dialect dialect() const override { return Dialect::kPostgres; }
  std::unique_ptr<StatementImpl> Prepare(const char* sql) override {
    return std::make_unique<PgStatement>(this, sql);
  }
  Status Exec(const std::string& sql) override {
    EnsureConnected();
    // SQLite's write-transaction start; PostgreSQL locks rows as it writes them.
    const std::string text = sql == "BEGIN IMMEDIATE" ? "BEGIN" : sql;
    PGresult* res = PQexec(conn_, text.c_str());
    ExecStatusType st = PQresultStatus(res);
    Status out = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? Status::Ok()
                                                                 : StatusOf(conn_, res, "exec");
    if (out.ok()) changes_ = ChangesOf(res);
    PQclear(res);
    return out;
  }
  int64_t Changes() override { return changes_; }
  int64_t LastInsertId() override {
    PGresult* res = PQexec(conn_, "SELECT lastval()");
    int64_t id = 0;
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
      id = std::strtoll(PQgetvalue(res, 0, 0), nullptr, 10);
    }
    PQclear(res);
    return id;
  }
  Status SyncIdSequences() override { return Exec(kSyncSequences); }

  // Runs `sql` (already translated) with the given parameters, prepared once per shape.
  PGresult* Run(const std::string& sql, const std::vector<Oid>& types,
                const std::vector<const char*>& values, const std::vector<int>& lengths,
                const std::vector<int>& formats) {
    EnsureConnected();
    std::string key = sql;
    key += '\x1f';
    for (Oid t : types) key += std::to_string(t) + ",";
    auto it = prepared_.find(key);
    const int n = static_cast<int>(types.size());
    if (it == prepared_.end() && prepared_.size() < kMaxPrepared) {
      std::string name = "det_" + std::to_string(prepared_.size());
      PGresult* p = PQprepare(conn_, name.c_str(), sql.c_str(), n, types.data());
      const bool ok = PQresultStatus(p) == PGRES_COMMAND_OK;
      if (!ok) return p;  // the caller reports the error
      PQclear(p);
      it = prepared_.emplace(std::move(key), std::move(name)).first;
    }
    PGresult* res = it != prepared_.end()
                        ? PQexecPrepared(conn_, it->second.c_str(), n, values.data(),
                                         lengths.data(), formats.data(), 0)
                        : PQexecParams(conn_, sql.c_str(), n, types.data(), values.data(),
                                       lengths.data(), formats.data(), 0);
    if (PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK) {
      changes_ = ChangesOf(res);
    }
    return res;
  }

  PGconn* conn() const { return conn_; }

  Status Init() {
    // No notices on stderr (e.g. ROLLBACK outside a transaction after a failed BEGIN).
    DET_RETURN_IF_ERROR(Exec("SET client_min_messages TO error"));
    if (reader_) return Exec("SET default_transaction_read_only TO on");
    return Exec(kPrelude);
  }

 private:
  static int64_t ChangesOf(PGresult* res) {
    const char* n = PQcmdTuples(res);
    return n && *n ? std::strtoll(n, nullptr, 10) : 0;
  }
  // A dropped connection is reopened (outside a transaction nothing is lost; inside one, the
  // statement fails and the caller rolls back).
  void EnsureConnected() {
    if (PQstatus(conn_) == CONNECTION_OK) return;
    PQreset(conn_);
    prepared_.clear();
    if (PQstatus(conn_) == CONNECTION_OK) (void)Init();
  }

  PGconn* conn_;
  const bool reader_;
  int64_t changes_ = 0;
  std::unordered_map<std::string, std::string> prepared_;
};

PgStatement::PgStatement(PostgresDb* db, const char* sql) : db_(db) {
  int n = 0;
  sql_ = sql::TranslatePlaceholders(sql, &n);
  params_.resize(n);
}

Result<bool> PgStatement::Step() {
  if (res_ == nullptr) {
    std::vector<Oid> types;
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
    for (const Param& p : params_) {
      types.push_back(p.type);
      values.push_back(p.null ? nullptr : p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
    res_ = db_->Run(sql_, types, values, lengths, formats);
    ExecStatusType st = PQresultStatus(res_);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      Status err = StatusOf(db_->conn(), res_, "statement");
      PQclear(res_);
      res_ = nullptr;
      return err;
    }
    row_ = -1;
  }
  ++row_;
  return row_ < PQntuples(res_);
}

}  // namespace

namespace {

Result<std::unique_ptr<Db>> Connect(const std::string& conninfo, bool reader) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(conn);
    return Unavailable("cannot connect to postgres: " + msg);
  }
  auto db = std::make_unique<PostgresDb>(conn, reader);
  DET_RETURN_IF_ERROR(db->Init());
  return std::unique_ptr<Db>(std::move(db));
}

}  // namespace

Result<std::unique_ptr<Db>> OpenPostgresDb(const std::string& conninfo) {
  return Connect(conninfo, /*reader=*/false);
}

Result<std::unique_ptr<Db>> OpenPostgresReadDb(const std::string& conninfo) {
  return Connect(conninfo, /*reader=*/true);
}

}  // namespace det::master::store
