#include "master/store/sqlite/sqlite_store.h"

#include <chrono>
#include <set>
#include <span>

#include "master/store/migrations.h"
#include "master/store/session_token.h"
#include "master/store/sqlite/metric_rows.h"
#include "master/store/sqlite/sql_translate.h"
#include "master/store/sqlite/statement.h"
#include "master/store/sqlite/task_log_rows.h"
#include "master/store/sqlite/trial_rows.h"

namespace det::master::store {
namespace {

using nlohmann::json;

json ParseJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json() : j;
}

// Every read but the restore's leaves out the searcher snapshot: it is several MB at 20,000
// trials and only a restore needs it (ExperimentRow::snapshot stays null).
constexpr const char* kExperimentColumns =
    "id, state, config, original_config, owner_id, job_id, start_time, end_time, archived, "
    "progress, parent_id, notes";
// With `experiment_snapshots s` left-joined (migration 0026 moved the snapshot there).
constexpr const char* kExperimentColumnsWithSnapshot =
    "id, state, config, original_config, owner_id, job_id, start_time, end_time, archived, "
    "progress, parent_id, notes, COALESCE(s.snapshot, '{}')";

ExperimentRow ReadExperiment(const Statement& s) {
  ExperimentRow r;
  r.id = s.Int(0);
  r.state = s.Text(1);
  r.config = ParseJson(s.Text(2));
  r.original_config = s.Text(3);
  r.owner_id = s.Int(4);
  r.job_id = s.Text(5);
  r.start_time = s.Int(6);
  r.end_time = s.OptInt(7);
  r.archived = s.Int(8) != 0;
  r.progress = s.Double(9);
  r.parent_id = s.OptInt(10);
  r.notes = s.Text(11);
  return r;
}

ExperimentRow ReadExperimentWithSnapshot(const Statement& s) {
  ExperimentRow r = ReadExperiment(s);
  r.snapshot = ParseJson(s.Text(12));
  return r;
}

constexpr const char* kTrialColumns =
    "id, experiment_id, request_id, seed, hparams, state, start_time, end_time, restarts, run_id, "
    "total_batches, runner_state, searcher_metric, task_id, metadata, warm_start_checkpoint_uuid, "
    "run_queued_at";

TrialRow ReadTrial(const Statement& s) { return ReadTrialRow(s); }

constexpr const char* kAllocationColumns =
    "allocation_id, task_id, trial_id, agent_id, state, token, slots, start_time, end_time, "
    "exit_code, exit_reason, resources";

AllocationRow ReadAllocation(const Statement& s) {
  AllocationRow r;
  r.allocation_id = s.Text(0);
  r.task_id = s.Text(1);
  r.trial_id = s.Int(2);
  r.agent_id = s.Text(3);
  r.state = s.Text(4);
  r.token = s.Text(5);
  r.slots = s.Int(6);
  r.start_time = s.Int(7);
  r.end_time = s.OptInt(8);
  r.exit_code = s.OptInt(9);
  r.exit_reason = s.Text(10);
  r.resources = nlohmann::json::parse(s.Text(11), nullptr, /*allow_exceptions=*/false);
  if (!r.resources.is_array()) r.resources = nlohmann::json::array();
  return r;
}

CheckpointRow ReadCheckpoint(const Statement& s) { return ReadCheckpointRow(s); }

UserRow ReadUser(const Statement& s) {
  UserRow u;
  u.id = s.Int(0);
  u.username = s.Text(1);
  u.password_hash = s.OptText(2);
  u.admin = s.Int(3) != 0;
  u.active = s.Int(4) != 0;
  u.display_name = s.Text(5);
  return u;
}

}  // namespace

