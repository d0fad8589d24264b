-- Slurm resource manager: the Slurm job of each allocation, so a restarted master re-adopts
-- running jobs by id and never submits an allocation twice.
CREATE TABLE slurm_jobs (
  allocation_id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL,
  pool TEXT NOT NULL,
  partition_name TEXT NOT NULL,
  nodes INTEGER NOT NULL,
  submitted_at BIGINT NOT NULL,
  ended INTEGER NOT NULL DEFAULT 0
);
