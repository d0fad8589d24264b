-- The read path at scale (issue #13; bench/store_scale.cc measures it).

-- The experiment's name as a column of its own: the list's name filter and name sort (name,
-- then id) read the index, which also covers the owner filter, instead of every row's config
-- JSON (rows carry the context tarball, so reading them is slow at 10,000s of experiments).
-- Triggers keep it equal to config.name whoever writes the row.
ALTER TABLE experiments ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE experiments SET name = COALESCE(json_extract(config, '$.name'), '');
DROP INDEX experiments_name;
CREATE INDEX experiments_by_name ON experiments(name, id, owner_id);
CREATE TRIGGER experiments_name_insert AFTER INSERT ON experiments BEGIN
  UPDATE experiments SET name = COALESCE(json_extract(NEW.config, '$.name'), '')
  WHERE id = NEW.id;
END;
CREATE TRIGGER experiments_name_update AFTER UPDATE OF config ON experiments BEGIN
  UPDATE experiments SET name = COALESCE(json_extract(NEW.config, '$.name'), '')
  WHERE id = NEW.id;
END;

-- Each trial's best validation report (by its experiment's searcher metric, with the metric's
-- value) and latest one, kept in the transaction that writes reports
-- (master/store/sqlite/sqlite_store_validations.cc), so that reading a trial reads two metric
-- rows instead of all its validation reports. The store fills them for existing trials right
-- after this migration, in the same transaction.
ALTER TABLE trials ADD COLUMN best_validation_id INTEGER;
ALTER TABLE trials ADD COLUMN best_validation_value REAL;
ALTER TABLE trials ADD COLUMN latest_validation_id INTEGER;
-- The best trial of an experiment (web UI list, best_searcher_validation_metric).
CREATE INDEX trials_experiment_best ON trials(experiment_id, best_validation_value);