Result<SqliteOptions::Synchronous> ParseSqliteSynchronous(const std::string& text) {
  if (text == "normal") return SqliteOptions::Synchronous::kNormal;
  if (text == "full") return SqliteOptions::Synchronous::kFull;
  return InvalidArgument("db.synchronous: must be 'normal' or 'full' (got '" + text + "')");
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       SqliteOptions options) {
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Db> db, OpenSqliteDb(path));
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db)));
  DET_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  auto pragma = [](SqliteOptions::Synchronous sync) {
    return std::string(sync == SqliteOptions::Synchronous::kFull ? "PRAGMA synchronous=FULL"
                                                                 : "PRAGMA synchronous=NORMAL");
  };
  DET_RETURN_IF_ERROR(store->Exec(pragma(options.synchronous)));
  if (options.metrics_synchronous != options.synchronous) {
    store->sync_pragma_ = pragma(options.synchronous);
    store->metrics_sync_pragma_ = pragma(options.metrics_synchronous);
  }
  DET_RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  // The pages one metric batch touches (index leaves of every reporting trial, their summaries)
  // outgrow SQLite's default 2 MB cache at 1,000 trials: each batch read them again.
  DET_RETURN_IF_ERROR(store->Exec("PRAGMA cache_size=-32768"));
  DET_RETURN_IF_ERROR(store->Migrate());
  store->StartReaders([path] { return OpenSqliteReadDb(path); });
  // Without it (no second connection could be opened) the commits checkpoint, as SQLite does by
  // default: slower at the tail, as safe.
  if (options.background_checkpoints) (void)store->StartCheckpointer(path);
  return store;
}

Status SqliteStore::StartCheckpointer(const std::string& path) {
  DET_ASSIGN_OR_RETURN(checkpointer_,
                       WalCheckpointer::Start(db_, path, [this](const std::function<void()>& fn) {
                         std::lock_guard<std::mutex> lock(mu_);
                         fn();
                       }));
  return Status::Ok();
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::OpenPostgres(const std::string& conninfo) {
  DET_ASSIGN_OR_RETURN(std::unique_ptr<Db> db, OpenPostgresDb(conninfo));
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db)));
  DET_RETURN_IF_ERROR(store->Migrate());
  store->StartReaders([conninfo] { return OpenPostgresReadDb(conninfo); });
  return store;
}

SqliteStore::~SqliteStore() = default;

Status SqliteStore::Exec(const std::string& sql) { return db_->Exec(sql); }

Status SqliteStore::InWriteTransactionLocked(const std::function<Status()>& body) {
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  if (Status st = body(); !st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Status SqliteStore::Migrate() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(
      Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
           "name TEXT NOT NULL)"));
  // Every version not yet recorded, not only those above the highest: a database made by a
  // build that had a later migration still gets an earlier one merged after it.
  std::set<int64_t> applied;
  {
    DET_PREPARE(s, "SELECT version FROM schema_migrations");
    while (true) {
      DET_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      applied.insert(s.Int(0));
    }
  }
  for (const Migration& m : Migrations()) {
    if (applied.count(m.version)) continue;
    DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    // PostgreSQL: the migration's twin where it has one, else its DDL translated.
    const bool pg = db_->dialect() == Dialect::kPostgres;
    Status st = Exec(!pg              ? std::string(m.sql)
                     : m.postgres_sql ? std::string(m.postgres_sql)
                                      : sql::TranslateDdl(m.sql));
    // Rows inserted with explicit ids (e.g. the default workspace) must not collide with the
    // next generated id.
    if (st.ok() && pg) st = db_->SyncIdSequences();
    // 0021 keeps each trial's best and latest validation on its row: computed here for the
    // reports already stored, by the same code that keeps them as reports arrive.
    if (st.ok() && m.version == 21) st = BackfillTrialValidationsLocked();
    if (st.ok()) {
      Statement s(db_, "INSERT INTO schema_migrations (version, name) VALUES (?, ?)");
      st = s.prepared();
      if (st.ok())
        st = s.Bind(1, static_cast<int64_t>(m.version)).Bind(2, std::string(m.name)).Run();
    }
    if (!st.ok()) {
      (void)Exec("ROLLBACK");
      return Internal(std::string("migration ") + m.name + " failed: " + st.message());
    }
    DET_RETURN_IF_ERROR(Exec("COMMIT"));
  }
  return Status::Ok();
}

