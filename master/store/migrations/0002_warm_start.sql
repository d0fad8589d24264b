-- The checkpoint a trial starts from when it has none of its own: a PBT parent's, or the
-- searcher's source_trial_id / source_checkpoint_uuid.
ALTER TABLE trials ADD COLUMN warm_start_checkpoint_uuid TEXT NOT NULL DEFAULT '';
