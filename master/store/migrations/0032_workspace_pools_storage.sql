-- Workspace-resource pool bindings (Determined's rp_workspace_bindings): a pool bound to some
-- workspaces is available to those alone; an unbound pool to every workspace. And each
-- workspace's default compute and auxiliary pools ('' for the cluster's) and checkpoint storage.
CREATE TABLE pool_workspace_bindings (
  pool_name TEXT NOT NULL,
  workspace_id INTEGER NOT NULL,
  PRIMARY KEY (pool_name, workspace_id)
);
CREATE INDEX pool_workspace_bindings_by_workspace ON pool_workspace_bindings (workspace_id);
ALTER TABLE workspaces ADD COLUMN default_compute_pool TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN default_aux_pool TEXT NOT NULL DEFAULT '';
-- Its checkpoint_storage as JSON ('' : none): its experiments' default over the master's.
ALTER TABLE workspaces ADD COLUMN checkpoint_storage TEXT NOT NULL DEFAULT '';
