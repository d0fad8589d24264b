-- Agents and slots an operator disabled (POST /api/v1/agents/{id}/disable, .../slots/{slotId}/
-- disable), so a restarted master keeps them disabled. One row per agent (slot_id -1) or slot
-- that is not in the default (enabled) state; enabling deletes the row.
CREATE TABLE agent_admin_states (
  agent_id TEXT NOT NULL,
  slot_id INTEGER NOT NULL,
  draining INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, slot_id)
);
