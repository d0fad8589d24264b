// SqliteStore: an experiment's searcher snapshot on its own. The snapshot is several MB at
// 20,000 trials, so it has a table of its own (experiment_snapshots, migration 0026: a write of
// the experiment's row does not copy it), only a restore or a test reads it, and the master
// serializes it and a writer off the runtime loop stores the text.
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Result<std::string> SqliteStore::GetExperimentSnapshotText(int64_t id) {
  // On a read connection: it must not wait behind a write that waits for a busy database.
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT COALESCE(s.snapshot, '{}') FROM experiments LEFT JOIN "
                 "experiment_snapshots s ON s.experiment_id = experiments.id WHERE "
                 "experiments.id = ?");
  s.Bind(1, id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound("experiment " + std::to_string(id) + " not found");
  return s.Text(0);
}

Status SqliteStore::WriteExperimentSnapshotText(int64_t id, const std::string& snapshot_json) {
  std::lock_guard<std::mutex> lock(mu_);
  // One transaction: a kill -9 leaves either the old snapshot and its journal or the new one.
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st = [&]() -> Status {
    // Only for an experiment that exists (a write queued before its deletion adds no row).
    DET_PREPARE(s,
                "INSERT INTO experiment_snapshots (experiment_id, snapshot) SELECT id, "
                "CAST(? AS TEXT) FROM experiments WHERE id = ? ON CONFLICT (experiment_id) DO "
                "UPDATE SET snapshot = excluded.snapshot");
    DET_RETURN_IF_ERROR(s.Bind(1, snapshot_json).Bind(2, id).Run());
    DET_PREPARE(d, "DELETE FROM searcher_events WHERE experiment_id = ?");
    return d.Bind(1, id).Run();
  }();
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

}  // namespace det::master::store