Result<std::string> SqliteStore::GetOrCreateClusterId(const std::string& fresh_id) {
  std::lock_guard<std::mutex> lock(mu_);
  {
    DET_PREPARE(
        ins, "INSERT INTO cluster_id (id, cluster_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING");
    DET_RETURN_IF_ERROR(ins.Bind(1, fresh_id).Run());
  }
  DET_PREPARE(s, "SELECT cluster_id FROM cluster_id WHERE id = 1");
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Internal("cluster id missing");
  return s.Text(0);
}

Result<UserRow> SqliteStore::GetUserByName(const std::string& username) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT id, username, password_hash, admin, active, display_name FROM users "
                 "WHERE username = ?");
  s.Bind(1, username);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("user '" + username + "' not found");
  return ReadUser(s);
}

Result<UserRow> SqliteStore::GetUserById(int64_t id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT id, username, password_hash, admin, active, display_name FROM users "
                 "WHERE id = ?");
  s.Bind(1, id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("user " + std::to_string(id) + " not found");
  return ReadUser(s);
}

Result<std::vector<UserRow>> SqliteStore::ListUsers() {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT id, username, password_hash, admin, active, display_name FROM users "
                 "ORDER BY id");
  return s.Collect<UserRow>(ReadUser);
}

Status SqliteStore::SetUserPassword(int64_t user_id, const std::optional<std::string>& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE users SET password_hash = ? WHERE id = ?");
  return s.Bind(1, hash).Bind(2, user_id).Run();
}

Result<bool> SqliteStore::EnsureBuiltinUsers(const std::optional<std::string>& initial_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  {
    DET_PREPARE(s, "SELECT COUNT(*) FROM users");
    DET_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row && s.Int(0) > 0) return false;
  }
  DET_PREPARE(s,
              "INSERT INTO users (username, password_hash, admin, active) VALUES "
              "('admin', ?, 1, 1), ('determined', ?, 0, 1)");
  DET_RETURN_IF_ERROR(s.Bind(1, initial_hash).Bind(2, initial_hash).Run());
  return true;
}

Status SqliteStore::CreateSession(const std::string& token, int64_t user_id, int64_t expiry) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO user_sessions (token, user_id, created_at, expiry) "
              "VALUES (?, ?, ?, ?)");
  const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  return s.Bind(1, SessionTokenDigest(token))
      .Bind(2, user_id)
      .Bind(3, now_micros)
      .Bind(4, expiry)
      .Run();
}

Result<int64_t> SqliteStore::LookupSession(const std::string& token, int64_t now) {
  Reader r = Read();
  DET_PREPARE_ON(
      s, r.db(),
      "SELECT user_id FROM user_sessions WHERE token = ? AND revoked = 0 AND expiry > ?");
  s.Bind(1, SessionTokenDigest(token)).Bind(2, now);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Unauthenticated("invalid credentials");
  return s.Int(0);
}

Status SqliteStore::RevokeSession(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE user_sessions SET revoked = 1 WHERE token = ?");
  return s.Bind(1, SessionTokenDigest(token)).Run();
}

Status SqliteStore::InsertExperimentBlobsLocked(int64_t id, const std::string& model_definition,
                                                const nlohmann::json& snapshot) {
  DET_PREPARE(m,
              "INSERT INTO experiment_model_definitions (experiment_id, model_definition) "
              "VALUES (?, ?)");
  m.Bind(1, id).BindBlob(2, model_definition);
  DET_RETURN_IF_ERROR(m.Run());
  if (snapshot.is_null() || (snapshot.is_object() && snapshot.empty())) return Status::Ok();
  DET_PREPARE(s, "INSERT INTO experiment_snapshots (experiment_id, snapshot) VALUES (?, ?)");
  return s.Bind(1, id).Bind(2, snapshot.dump()).Run();
}

