-- Searcher journal: one record per persisted searcher decision, appended after the full
-- snapshot in experiments.snapshot and replayed over it at restore. Writing a full snapshot
-- (UpdateExperimentSnapshot) deletes the experiment's records in the same transaction.
CREATE TABLE searcher_events (
  experiment_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (experiment_id, seq)
);

CREATE TRIGGER searcher_events_gc AFTER DELETE ON experiments
BEGIN
  DELETE FROM searcher_events WHERE experiment_id = OLD.id;
END;
