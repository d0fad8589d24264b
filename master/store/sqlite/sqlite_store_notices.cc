// What the master tells people: webhooks, their triggers and the delivery queue (migration
// 0027), and the cluster message (0028), in SQLite / PostgreSQL.

#include "master/store/decision_writes.h"
#include "master/store/sqlite/sqlite_store.h"
#include "master/store/sqlite/statement.h"

namespace det::master::store {
namespace {

nlohmann::json ParseCondition(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

Status WebhookNotFound(int64_t id) {
  return NotFound("webhook " + std::to_string(id) + " not found");
}

}  // namespace

Result<WebhookRow> SqliteStore::InsertWebhook(WebhookRow row) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_RETURN_IF_ERROR(InWriteTransactionLocked([&]() -> Status {
    DET_PREPARE(w,
                "INSERT INTO webhooks (name, url, webhook_type, mode, workspace_id) VALUES (?, ?, "
                "?, ?, ?) RETURNING id");
    w.Bind(1, row.name).Bind(2, row.url).Bind(3, row.webhook_type).Bind(4, row.mode);
    w.Bind(5, row.workspace_id);
    DET_ASSIGN_OR_RETURN(bool inserted, w.Step());
    if (!inserted) return Internal("insert webhook: no id returned");
    row.id = w.Int(0);
    w.Reset();
    DET_PREPARE(t,
                "INSERT INTO webhook_triggers (webhook_id, trigger_type, condition) VALUES (?, ?, "
                "?) RETURNING id");
    for (WebhookTriggerRow& trigger : row.triggers) {
      t.Reset();
      trigger.webhook_id = row.id;
      t.Bind(1, row.id).Bind(2, trigger.trigger_type).Bind(3, trigger.condition.dump());
      DET_ASSIGN_OR_RETURN(bool added, t.Step());
      if (!added) return Internal("insert webhook trigger: no id returned");
      trigger.id = t.Int(0);
    }
    return Status::Ok();
  }));
  return row;
}

Result<std::vector<WebhookRow>> SqliteStore::ListWebhooks() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(w,
              "SELECT id, name, url, webhook_type, mode, workspace_id FROM webhooks ORDER BY id");
  DET_ASSIGN_OR_RETURN(std::vector<WebhookRow> rows, w.Collect<WebhookRow>([](const Statement& s) {
    WebhookRow r;
    r.id = s.Int(0);
    r.name = s.Text(1);
    r.url = s.Text(2);
    r.webhook_type = s.Text(3);
    r.mode = s.Text(4);
    r.workspace_id = s.OptInt(5);
    return r;
  }));
  DET_PREPARE(t,
              "SELECT id, webhook_id, trigger_type, condition FROM webhook_triggers ORDER BY id");
  DET_ASSIGN_OR_RETURN(std::vector<WebhookTriggerRow> triggers,
                       t.Collect<WebhookTriggerRow>([](const Statement& s) {
                         WebhookTriggerRow r;
                         r.id = s.Int(0);
                         r.webhook_id = s.Int(1);
                         r.trigger_type = s.Text(2);
                         r.condition = ParseCondition(s.Text(3));
                         return r;
                       }));
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < rows.size(); ++i) index[rows[i].id] = i;
  for (WebhookTriggerRow& trigger : triggers) {
    auto it = index.find(trigger.webhook_id);
    if (it != index.end()) rows[it->second].triggers.push_back(std::move(trigger));
  }
  return rows;
}

Status SqliteStore::UpdateWebhookUrl(int64_t id, const std::string& url) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE webhooks SET url = ? WHERE id = ?");
  DET_RETURN_IF_ERROR(s.Bind(1, url).Bind(2, id).Run());
  if (db_->Changes() == 0) return WebhookNotFound(id);
  return Status::Ok();
}

Status SqliteStore::DeleteWebhook(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransactionLocked([&]() -> Status {
    DET_PREPARE(w, "DELETE FROM webhooks WHERE id = ?");
    DET_RETURN_IF_ERROR(w.Bind(1, id).Run());
    if (db_->Changes() == 0) return WebhookNotFound(id);
    DET_PREPARE(d,
                "DELETE FROM webhook_task_log_triggers WHERE trigger_id IN (SELECT id FROM "
                "webhook_triggers WHERE webhook_id = ?)");
    DET_RETURN_IF_ERROR(d.Bind(1, id).Run());
    DET_PREPARE(t, "DELETE FROM webhook_triggers WHERE webhook_id = ?");
    return t.Bind(1, id).Run();
  });
}

