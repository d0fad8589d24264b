-- What each allocation used, kept for the usage report (GET /resources/allocation/allocations-csv):
-- who ran it, in which workspace and for which experiment, as they were when it started. It
-- has no foreign keys, so moving a project or deleting an experiment leaves the record as it
-- was; the store writes a row in the transaction that writes its allocation or task.
CREATE TABLE allocation_usage (
  allocation_id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  task_type TEXT NOT NULL,
  username TEXT NOT NULL DEFAULT '',
  workspace_name TEXT NOT NULL DEFAULT '',
  experiment_id INTEGER,
  slots INTEGER NOT NULL DEFAULT 0,
  resource_pool TEXT NOT NULL DEFAULT '',
  start_time INTEGER NOT NULL,
  end_time INTEGER
);
CREATE INDEX allocation_usage_start ON allocation_usage(start_time);
