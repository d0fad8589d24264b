-- An experiment's model definition (up to 95 MiB) and its searcher snapshot (several MB for a
-- large search) move out of its row into tables of their own: SQLite writes a whole row again
-- on any update, so every state, progress or notes write of an experiment copied both (30-70
-- ms and 3.4 MB of WAL per progress report of a 10,000-trial search). Same SQL on SQLite and
-- PostgreSQL. Deleting an experiment deletes both (SqliteStore::DeleteExperiment).
CREATE TABLE experiment_model_definitions (
  experiment_id INTEGER PRIMARY KEY,
  model_definition BLOB NOT NULL
);
CREATE TABLE experiment_snapshots (
  experiment_id INTEGER PRIMARY KEY,
  snapshot TEXT NOT NULL
);
INSERT INTO experiment_model_definitions (experiment_id, model_definition)
  SELECT id, model_definition FROM experiments;
INSERT INTO experiment_snapshots (experiment_id, snapshot)
  SELECT id, snapshot FROM experiments WHERE snapshot IS NOT NULL AND snapshot <> '{}';
ALTER TABLE experiments DROP COLUMN model_definition;
ALTER TABLE experiments DROP COLUMN snapshot;
