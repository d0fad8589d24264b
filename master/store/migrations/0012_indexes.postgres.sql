-- PostgreSQL twin of 0012_indexes.sql: the name index on jsonb's #>> for SQLite's json_extract.
-- Indexes for the list filters and sorts of the web UI and the CLI, and for chart series, so
-- reads stay fast at 100,000 trials and 10,000,000 metric rows (bench/store_scale.cc measures
-- them; master/store/sqlite/sqlite_store_scale_test.cc checks the plans).

-- Experiment list (master/store/sqlite/sqlite_store_webui.cc): archived, user, start time and
-- name filters and sorts. State has experiments_state (0001). COUNT(*) of a filtered list reads
-- one of these instead of the table, whose rows carry the context tarball.
-- The list's default page (archived = 0, newest id first) walks this in rowid order.
CREATE INDEX experiments_archived ON experiments(archived);
-- Filtered by archived and sorted by start time, and sorted by start time alone.
CREATE INDEX experiments_archived_start ON experiments(archived, start_time);
CREATE INDEX experiments_start_time ON experiments(start_time);
CREATE INDEX experiments_owner ON experiments(owner_id);
-- One state (the UI's state filter), unarchived, by start time: page and count read only this.
CREATE INDEX experiments_state_archived_start ON experiments(state, archived, start_time);
-- The same expression as the list's name sort (an expression index is used only for it).
CREATE INDEX experiments_name ON experiments(COALESCE((config::jsonb #>> '{name}'), ''));
CREATE INDEX experiment_projects_project ON experiment_projects(project_id);

-- An experiment's trials by state.
CREATE INDEX trials_experiment_state ON trials(experiment_id, state);

-- A trial's series: one group, live rows only, by steps. Replaces metrics_trial_group, which
-- lacked `archived` so every seek of a downsampled series read table rows to test it.
DROP INDEX metrics_trial_group;
CREATE INDEX metrics_series ON metrics(trial_id, metric_group, archived, total_batches);
