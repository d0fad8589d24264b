-- The model registry: named models, each with numbered versions that point at a checkpoint.
-- Labels are JSON arrays of strings, metadata JSON objects; times are microseconds.
-- model_versions.checkpoint_uuid has no foreign key: the master refuses to delete a registered
-- checkpoint itself, and a key would wedge a checkpoint GC that raced a registration.
CREATE TABLE models (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '{}',
  labels TEXT NOT NULL DEFAULT '[]',
  user_id INTEGER NOT NULL REFERENCES users(id),
  workspace_id INTEGER NOT NULL DEFAULT 1,
  archived INTEGER NOT NULL DEFAULT 0,
  creation_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);

CREATE TABLE model_versions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  checkpoint_uuid TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  comment TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '{}',
  labels TEXT NOT NULL DEFAULT '[]',
  user_id INTEGER NOT NULL REFERENCES users(id),
  creation_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL,
  UNIQUE (model_id, version)
);
CREATE INDEX model_versions_checkpoint ON model_versions (checkpoint_uuid);
