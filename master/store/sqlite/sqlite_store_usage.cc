// SqliteStore: allocation usage records (migration 0030), written beside the allocation or task
// they describe and read by the usage report; and users' web UI settings (migration 0031).

#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {

namespace {

// The trial's owner, workspace and experiment as they are now; a second write of the same
// allocation (its end) keeps them and updates only what changed.
constexpr char kRecordTrialUsage[] =
    "INSERT INTO allocation_usage (allocation_id, task_id, task_type, username, workspace_name, "
    "experiment_id, slots, resource_pool, start_time, end_time) "
    "SELECT ?, ?, 'TRIAL', COALESCE(u.username, ''), COALESCE(w.name, ''), e.id, ?, ?, ?, ? "
    "FROM trials t JOIN experiments e ON e.id = t.experiment_id "
    "LEFT JOIN experiment_projects ep ON ep.experiment_id = e.id "
    "LEFT JOIN projects p ON p.id = COALESCE(ep.project_id, 1) "
    "LEFT JOIN workspaces w ON w.id = p.workspace_id "
    "LEFT JOIN users u ON u.id = e.owner_id WHERE t.id = ? "
    "ON CONFLICT (allocation_id) DO UPDATE SET slots = excluded.slots, "
    "end_time = excluded.end_time";

constexpr char kRecordTaskUsage[] =
    "INSERT INTO allocation_usage (allocation_id, task_id, task_type, username, workspace_name, "
    "experiment_id, slots, resource_pool, start_time, end_time) "
    "SELECT ?, ?, ?, ?, COALESCE((SELECT name FROM workspaces WHERE id = ?), ''), NULL, ?, ?, ?, "
    "? ON CONFLICT (allocation_id) DO UPDATE SET slots = excluded.slots, "
    "end_time = excluded.end_time";

}  // namespace

Status SqliteStore::RecordTrialUsageLocked(const std::vector<AllocationRow>& rows) {
  if (rows.empty()) return Status::Ok();
  DET_PREPARE(s, kRecordTrialUsage);
  for (const AllocationRow& a : rows) {
    s.Reset();
    s.Bind(1, a.allocation_id).Bind(2, a.task_id).Bind(3, a.slots).Bind(4, a.resource_pool);
    s.Bind(5, a.start_time).Bind(6, a.end_time).Bind(7, a.trial_id);
    DET_RETURN_IF_ERROR(s.Run());
  }
  return Status::Ok();
}

Status SqliteStore::RecordTaskUsageLocked(const GenericTaskRow& t) {
  // A task is recorded once it has started on its slots.
  if (t.allocation_id.empty() || t.start_time <= 0) return Status::Ok();
  std::string pool;
  if (const auto* res = t.config.is_object() && t.config.contains("resources")
                            ? &t.config["resources"]
                            : nullptr;
      res != nullptr && res->is_object() && res->contains("resource_pool") &&
      (*res)["resource_pool"].is_string()) {
    pool = (*res)["resource_pool"].get<std::string>();
  }
  DET_PREPARE(s, kRecordTaskUsage);
  s.Bind(1, t.allocation_id).Bind(2, t.task_id).Bind(3, t.task_type).Bind(4, t.username);
  s.Bind(5, t.workspace_id).Bind(6, static_cast<int64_t>(t.slot_ids.size())).Bind(7, pool);
  s.Bind(8, t.start_time).Bind(9, t.end_time > 0 ? std::optional<int64_t>(t.end_time) : std::nullopt);
  return s.Run();
}

Result<std::vector<AllocationUsageRow>> SqliteStore::ListAllocationUsage(int64_t from, int64_t to,
                                                                         int64_t now, int64_t limit) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT allocation_id, task_id, task_type, username, workspace_name, "
                 "experiment_id, slots, resource_pool, start_time, end_time FROM allocation_usage "
                 "WHERE start_time <= ? AND COALESCE(end_time, ?) >= ? "
                 "ORDER BY start_time, allocation_id LIMIT ?");
  s.Bind(1, to).Bind(2, now).Bind(3, from).Bind(4, limit);
  return s.Collect<AllocationUsageRow>([](const Statement& st) {
    AllocationUsageRow u;
    u.allocation_id = st.Text(0);
    u.task_id = st.Text(1);
    u.task_type = st.Text(2);
    u.username = st.Text(3);
    u.workspace_name = st.Text(4);
    u.experiment_id = st.OptInt(5);
    u.slots = st.Int(6);
    u.resource_pool = st.Text(7);
    u.start_time = st.Int(8);
    u.end_time = st.OptInt(9);
    return u;
  });
}

Status SqliteStore::SetUserWebSettings(int64_t user_id, const std::vector<UserWebSettingRow>& rows,
                                       int64_t max_rows) {
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransactionLocked([&]() -> Status {
    DET_PREPARE(del,
                "DELETE FROM user_web_settings WHERE user_id = ? AND key = ? AND storage_path = ?");
    DET_PREPARE(put,
                "INSERT INTO user_web_settings (user_id, key, storage_path, value) VALUES "
                "(?, ?, ?, ?) ON CONFLICT (user_id, key, storage_path) DO UPDATE SET "
                "value = excluded.value");
    for (const UserWebSettingRow& r : rows) {
      Statement& s = r.value.empty() ? del : put;
      s.Reset();
      s.Bind(1, user_id).Bind(2, r.key).Bind(3, r.storage_path);
      if (!r.value.empty()) s.Bind(4, r.value);
      DET_RETURN_IF_ERROR(s.Run());
    }
    DET_PREPARE(count, "SELECT COUNT(*) FROM user_web_settings WHERE user_id = ?");
    count.Bind(1, user_id);
    DET_ASSIGN_OR_RETURN(bool row, count.Step());
    if (row && count.Int(0) > max_rows) {
      return InvalidArgument("settings: a user keeps at most " + std::to_string(max_rows) +
                             " settings (these would make " + std::to_string(count.Int(0)) + ")");
    }
    return Status::Ok();
  });
}

Result<std::vector<UserWebSettingRow>> SqliteStore::ListUserWebSettings(int64_t user_id) {
  Reader r = Read();
  DET_PREPARE_ON(s, r.db(),
                 "SELECT key, storage_path, value FROM user_web_settings WHERE user_id = ? "
                 "ORDER BY storage_path, key");
  s.Bind(1, user_id);
  return s.Collect<UserWebSettingRow>([](const Statement& st) {
    return UserWebSettingRow{st.Text(0), st.Text(1), st.Text(2)};
  });
}

Status SqliteStore::ResetUserWebSettings(int64_t user_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM user_web_settings WHERE user_id = ?");
  return s.Bind(1, user_id).Run();
}

}  // namespace det::master::store
