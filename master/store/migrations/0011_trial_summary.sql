-- Summary metrics of each trial (Determined's trials.summary_metrics): per metric group and name,
-- type, count, sum, min, max, mean and last, kept up to date as metrics are reported (see
-- master/core/trial_summary.h). A NULL summary is not computed yet: trials that reported metrics
-- before this migration get one from their metric rows on first read. Rows go with their trial.
CREATE TABLE trial_summaries (
  trial_id INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
  summary_metrics TEXT
);
INSERT INTO trial_summaries (trial_id, summary_metrics) SELECT DISTINCT trial_id, NULL FROM metrics;

-- A checkpoint GC request may also delete the experiment's TensorBoard files on its own
-- (DELETE /api/v1/experiments/{id}/tensorboard-files), without deleting the experiment.
ALTER TABLE gc_requests ADD COLUMN delete_tensorboards INTEGER NOT NULL DEFAULT 0;
