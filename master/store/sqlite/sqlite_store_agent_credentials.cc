// SqliteStore: agent credentials (migration 0015).
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

Result<std::string> SqliteStore::BindAgentCredential(const std::string& agent_id,
                                                     const std::string& key_digest,
                                                     int64_t bound_time) {
  std::lock_guard<std::mutex> lock(mu_);
  {
    DET_PREPARE(s,
                "INSERT INTO agent_credentials (agent_id, key_digest, bound_time) VALUES (?, ?, ?) "
                "ON CONFLICT (agent_id) DO NOTHING");
    DET_RETURN_IF_ERROR(s.Bind(1, agent_id).Bind(2, key_digest).Bind(3, bound_time).Run());
  }
  DET_PREPARE(s, "SELECT key_digest FROM agent_credentials WHERE agent_id = ?");
  s.Bind(1, agent_id);
  DET_ASSIGN_OR_RETURN(auto rows,
                       s.Collect<std::string>([](const Statement& row) { return row.Text(0); }));
  if (rows.empty()) return Internal("agent credential for '" + agent_id + "' vanished");
  return rows.front();
}

Result<std::string> SqliteStore::GetAgentCredential(const std::string& agent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "SELECT key_digest FROM agent_credentials WHERE agent_id = ?");
  s.Bind(1, agent_id);
  DET_ASSIGN_OR_RETURN(auto rows,
                       s.Collect<std::string>([](const Statement& row) { return row.Text(0); }));
  if (rows.empty()) return NotFound("agent '" + agent_id + "' has no bound credential");
  return rows.front();
}

Status SqliteStore::DeleteAgentCredential(const std::string& agent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  {
    DET_PREPARE(s, "SELECT 1 FROM agent_credentials WHERE agent_id = ?");
    s.Bind(1, agent_id);
    DET_ASSIGN_OR_RETURN(auto rows,
                         s.Collect<int64_t>([](const Statement& r) { return r.Int(0); }));
    if (rows.empty()) return NotFound("agent '" + agent_id + "' has no bound credential");
  }
  DET_PREPARE(s, "DELETE FROM agent_credentials WHERE agent_id = ?");
  return s.Bind(1, agent_id).Run();
}

}  // namespace det::master::store
