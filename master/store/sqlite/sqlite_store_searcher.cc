// SqliteStore: the searcher journal (migration 0013). Records are appended one statement each,
// so a kill -9 leaves every acknowledged record whole; UpdateExperimentSnapshot truncates.
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Status SqliteStore::AppendSearcherEvent(int64_t experiment_id, int64_t seq,
                                        const std::string& record) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "INSERT INTO searcher_events (experiment_id, seq, record) VALUES (?, ?, ?)");
  return s.Bind(1, experiment_id).Bind(2, seq).Bind(3, record).Run();
}

Result<std::vector<std::pair<int64_t, std::string>>> SqliteStore::ListSearcherEvents(
    int64_t experiment_id) {
  Reader r = Read();  // as GetExperimentSnapshotText: never behind a waiting write
  DET_PREPARE_ON(s, r.db(),
                 "SELECT seq, record FROM searcher_events WHERE experiment_id = ? ORDER BY seq");
  s.Bind(1, experiment_id);
  return s.Collect<std::pair<int64_t, std::string>>(
      [](const Statement& row) { return std::make_pair(row.Int(0), row.Text(1)); });
}

}  // namespace det::master::store