Result<int64_t> SqliteStore::InsertExperimentLocked(const ExperimentRow& row,
                                                    const std::string& model_definition) {
  DET_PREPARE(s,
              "INSERT INTO experiments (state, config, original_config, owner_id, job_id, "
              "start_time, end_time, archived, progress, parent_id, notes) VALUES (?, ?, ?, ?, "
              "?, ?, ?, ?, ?, ?, ?) RETURNING id");
  s.Bind(1, row.state).Bind(2, row.config.dump()).Bind(3, row.original_config);
  s.Bind(4, row.owner_id).Bind(5, row.job_id).Bind(6, row.start_time).Bind(7, row.end_time);
  s.Bind(8, row.archived).Bind(9, row.progress).Bind(10, row.parent_id).Bind(11, row.notes);
  DET_ASSIGN_OR_RETURN(bool inserted, s.Step());
  if (!inserted) return Internal("insert experiment: no id returned");
  int64_t id = s.Int(0);
  s.Reset();
  DET_RETURN_IF_ERROR(InsertExperimentBlobsLocked(id, model_definition, row.snapshot));
  return id;
}

Result<int64_t> SqliteStore::InsertExperiment(const ExperimentRow& row,
                                              const std::string& model_definition) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Result<int64_t> id = InsertExperimentLocked(row, model_definition);
  if (!id.ok()) {
    (void)Exec("ROLLBACK");
    return id;
  }
  DET_RETURN_IF_ERROR(Exec("COMMIT"));
  return id;
}

Result<ExperimentRow> SqliteStore::GetExperiment(int64_t id) {
  Reader r = Read();
  std::string sql = std::string("SELECT ") + kExperimentColumns + " FROM experiments WHERE id = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("experiment " + std::to_string(id) + " not found");
  return ReadExperiment(s);
}

Result<std::vector<ExperimentRow>> SqliteStore::ListExperiments(std::optional<bool> archived,
                                                                const Page& page, int64_t* total) {
  Reader r = Read();
  std::string where = archived ? " WHERE archived = ?" : "";
  {
    std::string sql = "SELECT COUNT(*) FROM experiments" + where;
    DET_PREPARE_ON(c, r.db(), sql.c_str());
    if (archived) c.Bind(1, *archived);
    DET_ASSIGN_OR_RETURN(bool row, c.Step());
    *total = row ? c.Int(0) : 0;
  }
  std::string sql = std::string("SELECT ") + kExperimentColumns + " FROM experiments" + where +
                    " ORDER BY id LIMIT ? OFFSET ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  int i = 1;
  if (archived) s.Bind(i++, *archived);
  s.Bind(i, page.limit > 0 ? page.limit : sql::kNoLimit);
  s.Bind(i + 1, page.offset);
  return s.Collect<ExperimentRow>(ReadExperiment);
}

Result<std::vector<ExperimentRow>> SqliteStore::ListNonTerminalExperiments() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kExperimentColumnsWithSnapshot +
                    " FROM experiments LEFT JOIN experiment_snapshots s ON s.experiment_id = "
                    "experiments.id WHERE state IN ('ACTIVE', 'PAUSED', 'STOPPING_COMPLETED', "
                    "'STOPPING_CANCELED', 'STOPPING_KILLED', 'STOPPING_ERROR') AND id NOT IN "
                    "(SELECT experiment_id FROM unmanaged_experiments) ORDER BY id";
  DET_PREPARE(s, sql.c_str());
  return s.Collect<ExperimentRow>(ReadExperimentWithSnapshot);
}

Result<std::string> SqliteStore::GetModelDefinition(int64_t experiment_id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT model_definition FROM experiment_model_definitions WHERE "
                 "experiment_id = ?");
  s.Bind(1, experiment_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("experiment " + std::to_string(experiment_id) + " not found");
  return s.Text(0);
}

Status SqliteStore::UpdateExperimentState(int64_t id, const std::string& state,
                                          std::optional<int64_t> end_time) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE experiments SET state = ?, end_time = ? WHERE id = ?");
  return s.Bind(1, state).Bind(2, end_time).Bind(3, id).Run();
}

Status SqliteStore::UpdateExperimentProgress(int64_t id, double progress) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE experiments SET progress = ? WHERE id = ?");
  return s.Bind(1, progress).Bind(2, id).Run();
}

Status SqliteStore::UpdateExperimentSnapshot(int64_t id, const nlohmann::json& snapshot) {
  return WriteExperimentSnapshotText(id, snapshot.dump());
}

