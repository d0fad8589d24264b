-- Allocation tokens are kept as their SHA-256 digest too (master/store/session_token.h), in
-- allocations.token and generic_tasks.allocation_token: the rows of earlier versions are hashed in
-- place, so a trial or task still running across the upgrade keeps authenticating with the token
-- it was handed. det_sha256_hex is registered on every SQLite connection (sqlite_db.cc).
UPDATE allocations SET token = det_sha256_hex(token) WHERE token <> '';
UPDATE generic_tasks SET allocation_token = det_sha256_hex(allocation_token)
  WHERE allocation_token <> '';
