-- A GC request may end in deleting its experiment's rows (det experiment delete).
ALTER TABLE gc_requests ADD COLUMN delete_experiment INTEGER NOT NULL DEFAULT 0;
