-- System metrics the profiler of a trial reports (groups cpu, gpu, memory, disk, network), one
-- row per report and agent. Kept apart from `metrics`: they have no step, are never merged or
-- rolled back, and are read by series (GET /api/v1/trials/{id}/profiler/...). Rows go with
-- their trial (ON DELETE CASCADE), so deleting an experiment removes them.
CREATE TABLE system_metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  trial_run_id INTEGER NOT NULL,
  metric_group TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  metrics TEXT NOT NULL,
  end_time INTEGER NOT NULL
);
CREATE INDEX system_metrics_trial_group ON system_metrics(trial_id, metric_group, agent_id, id);
