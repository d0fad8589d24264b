-- Checkpoint deletions the master has decided on but not yet seen finished. A request stays
-- until its files are really gone, so a master restart resumes it.
CREATE TABLE gc_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  experiment_id INTEGER NOT NULL,
  storage_config TEXT NOT NULL,
  uuids TEXT NOT NULL,
  globs TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT ''
);
