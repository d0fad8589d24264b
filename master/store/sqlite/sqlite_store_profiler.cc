// SqliteStore: the profiler's system metrics (table system_metrics, migration 0010).

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

constexpr const char* kColumns =
    "id, trial_id, trial_run_id, metric_group, agent_id, metrics, end_time";

SystemMetricRow ReadRow(const Statement& s) {
  SystemMetricRow r;
  r.id = s.Int(0);
  r.trial_id = s.Int(1);
  r.trial_run_id = s.Int(2);
  r.group = s.Text(3);
  r.agent_id = s.Text(4);
  nlohmann::json j = nlohmann::json::parse(s.Text(5), nullptr, /*allow_exceptions=*/false);
  r.metrics = j.is_discarded() ? nlohmann::json::object() : j;
  r.end_time = s.Int(6);
  return r;
}

}  // namespace

Status SqliteStore::AddSystemMetrics(const std::vector<SystemMetricRow>& rows) {
  if (rows.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st;
  {
    Statement s(db_,
                "INSERT INTO system_metrics (trial_id, trial_run_id, metric_group, agent_id, "
                "metrics, end_time) VALUES (?, ?, ?, ?, ?, ?)");
    st = s.prepared();
    for (const SystemMetricRow& r : rows) {
      if (!st.ok()) break;
      s.Reset();
      s.Bind(1, r.trial_id).Bind(2, r.trial_run_id).Bind(3, r.group).Bind(4, r.agent_id);
      s.Bind(5, r.metrics.dump()).Bind(6, r.end_time);
      st = s.Run();
    }
  }
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

Result<std::vector<SystemMetricRow>> SqliteStore::ListSystemMetrics(int64_t trial_id,
                                                                    const std::string& group,
                                                                    const std::string& agent_id,
                                                                    int64_t after_id,
                                                                    int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kColumns +
                    " FROM system_metrics WHERE trial_id = ? AND metric_group = ? AND "
                    "(? = '' OR agent_id = ?) AND id > ? ORDER BY id LIMIT ?";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, trial_id).Bind(2, group).Bind(3, agent_id).Bind(4, agent_id).Bind(5, after_id);
  s.Bind(6, limit > 0 ? limit : sql::kNoLimit);
  return s.Collect<SystemMetricRow>(ReadRow);
}

Result<std::vector<SystemMetricRow>> SqliteStore::LatestSystemMetrics(int64_t trial_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kColumns +
                    " FROM system_metrics WHERE id IN (SELECT MAX(id) FROM system_metrics "
                    "WHERE trial_id = ? GROUP BY metric_group, agent_id) "
                    "ORDER BY metric_group, agent_id";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, trial_id);
  return s.Collect<SystemMetricRow>(ReadRow);
}

}  // namespace det::master::store
