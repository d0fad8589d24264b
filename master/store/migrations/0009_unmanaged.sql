-- Unmanaged experiments and trials (core_v2): run by a script outside the cluster, which
-- reports their state; the master never schedules them. The marks go away with their rows.
CREATE TABLE unmanaged_experiments (
  experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
  -- The script's own name for the experiment (PUT by-external-id); NULL when none.
  external_id TEXT UNIQUE
);

CREATE TABLE unmanaged_trials (
  trial_id INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
  experiment_id INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  external_id TEXT,
  -- Micros of the last start, heartbeat or state patch; a running trial silent too long is lost.
  last_activity INTEGER NOT NULL,
  UNIQUE (experiment_id, external_id)
);
CREATE INDEX unmanaged_trials_task ON unmanaged_trials (task_id);
