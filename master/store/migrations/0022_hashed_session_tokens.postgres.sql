-- PostgreSQL twin of 0022_hashed_session_tokens.sql: the same lower-case hex SHA-256.
UPDATE user_sessions SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
