-- Commands, notebooks, shells and TensorBoards (master/server/task_service.h): one row per
-- task with its config and the state of its single allocation, so a master restart keeps them.
CREATE TABLE generic_tasks (
  task_id TEXT PRIMARY KEY,
  task_type TEXT NOT NULL,
  owner_id INTEGER NOT NULL,
  username TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  config TEXT NOT NULL,
  state TEXT NOT NULL,
  job_id TEXT NOT NULL,
  allocation_id TEXT NOT NULL DEFAULT '',
  allocation_token TEXT NOT NULL DEFAULT '',
  agent_id TEXT NOT NULL DEFAULT '',
  slot_ids TEXT NOT NULL DEFAULT '[]',
  proxy_address TEXT NOT NULL DEFAULT '',
  ready INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER,
  exit_error TEXT NOT NULL DEFAULT '',
  secrets TEXT NOT NULL DEFAULT '{}',
  registered_time BIGINT NOT NULL,
  start_time BIGINT NOT NULL DEFAULT 0,
  end_time BIGINT NOT NULL DEFAULT 0
);
-- The context directory (`-c DIR`) of a task, a tar.gz.
CREATE TABLE generic_task_contexts (
  task_id TEXT PRIMARY KEY,
  content BLOB NOT NULL
);
-- A task's logs are read by task id (a trial's by trial id).
CREATE INDEX task_logs_task ON task_logs(task_id, id);