Status SqliteStore::UpdateExperimentMeta(int64_t id, const nlohmann::json& config, bool archived,
                                         const std::string& notes) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE experiments SET config = ?, archived = ?, notes = ? WHERE id = ?");
  return s.Bind(1, config.dump()).Bind(2, archived).Bind(3, notes).Bind(4, id).Run();
}

Status SqliteStore::ExecEachWithIdLocked(std::span<const char* const> statements, int64_t id) {
  for (const char* text : statements) {
    Statement s(db_, text);
    DET_RETURN_IF_ERROR(s.prepared());
    DET_RETURN_IF_ERROR(s.Bind(1, id).Run());
  }
  return Status::Ok();
}

Status SqliteStore::DeleteExperiment(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  static const char* kStatements[] = {
      "DELETE FROM task_logs WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = ?)",
      "DELETE FROM metrics WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = ?)",
      // Links from or to the experiment's trials ("?1" binds the id to both places).
      "DELETE FROM trial_source_infos WHERE trial_id IN (SELECT id FROM trials WHERE "
      "experiment_id = ?1) OR checkpoint_uuid IN (SELECT uuid FROM checkpoints WHERE trial_id IN "
      "(SELECT id FROM trials WHERE experiment_id = ?1))",
      "DELETE FROM checkpoints WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = ?)",
      "DELETE FROM allocations WHERE trial_id IN (SELECT id FROM trials WHERE experiment_id = ?)",
      "DELETE FROM trials WHERE experiment_id = ?",
      "DELETE FROM experiment_model_definitions WHERE experiment_id = ?",
      "DELETE FROM experiment_snapshots WHERE experiment_id = ?",
      "DELETE FROM experiments WHERE id = ?",
  };
  Status st = ExecEachWithIdLocked(kStatements, id);
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<int64_t> SqliteStore::InsertTrial(const TrialRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO trials (experiment_id, request_id, seed, hparams, state, start_time, "
              "end_time, restarts, run_id, total_batches, runner_state, searcher_metric, "
              "task_id, metadata, warm_start_checkpoint_uuid) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
  s.Bind(1, row.experiment_id).Bind(2, row.request_id).Bind(3, row.seed);
  s.Bind(4, row.hparams.dump()).Bind(5, row.state).Bind(6, row.start_time).Bind(7, row.end_time);
  s.Bind(8, row.restarts).Bind(9, row.run_id).Bind(10, row.total_batches);
  s.Bind(11, row.runner_state).Bind(12, row.searcher_metric).Bind(13, row.task_id);
  s.Bind(14, row.metadata.dump()).Bind(15, row.warm_start_checkpoint_uuid);
  DET_ASSIGN_OR_RETURN(bool inserted, s.Step());
  if (!inserted) return Internal("insert trial: no id returned");
  return s.Int(0);
}

Result<TrialRow> SqliteStore::GetTrial(int64_t id) {
  Reader r = Read();
  std::string sql = std::string("SELECT ") + kTrialColumns + " FROM trials WHERE id = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("trial " + std::to_string(id) + " not found");
  return ReadTrial(s);
}

Result<std::vector<TrialRow>> SqliteStore::ListTrials(int64_t experiment_id) {
  Reader r = Read();
  std::string sql =
      std::string("SELECT ") + kTrialColumns + " FROM trials WHERE experiment_id = ? ORDER BY id";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, experiment_id);
  return s.Collect<TrialRow>(ReadTrial);
}

Status SqliteStore::UpdateTrial(const TrialRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  // total_batches only grows: metric reports raise it concurrently with other trial updates.
  const std::string sql =
      "UPDATE trials SET state = ?, end_time = ?, restarts = ?, run_id = ?, total_batches = " +
      sql::Greatest(db_->dialect(), "total_batches", "?") +
      ", runner_state = ?, searcher_metric = ?, task_id = ?, metadata = ?, hparams = ? WHERE id = "
      "?";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, row.state).Bind(2, row.end_time).Bind(3, row.restarts).Bind(4, row.run_id);
  s.Bind(5, row.total_batches).Bind(6, row.runner_state).Bind(7, row.searcher_metric);
  s.Bind(8, row.task_id).Bind(9, row.metadata.dump()).Bind(10, row.hparams.dump()).Bind(11, row.id);
  return s.Run();
}

