-- An allocation may span several agents: one entry per agent, [{"agentId", "slotIds"}].
ALTER TABLE allocations ADD COLUMN resources TEXT NOT NULL DEFAULT '[]';
