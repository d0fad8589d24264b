// SqliteStore: agents and slots disabled by an operator (migration 0020). The SQL is the subset
// PostgreSQL also accepts.
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Status SqliteStore::SetAgentAdminState(const std::string& agent_id, int64_t slot_id, bool enabled,
                                       bool draining) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled) {
    DET_PREPARE(s, "DELETE FROM agent_admin_states WHERE agent_id = ? AND slot_id = ?");
    return s.Bind(1, agent_id).Bind(2, slot_id).Run();
  }
  DET_PREPARE(s,
              "INSERT INTO agent_admin_states (agent_id, slot_id, draining) VALUES (?, ?, ?) "
              "ON CONFLICT (agent_id, slot_id) DO UPDATE SET draining = excluded.draining");
  return s.Bind(1, agent_id).Bind(2, slot_id).Bind(3, draining).Run();
}

Result<std::vector<AgentAdminRow>> SqliteStore::ListAgentAdminStates() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT agent_id, slot_id, draining FROM agent_admin_states "
              "ORDER BY agent_id, slot_id");
  return s.Collect<AgentAdminRow>([](const Statement& row) {
    return AgentAdminRow{row.Text(0), row.Int(1), row.Int(2) != 0};
  });
}

}  // namespace det::master::store