Status SqliteStore::UpsertAllocation(const AllocationRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO allocations (allocation_id, task_id, trial_id, agent_id, state, "
              "token, slots, start_time, end_time, exit_code, exit_reason, resources) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(allocation_id) DO UPDATE SET "
              "token = excluded.token, agent_id = excluded.agent_id, state = excluded.state, "
              "end_time = "
              "excluded.end_time, exit_code = excluded.exit_code, exit_reason = "
              "excluded.exit_reason, resources = excluded.resources");
  s.Bind(1, row.allocation_id).Bind(2, row.task_id).Bind(3, row.trial_id).Bind(4, row.agent_id);
  s.Bind(5, row.state).Bind(6, row.token).Bind(7, row.slots).Bind(8, row.start_time);
  s.Bind(9, row.end_time).Bind(10, row.exit_code).Bind(11, row.exit_reason);
  s.Bind(12, row.resources.dump());
  return InWriteTransactionLocked([&]() -> Status {
    DET_RETURN_IF_ERROR(s.Run());
    return RecordTrialUsageLocked({row});
  });
}

Result<AllocationRow> SqliteStore::GetAllocation(const std::string& allocation_id) {
  Reader r = Read();
  std::string sql =
      std::string("SELECT ") + kAllocationColumns + " FROM allocations WHERE allocation_id = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, allocation_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("allocation " + allocation_id + " not found");
  return ReadAllocation(s);
}

Result<AllocationRow> SqliteStore::GetAllocationByToken(const std::string& token) {
  Reader r = Read();
  std::string sql =
      std::string("SELECT ") + kAllocationColumns + " FROM allocations WHERE token = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, AllocationTokenDigest(token));
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Unauthenticated("invalid credentials");
  return ReadAllocation(s);
}

Result<std::vector<AllocationRow>> SqliteStore::ListOpenAllocations() {
  Reader r = Read();
  std::string sql = std::string("SELECT ") + kAllocationColumns +
                    " FROM allocations WHERE end_time IS NULL ORDER BY start_time";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  return s.Collect<AllocationRow>(ReadAllocation);
}

Result<std::vector<std::string>> SqliteStore::ListExperimentAllocationIds(int64_t experiment_id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT a.allocation_id FROM allocations a JOIN trials t ON t.id = a.trial_id "
                 "WHERE t.experiment_id = ? ORDER BY a.allocation_id");
  s.Bind(1, experiment_id);
  return s.Collect<std::string>([](const Statement& st) { return st.Text(0); });
}

Result<std::vector<std::string>> SqliteStore::ListTaskIds(int64_t trial_id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT DISTINCT task_id FROM allocations WHERE trial_id = ? ORDER BY task_id");
  s.Bind(1, trial_id);
  return s.Collect<std::string>([](const Statement& st) { return st.Text(0); });
}

// Concurrent reports are group-committed: the first caller to find no write in progress becomes
// the leader and writes every queued row in one transaction (one sync; one bad row fails alone,
// see WriteMetricsLocked). Every caller returns only after its row is committed. The master's
// reports go through MetricsService instead, which batches without holding a thread per report.
Status SqliteStore::AddMetrics(const MetricRow& row) {
  PendingMetric mine{&row, Status::Ok(), false};
  std::unique_lock<std::mutex> lock(batch_mu_);
  batch_queue_.push_back(&mine);
  while (!mine.done) {
    if (batch_writer_active_) {
      batch_cv_.wait(lock);
      continue;
    }
    batch_writer_active_ = true;
    std::vector<PendingMetric*> batch;
    batch.swap(batch_queue_);
    lock.unlock();
    std::vector<const MetricRow*> rows;
    rows.reserve(batch.size());
    for (PendingMetric* p : batch) rows.push_back(p->row);
    std::vector<Status> results;
    {
      std::lock_guard<std::mutex> store_lock(mu_);
      results = WriteMetricsLocked(rows);
    }
    lock.lock();
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->result = results[i];
      batch[i]->done = true;
    }
    batch_writer_active_ = false;
    batch_cv_.notify_all();
  }
  return mine.result;
}

