-- The workspace a command, notebook, shell or TensorBoard was launched in (Determined's
-- workspaceId): an archived workspace takes no launches, and deleting one kills its tasks.
ALTER TABLE generic_tasks ADD COLUMN workspace_id INTEGER NOT NULL DEFAULT 1;
