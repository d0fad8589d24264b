-- Initial schema. Times are microseconds since the Unix epoch; JSON columns hold text.
CREATE TABLE cluster_id (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cluster_id TEXT NOT NULL
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  display_name TEXT NOT NULL DEFAULT '',
  admin INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE user_sessions (
  token TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  created_at INTEGER NOT NULL,
  expiry INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE experiments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  state TEXT NOT NULL,
  config TEXT NOT NULL,
  original_config TEXT NOT NULL,
  model_definition BLOB NOT NULL,
  owner_id INTEGER NOT NULL REFERENCES users(id),
  job_id TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  archived INTEGER NOT NULL DEFAULT 0,
  progress REAL NOT NULL DEFAULT 0,
  parent_id INTEGER,
  notes TEXT NOT NULL DEFAULT '',
  snapshot TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX experiments_state ON experiments(state);

CREATE TABLE trials (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  request_id TEXT NOT NULL,
  seed INTEGER NOT NULL,
  hparams TEXT NOT NULL,
  state TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  restarts INTEGER NOT NULL DEFAULT 0,
  run_id INTEGER NOT NULL DEFAULT 0,
  total_batches INTEGER NOT NULL DEFAULT 0,
  runner_state TEXT NOT NULL DEFAULT '',
  searcher_metric REAL,
  task_id TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  UNIQUE (experiment_id, request_id)
);
CREATE INDEX trials_experiment ON trials(experiment_id);

CREATE TABLE allocations (
  allocation_id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  agent_id TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,
  token TEXT NOT NULL UNIQUE,
  slots INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  exit_code INTEGER,
  exit_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX allocations_trial ON allocations(trial_id);

CREATE TABLE metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  trial_run_id INTEGER NOT NULL,
  total_batches INTEGER NOT NULL,
  metric_group TEXT NOT NULL,
  metrics TEXT NOT NULL,
  report_time INTEGER NOT NULL,
  archived INTEGER NOT NULL DEFAULT 0,
  UNIQUE (trial_id, trial_run_id, metric_group, total_batches)
);
CREATE INDEX metrics_trial_group ON metrics(trial_id, metric_group, total_batches);

CREATE TABLE checkpoints (
  uuid TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  allocation_id TEXT NOT NULL,
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  report_time INTEGER NOT NULL,
  state TEXT NOT NULL,
  resources TEXT NOT NULL,
  metadata TEXT NOT NULL,
  steps_completed INTEGER NOT NULL,
  size INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX checkpoints_trial ON checkpoints(trial_id);

CREATE TABLE task_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  trial_id INTEGER NOT NULL,
  allocation_id TEXT NOT NULL DEFAULT '',
  agent_id TEXT NOT NULL DEFAULT '',
  container_id TEXT NOT NULL DEFAULT '',
  rank_id INTEGER,
  timestamp INTEGER NOT NULL,
  level TEXT NOT NULL DEFAULT '',
  stdtype TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  log TEXT NOT NULL
);
CREATE INDEX task_logs_trial ON task_logs(trial_id, id);
