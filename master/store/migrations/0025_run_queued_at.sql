-- When a trial's current run was queued (micros). A pending allocation has no row until it is
-- placed, so a restore re-queues a never-placed run with this time instead of the restart's:
-- `det task list` keeps its registered time and the queue keeps its order.
-- Same SQL on SQLite and PostgreSQL.
ALTER TABLE trials ADD COLUMN run_queued_at BIGINT NOT NULL DEFAULT 0;
