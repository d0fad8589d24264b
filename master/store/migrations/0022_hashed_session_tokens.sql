-- Session tokens are kept as their SHA-256 digest (master/store/session_token.h): the rows of
-- earlier versions are hashed in place, so their users stay logged in. det_sha256_hex is
-- registered on every SQLite connection (sqlite_db.cc).
UPDATE user_sessions SET token = det_sha256_hex(token);
