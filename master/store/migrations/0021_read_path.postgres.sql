-- PostgreSQL twin of 0021_read_path.sql: jsonb for json_extract, the name trigger as a PL/pgSQL
-- function that sets the column before the row is written.
ALTER TABLE experiments ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE experiments SET name = COALESCE((config::jsonb #>> '{name}'), '');
DROP INDEX experiments_name;
CREATE INDEX experiments_by_name ON experiments(name, id, owner_id);
CREATE FUNCTION experiments_name_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.name := COALESCE((NEW.config::jsonb #>> '{name}'), '');
  RETURN NEW;
END
$$;
CREATE TRIGGER experiments_name_sync BEFORE INSERT OR UPDATE OF config ON experiments
  FOR EACH ROW EXECUTE FUNCTION experiments_name_sync();

ALTER TABLE trials ADD COLUMN best_validation_id BIGINT;
ALTER TABLE trials ADD COLUMN best_validation_value DOUBLE PRECISION;
ALTER TABLE trials ADD COLUMN latest_validation_id BIGINT;
CREATE INDEX trials_experiment_best ON trials(experiment_id, best_validation_value);
