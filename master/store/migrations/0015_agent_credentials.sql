-- Agent credentials: each agent id is bound to the credential that first registered it (a
-- SHA-256 hex digest of the agent's own key); registering the id with another key is refused.
CREATE TABLE agent_credentials (
  agent_id TEXT PRIMARY KEY,
  key_digest TEXT NOT NULL,
  bound_time INTEGER NOT NULL
);
