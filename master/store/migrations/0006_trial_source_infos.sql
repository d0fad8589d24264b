-- Links a trial (e.g. an inference task) to the checkpoint it used, so the metrics it reports
-- can be found from the checkpoint (GET /api/v1/checkpoints/{uuid}/metrics).
CREATE TABLE trial_source_infos (
  trial_id INTEGER NOT NULL,
  checkpoint_uuid TEXT NOT NULL,
  source_type TEXT NOT NULL,
  model_id INTEGER,
  model_version INTEGER,
  PRIMARY KEY (trial_id, checkpoint_uuid, source_type)
);
CREATE INDEX trial_source_infos_checkpoint ON trial_source_infos (checkpoint_uuid);