Result<std::vector<MetricRow>> SqliteStore::ListMetrics(int64_t trial_id,
                                                        const std::string& group) {
  Reader r = Read();
  // Two statements, not `(? = '' OR metric_group = ?)`: with the OR, SQLite cannot seek
  // metrics_series on the group and reads every row of the trial (1,000,000 for a long run) to
  // find its 10,000 validation reports.
  const std::string select = std::string("SELECT ") + kMetricColumns + " FROM metrics WHERE ";
  const std::string sql =
      select + (group.empty() ? "trial_id = ? AND archived = 0 ORDER BY total_batches, id"
                              : "trial_id = ? AND metric_group = ? AND archived = 0 ORDER BY "
                                "total_batches, id");
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, trial_id);
  if (!group.empty()) s.Bind(2, group);
  return s.Collect<MetricRow>(ReadMetricRow);
}

Status SqliteStore::AddCheckpoint(const CheckpointRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO checkpoints (uuid, task_id, allocation_id, trial_id, report_time, "
              "state, resources, metadata, steps_completed, size) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(uuid) DO UPDATE SET state = "
              "excluded.state, resources = excluded.resources, metadata = excluded.metadata, "
              "size = excluded.size");
  s.Bind(1, row.uuid).Bind(2, row.task_id).Bind(3, row.allocation_id).Bind(4, row.trial_id);
  s.Bind(5, row.report_time).Bind(6, row.state).Bind(7, row.resources.dump());
  s.Bind(8, row.metadata.dump()).Bind(9, row.steps_completed).Bind(10, row.size);
  return s.Run();
}

Result<CheckpointRow> SqliteStore::GetCheckpoint(const std::string& uuid) {
  Reader r = Read();
  std::string sql =
      std::string("SELECT ") + kCheckpointColumns + " FROM checkpoints WHERE uuid = ?";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, uuid);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("checkpoint " + uuid + " not found");
  return ReadCheckpoint(s);
}

Result<std::vector<CheckpointRow>> SqliteStore::ListCheckpointsForTrial(int64_t trial_id) {
  Reader r = Read();
  std::string sql = std::string("SELECT ") + kCheckpointColumns +
                    " FROM checkpoints WHERE trial_id = ? ORDER BY steps_completed, report_time";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, trial_id);
  return s.Collect<CheckpointRow>(ReadCheckpoint);
}

Result<std::vector<CheckpointRow>> SqliteStore::ListCheckpointsForExperiment(
    int64_t experiment_id) {
  Reader r = Read();
  std::string sql =
      "SELECT c.uuid, c.task_id, c.allocation_id, c.trial_id, c.report_time, "
      "c.state, c.resources, c.metadata, c.steps_completed, c.size FROM checkpoints "
      "c JOIN trials t ON t.id = c.trial_id WHERE t.experiment_id = ? "
      "ORDER BY c.report_time, c.uuid";
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, experiment_id);
  return s.Collect<CheckpointRow>(ReadCheckpoint);
}

Result<int64_t> SqliteStore::AddGcRequest(const GcRequestRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO gc_requests (experiment_id, storage_config, uuids, globs, "
              "created_at, delete_experiment, delete_tensorboards) VALUES (?, ?, ?, ?, ?, ?, ?) "
              "RETURNING id");
  s.Bind(1, row.experiment_id).Bind(2, row.storage_config.dump());
  s.Bind(3, nlohmann::json(row.uuids).dump()).Bind(4, nlohmann::json(row.globs).dump());
  s.Bind(5, row.created_at).Bind(6, row.delete_experiment).Bind(7, row.delete_tensorboards);
  DET_ASSIGN_OR_RETURN(bool inserted, s.Step());
  if (!inserted) return Internal("insert gc request: no id returned");
  return s.Int(0);
}

