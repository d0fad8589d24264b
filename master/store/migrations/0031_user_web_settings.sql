-- The web UI's settings of each user (Determined's user_web_setting: GET/POST
-- /api/v1/users/setting), one value per key and storage path.
CREATE TABLE user_web_settings (
  user_id INTEGER NOT NULL,
  storage_path TEXT NOT NULL DEFAULT '',
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (user_id, key, storage_path)
);
