-- PostgreSQL twin of 0013_searcher_events.sql: the trigger as a PL/pgSQL function.
-- Searcher journal: one record per persisted searcher decision, appended after the full
-- snapshot in experiments.snapshot and replayed over it at restore. Writing a full snapshot
-- (UpdateExperimentSnapshot) deletes the experiment's records in the same transaction.
CREATE TABLE searcher_events (
  experiment_id BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (experiment_id, seq)
);

CREATE FUNCTION searcher_events_gc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM searcher_events WHERE experiment_id = OLD.id;
  RETURN OLD;
END
$$;
CREATE TRIGGER searcher_events_gc AFTER DELETE ON experiments
  FOR EACH ROW EXECUTE FUNCTION searcher_events_gc();