Result<int64_t> SqliteStore::InsertWebhookEventsLocked(const std::vector<WebhookEventRow>& events) {
  int64_t queued = 0;
  if (events.empty()) return queued;
  DET_PREPARE(e,
              "INSERT INTO webhook_events (url, payload, attempts, next_attempt_at) VALUES (?, "
              "?, ?, ?)");
  DET_PREPARE(once,
              "INSERT INTO webhook_task_log_triggers (task_id, trigger_id) VALUES (?, ?) ON "
              "CONFLICT (task_id, trigger_id) DO NOTHING");
  for (const WebhookEventRow& ev : events) {
    if (!ev.dedupe_task_id.empty()) {
      once.Reset();
      DET_RETURN_IF_ERROR(once.Bind(1, ev.dedupe_task_id).Bind(2, ev.dedupe_trigger_id).Run());
      if (db_->Changes() == 0) continue;  // already reported for this task
    }
    e.Reset();
    e.Bind(1, ev.url).Bind(2, ev.payload).Bind(3, ev.attempts).Bind(4, ev.next_attempt_at);
    DET_RETURN_IF_ERROR(e.Run());
    ++queued;
  }
  return queued;
}

Result<int64_t> SqliteStore::EnqueueWebhookEvents(const std::vector<WebhookEventRow>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t queued = 0;
  DET_RETURN_IF_ERROR(InWriteTransactionLocked([&]() -> Status {
    DET_ASSIGN_OR_RETURN(queued, InsertWebhookEventsLocked(events));
    return Status::Ok();
  }));
  return queued;
}

Result<std::vector<WebhookEventRow>> SqliteStore::DueWebhookEvents(int64_t now, int64_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT id, url, payload, attempts, next_attempt_at FROM webhook_events WHERE "
              "next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?");
  s.Bind(1, now).Bind(2, limit);
  return s.Collect<WebhookEventRow>([](const Statement& r) {
    WebhookEventRow e;
    e.id = r.Int(0);
    e.url = r.Text(1);
    e.payload = r.Text(2);
    e.attempts = r.Int(3);
    e.next_attempt_at = r.Int(4);
    return e;
  });
}

Status SqliteStore::DeleteWebhookEvent(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "DELETE FROM webhook_events WHERE id = ?");
  return s.Bind(1, id).Run();
}

Status SqliteStore::RescheduleWebhookEvent(int64_t id, int64_t attempts, int64_t next_attempt_at) {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s, "UPDATE webhook_events SET attempts = ?, next_attempt_at = ? WHERE id = ?");
  return s.Bind(1, attempts).Bind(2, next_attempt_at).Bind(3, id).Run();
}

Result<std::optional<ClusterMessageRow>> SqliteStore::GetClusterMessage() {
  std::lock_guard<std::mutex> lock(mu_);
  DET_PREPARE(s,
              "SELECT message, start_time, end_time, created_time FROM cluster_messages ORDER BY "
              "created_time DESC LIMIT 1");
  DET_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<ClusterMessageRow>();
  ClusterMessageRow m;
  m.message = s.Text(0);
  m.start_time = s.Int(1);
  m.end_time = s.OptInt(2);
  m.created_time = s.Int(3);
  return std::optional<ClusterMessageRow>(std::move(m));
}

Status SqliteStore::SetClusterMessage(const ClusterMessageRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  return InWriteTransactionLocked([&]() -> Status {
    DET_RETURN_IF_ERROR(Exec("DELETE FROM cluster_messages"));
    DET_PREPARE(s,
                "INSERT INTO cluster_messages (message, start_time, end_time, created_time) VALUES "
                "(?, ?, ?, ?)");
    return s.Bind(1, row.message)
        .Bind(2, row.start_time)
        .Bind(3, row.end_time)
        .Bind(4, row.created_time)
        .Run();
  });
}

Status SqliteStore::ClearClusterMessage() {
  std::lock_guard<std::mutex> lock(mu_);
  return Exec("DELETE FROM cluster_messages");
}

}  // namespace det::master::store
