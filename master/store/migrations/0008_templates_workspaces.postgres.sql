-- PostgreSQL twin of 0008_templates_workspaces.sql: the trigger as a PL/pgSQL function.
-- Config templates (det template ...): a named experiment-config fragment merged into the
-- configs that name it at creation. Names are unique cluster-wide, as in Determined.
CREATE TABLE templates (
  name TEXT PRIMARY KEY,
  workspace_id BIGINT NOT NULL DEFAULT 1,
  config TEXT NOT NULL
);

-- Workspaces and projects beyond the built-in ones: workspace 1 "Uncategorized" holding
-- project 1 "Uncategorized" stay the default and cannot be changed or deleted.
CREATE TABLE workspaces (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  archived BIGINT NOT NULL DEFAULT 0,
  user_id BIGINT NOT NULL DEFAULT 1,
  immutable BIGINT NOT NULL DEFAULT 0,
  pinned BIGINT NOT NULL DEFAULT 0
);
INSERT INTO workspaces (id, name, immutable) VALUES (1, 'Uncategorized', 1);

CREATE TABLE projects (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL,
  workspace_id BIGINT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  key TEXT NOT NULL UNIQUE,
  archived BIGINT NOT NULL DEFAULT 0,
  user_id BIGINT NOT NULL DEFAULT 1,
  immutable BIGINT NOT NULL DEFAULT 0,
  notes TEXT NOT NULL DEFAULT '[]',
  UNIQUE (workspace_id, name)
);
INSERT INTO projects (id, name, workspace_id, key, immutable) VALUES (1, 'Uncategorized', 1, 'UNCAT', 1);

-- The project of each experiment that is not in project 1 (kept apart from the experiments
-- table; a deleted experiment drops its row).
CREATE TABLE experiment_projects (
  experiment_id BIGINT PRIMARY KEY,
  project_id BIGINT NOT NULL
);
CREATE FUNCTION experiment_projects_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM experiment_projects WHERE experiment_id = OLD.id;
  RETURN OLD;
END
$$;
CREATE TRIGGER experiment_projects_on_delete AFTER DELETE ON experiments
  FOR EACH ROW EXECUTE FUNCTION experiment_projects_on_delete();
