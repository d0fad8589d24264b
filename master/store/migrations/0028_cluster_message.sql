-- The cluster-wide message (det master cluster-message set): at most one row, replaced by the
-- next one and removed by clear.
CREATE TABLE cluster_messages (
  message TEXT NOT NULL,
  start_time BIGINT NOT NULL,
  end_time BIGINT,
  created_time BIGINT NOT NULL
);