Result<std::vector<GcRequestRow>> SqliteStore::ListGcRequests() {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT id, experiment_id, storage_config, uuids, globs, created_at, attempts, "
                 "last_error, delete_experiment, delete_tensorboards FROM gc_requests ORDER BY id");
  return s.Collect<GcRequestRow>([](const Statement& s) {
    GcRequestRow r;
    r.id = s.Int(0);
    r.experiment_id = s.Int(1);
    r.storage_config = ParseJson(s.Text(2));
    json uuids = ParseJson(s.Text(3));
    json globs = ParseJson(s.Text(4));
    if (uuids.is_array()) r.uuids = uuids.get<std::vector<std::string>>();
    if (globs.is_array()) r.globs = globs.get<std::vector<std::string>>();
    r.created_at = s.Int(5);
    r.attempts = s.Int(6);
    r.last_error = s.Text(7);
    r.delete_experiment = s.Int(8) != 0;
    r.delete_tensorboards = s.Int(9) != 0;
    return r;
  });
}

Status SqliteStore::UpdateGcRequestAttempt(int64_t id, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE gc_requests SET attempts = attempts + 1, last_error = ? WHERE id = ?");
  return s.Bind(1, error).Bind(2, id).Run();
}

Status SqliteStore::DeleteGcRequest(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM gc_requests WHERE id = ?");
  return s.Bind(1, id).Run();
}

Status SqliteStore::AddTrialSourceInfo(const TrialSourceInfoRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO trial_source_infos (trial_id, checkpoint_uuid, "
              "source_type, model_id, model_version) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO "
              "NOTHING");
  s.Bind(1, row.trial_id).Bind(2, row.checkpoint_uuid).Bind(3, row.source_type);
  if (row.model_id) s.Bind(4, *row.model_id);
  if (row.model_version) s.Bind(5, *row.model_version);
  return s.Run();
}

Result<std::vector<TrialSourceInfoRow>> SqliteStore::ListTrialSourceInfos(
    const std::string& checkpoint_uuid, const std::string& source_type) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT trial_id, checkpoint_uuid, source_type, model_id, model_version FROM "
                 "trial_source_infos WHERE checkpoint_uuid = ? AND (? = '' OR source_type = ?) "
                 "ORDER BY trial_id");
  s.Bind(1, checkpoint_uuid).Bind(2, source_type).Bind(3, source_type);
  return s.Collect<TrialSourceInfoRow>([](const Statement& s) {
    TrialSourceInfoRow r;
    r.trial_id = s.Int(0);
    r.checkpoint_uuid = s.Text(1);
    r.source_type = s.Text(2);
    if (!s.IsNull(3)) r.model_id = s.Int(3);
    if (!s.IsNull(4)) r.model_version = s.Int(4);
    return r;
  });
}

Status SqliteStore::AddTaskLogs(const std::vector<TaskLogRow>& rows) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st;
  {
    Statement s(db_,
                "INSERT INTO task_logs (task_id, trial_id, allocation_id, agent_id, "
                "container_id, rank_id, timestamp, level, stdtype, source, log) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    st = s.prepared();
    for (size_t i = 0; st.ok() && i < rows.size(); ++i) {
      const TaskLogRow& r = rows[i];
      s.Reset();
      s.Bind(1, r.task_id).Bind(2, r.trial_id).Bind(3, r.allocation_id).Bind(4, r.agent_id);
      s.Bind(5, r.container_id).Bind(6, r.rank_id).Bind(7, r.timestamp).Bind(8, r.level);
      s.Bind(9, r.stdtype).Bind(10, r.source).Bind(11, r.log);
      st = s.Run();
    }
  }
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<std::vector<TaskLogRow>> SqliteStore::ListTrialLogs(int64_t trial_id, int64_t after_id,
                                                           int64_t limit, bool descending) {
  Reader r = Read();
  std::string sql = TaskLogQuery("trial_id", descending);
  DET_PREPARE_ON(s, r.db(), sql.c_str());
  s.Bind(1, trial_id).Bind(2, after_id).Bind(3, limit > 0 ? limit : sql::kNoLimit);
  return s.Collect<TaskLogRow>(ReadTaskLogRow);
}

}  // namespace det::master::store
