// Commands, notebooks, shells and TensorBoards in SQLite (generic_tasks, migration 0016).
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"
#include "master/store/sqlite/task_log_rows.h"

namespace det::master::store {
namespace {

constexpr const char* kTaskColumns =
    "task_id, task_type, owner_id, username, description, config, state, job_id, "
    "allocation_id, allocation_token, agent_id, slot_ids, proxy_address, ready, exit_code, "
    "exit_error, secrets, registered_time, start_time, end_time, workspace_id";

nlohmann::json ParseOr(const std::string& text, nlohmann::json fallback) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

GenericTaskRow ReadTask(const Statement& s) {
  GenericTaskRow r;
  r.task_id = s.Text(0);
  r.task_type = s.Text(1);
  r.owner_id = s.Int(2);
  r.username = s.Text(3);
  r.description = s.Text(4);
  r.config = ParseOr(s.Text(5), nlohmann::json::object());
  r.state = s.Text(6);
  r.job_id = s.Text(7);
  r.allocation_id = s.Text(8);
  r.allocation_token = s.Text(9);
  r.agent_id = s.Text(10);
  nlohmann::json slots = ParseOr(s.Text(11), nlohmann::json::array());
  if (slots.is_array()) {
    for (const auto& v : slots) {
      if (v.is_number_integer()) r.slot_ids.push_back(v.get<int>());
    }
  }
  r.proxy_address = s.Text(12);
  r.ready = s.Int(13) != 0;
  r.exit_code = s.OptInt(14);
  r.exit_error = s.Text(15);
  r.secrets = ParseOr(s.Text(16), nlohmann::json::object());
  r.registered_time = s.Int(17);
  r.start_time = s.Int(18);
  r.end_time = s.Int(19);
  r.workspace_id = s.Int(20);
  return r;
}

}  // namespace

Status SqliteStore::UpsertGenericTask(const GenericTaskRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("INSERT INTO generic_tasks (") + kTaskColumns +
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (task_id) DO UPDATE SET task_type = excluded.task_type, "
                    "owner_id = excluded.owner_id, username = excluded.username, "
                    "description = excluded.description, config = excluded.config, "
                    "state = excluded.state, job_id = excluded.job_id, "
                    "allocation_id = excluded.allocation_id, "
                    "allocation_token = excluded.allocation_token, agent_id = excluded.agent_id, "
                    "slot_ids = excluded.slot_ids, proxy_address = excluded.proxy_address, "
                    "ready = excluded.ready, exit_code = excluded.exit_code, "
                    "exit_error = excluded.exit_error, secrets = excluded.secrets, "
                    "registered_time = excluded.registered_time, "
                    "start_time = excluded.start_time, end_time = excluded.end_time, "
                    "workspace_id = excluded.workspace_id";
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, row.task_id)
      .Bind(2, row.task_type)
      .Bind(3, row.owner_id)
      .Bind(4, row.username)
      .Bind(5, row.description)
      .Bind(6, row.config.dump())
      .Bind(7, row.state)
      .Bind(8, row.job_id)
      .Bind(9, row.allocation_id)
      .Bind(10, row.allocation_token)
      .Bind(11, row.agent_id)
      .Bind(12, nlohmann::json(row.slot_ids).dump())
      .Bind(13, row.proxy_address)
      .Bind(14, row.ready)
      .Bind(15, row.exit_code)
      .Bind(16, row.exit_error)
      .Bind(17, row.secrets.dump())
      .Bind(18, row.registered_time)
      .Bind(19, row.start_time)
      .Bind(20, row.end_time)
      .Bind(21, row.workspace_id);
  return InWriteTransactionLocked([&]() -> Status {
    DET_RETURN_IF_ERROR(s.Run());
    return RecordTaskUsageLocked(row);
  });
}

Result<std::vector<GenericTaskRow>> SqliteStore::ListGenericTasks() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      std::string("SELECT ") + kTaskColumns + " FROM generic_tasks ORDER BY registered_time";
  DET_PREPARE(s, sql.c_str());
  return s.Collect<GenericTaskRow>(ReadTask);
}

Status SqliteStore::PutGenericTaskContext(const std::string& task_id, const std::string& tgz) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "INSERT INTO generic_task_contexts (task_id, content) VALUES (?, ?) "
              "ON CONFLICT (task_id) DO UPDATE SET content = excluded.content");
  return s.Bind(1, task_id).BindBlob(2, tgz).Run();
}

Result<std::string> SqliteStore::GetGenericTaskContext(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "SELECT content FROM generic_task_contexts WHERE task_id = ?");
  s.Bind(1, task_id);
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::string();
  return s.Text(0);
}

Result<std::vector<TaskLogRow>> SqliteStore::ListTaskLogsByTask(const std::string& task_id,
                                                                int64_t after_id, int64_t limit,
                                                                bool descending) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = TaskLogQuery("task_id", descending);
  DET_PREPARE(s, sql.c_str());
  s.Bind(1, task_id).Bind(2, after_id).Bind(3, limit > 0 ? limit : sql::kNoLimit);
  return s.Collect<TaskLogRow>(ReadTaskLogRow);
}

}  // namespace det::master::store
