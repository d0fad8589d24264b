-- Config templates (det template ...): a named experiment-config fragment merged into the
-- configs that name it at creation. Names are unique cluster-wide, as in Determined.
CREATE TABLE templates (
  name TEXT PRIMARY KEY,
  workspace_id INTEGER NOT NULL DEFAULT 1,
  config TEXT NOT NULL
);

-- Workspaces and projects beyond the built-in ones: workspace 1 "Uncategorized" holding
-- project 1 "Uncategorized" stay the default and cannot be changed or deleted.
CREATE TABLE workspaces (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  archived INTEGER NOT NULL DEFAULT 0,
  user_id INTEGER NOT NULL DEFAULT 1,
  immutable INTEGER NOT NULL DEFAULT 0,
  pinned INTEGER NOT NULL DEFAULT 0
);
INSERT INTO workspaces (id, name, immutable) VALUES (1, 'Uncategorized', 1);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  workspace_id INTEGER NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  key TEXT NOT NULL UNIQUE,
  archived INTEGER NOT NULL DEFAULT 0,
  user_id INTEGER NOT NULL DEFAULT 1,
  immutable INTEGER NOT NULL DEFAULT 0,
  notes TEXT NOT NULL DEFAULT '[]',
  UNIQUE (workspace_id, name)
);
INSERT INTO projects (id, name, workspace_id, key, immutable) VALUES (1, 'Uncategorized', 1, 'UNCAT', 1);

-- The project of each experiment that is not in project 1 (kept apart from the experiments
-- table; a deleted experiment drops its row).
CREATE TABLE experiment_projects (
  experiment_id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL
);
CREATE TRIGGER experiment_projects_on_delete AFTER DELETE ON experiments BEGIN
  DELETE FROM experiment_projects WHERE experiment_id = OLD.id;
END;
