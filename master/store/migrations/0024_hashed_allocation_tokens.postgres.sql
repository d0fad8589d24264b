-- PostgreSQL twin of 0024_hashed_allocation_tokens.sql: the same lower-case hex SHA-256.
UPDATE allocations SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex') WHERE token <> '';
UPDATE generic_tasks
  SET allocation_token = encode(sha256(convert_to(allocation_token, 'UTF8')), 'hex')
  WHERE allocation_token <> '';
