// SqliteStore: unmanaged (core_v2) experiments and trials. Their rows are ordinary experiment
// and trial rows; the marks in unmanaged_experiments / unmanaged_trials (migration 0009) say that
// a script outside the cluster runs them.

#include <functional>

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

constexpr const char* kMarkColumns =
    "u.trial_id, u.experiment_id, u.task_id, u.external_id, u.last_activity";

UnmanagedTrialRow ReadMark(const Statement& s) {
  UnmanagedTrialRow r;
  r.trial_id = s.Int(0);
  r.experiment_id = s.Int(1);
  r.task_id = s.Text(2);
  r.external_id = s.OptText(3);
  r.last_activity = s.Int(4);
  return r;
}

// Runs `body` inside BEGIN IMMEDIATE .. COMMIT, rolling back when it fails.
Status InTransaction(const std::function<Status(const std::string&)>& exec,
                     const std::function<Status()>& body) {
  DET_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
  Status st = body();
  if (!st.ok()) {
    (void)exec("ROLLBACK");
    return st;
  }
  return exec("COMMIT");
}

}  // namespace

Result<int64_t> SqliteStore::UpsertUnmanagedExperiment(
    const ExperimentRow& row, const std::string& model_definition,
    const std::optional<std::string>& external_id, bool* created) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  *created = false;
  auto exec = [this](const std::string& sql) { return Exec(sql); };
  Status st = InTransaction(exec, [&]() -> Status {
    if (external_id) {
      DET_PREPARE(find, "SELECT experiment_id FROM unmanaged_experiments WHERE external_id = ?");
      find.Bind(1, *external_id);
      DET_ASSIGN_OR_RETURN(bool found, find.Step());
      if (found) {
        id = find.Int(0);
        DET_PREPARE(upd, "UPDATE experiments SET config = ?, original_config = ? WHERE id = ?");
        return upd.Bind(1, row.config.dump()).Bind(2, row.original_config).Bind(3, id).Run();
      }
    }
    DET_ASSIGN_OR_RETURN(id, InsertExperimentLocked(row, model_definition));
    DET_PREPARE(mark,
                "INSERT INTO unmanaged_experiments (experiment_id, external_id) VALUES (?, ?)");
    DET_RETURN_IF_ERROR(mark.Bind(1, id).Bind(2, external_id).Run());
    *created = true;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return id;
}

Result<std::vector<UnmanagedExperimentRow>> SqliteStore::ListUnmanagedExperiments() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT experiment_id, external_id FROM unmanaged_experiments "
              "ORDER BY experiment_id");
  return s.Collect<UnmanagedExperimentRow>([](const Statement& r) {
    return UnmanagedExperimentRow{r.Int(0), r.OptText(1)};
  });
}

Result<int64_t> SqliteStore::UpsertUnmanagedTrial(const TrialRow& row,
                                                  const UnmanagedTrialRow& mark, bool* created) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  *created = false;
  auto exec = [this](const std::string& sql) { return Exec(sql); };
  Status st = InTransaction(exec, [&]() -> Status {
    if (mark.external_id) {
      DET_PREPARE(find,
                  "SELECT trial_id FROM unmanaged_trials WHERE experiment_id = ? AND "
                  "external_id = ?");
      find.Bind(1, mark.experiment_id).Bind(2, *mark.external_id);
      DET_ASSIGN_OR_RETURN(bool found, find.Step());
      if (found) {
        id = find.Int(0);
        return Status::Ok();
      }
    }
    DET_PREPARE(ins,
                "INSERT INTO trials (experiment_id, request_id, seed, hparams, state, "
                "start_time, end_time, restarts, run_id, total_batches, runner_state, "
                "searcher_metric, task_id, metadata, warm_start_checkpoint_uuid) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins.Bind(1, row.experiment_id).Bind(2, row.request_id).Bind(3, row.seed);
    ins.Bind(4, row.hparams.dump()).Bind(5, row.state).Bind(6, row.start_time);
    ins.Bind(7, row.end_time).Bind(8, row.restarts).Bind(9, row.run_id);
    ins.Bind(10, row.total_batches).Bind(11, row.runner_state).Bind(12, row.searcher_metric);
    ins.Bind(13, row.task_id).Bind(14, row.metadata.dump());
    ins.Bind(15, row.warm_start_checkpoint_uuid);
    DET_RETURN_IF_ERROR(ins.Run());
    id = db_->LastInsertId();
    DET_PREPARE(m,
                "INSERT INTO unmanaged_trials (trial_id, experiment_id, task_id, external_id, "
                "last_activity) VALUES (?, ?, ?, ?, ?)");
    m.Bind(1, id).Bind(2, mark.experiment_id).Bind(3, row.task_id).Bind(4, mark.external_id);
    DET_RETURN_IF_ERROR(m.Bind(5, mark.last_activity).Run());
    *created = true;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return id;
}

Result<std::vector<UnmanagedTrialRow>> SqliteStore::ListUnmanagedTrials() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      std::string("SELECT ") + kMarkColumns + " FROM unmanaged_trials u ORDER BY u.trial_id";
  DET_PREPARE(s, sql.c_str());
  return s.Collect<UnmanagedTrialRow>(ReadMark);
}

Status SqliteStore::TouchUnmanagedTrial(int64_t trial_id, int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE unmanaged_trials SET last_activity = ? WHERE trial_id = ?");
  DET_RETURN_IF_ERROR(s.Bind(1, now).Bind(2, trial_id).Run());
  if (db_->Changes() == 0) {
    return NotFound("unmanaged trial " + std::to_string(trial_id) + " not found");
  }
  return Status::Ok();
}

Result<std::vector<UnmanagedTrialRow>> SqliteStore::ListSilentUnmanagedTrials(int64_t before) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kMarkColumns +
                    " FROM unmanaged_trials u JOIN trials t ON t.id = u.trial_id WHERE "
                    "t.state = 'ACTIVE' AND u.last_activity < ? ORDER BY u.trial_id";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, before);
  return s.Collect<UnmanagedTrialRow>(ReadMark);
}

}  // namespace det::master::store
