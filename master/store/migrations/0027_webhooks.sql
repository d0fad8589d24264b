-- Webhooks (master/server/webhook_service.h): where the master posts what happened, on which
-- triggers, and the deliveries still to make. A delivery is queued in the transaction of what
-- caused it, so a crash neither loses nor invents one.
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL DEFAULT '',
  url TEXT NOT NULL,
  webhook_type TEXT NOT NULL,
  mode TEXT NOT NULL,
  workspace_id INTEGER
);
CREATE TABLE webhook_triggers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id INTEGER NOT NULL,
  trigger_type TEXT NOT NULL,
  condition TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX webhook_triggers_by_webhook ON webhook_triggers (webhook_id);
CREATE TABLE webhook_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL DEFAULT 0
);
-- A task's log matching a TASK_LOG trigger is reported once per task and trigger.
CREATE TABLE webhook_task_log_triggers (
  task_id TEXT NOT NULL,
  trigger_id INTEGER NOT NULL,
  PRIMARY KEY (task_id, trigger_id)
);
