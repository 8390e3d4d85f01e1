-- Core tables of the panel: API access hashes, key/value settings, the installed license.

CREATE TABLE access_hashes (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  digest     TEXT    NOT NULL UNIQUE,          -- SHA-256 hex of the 80-hex-char hash; the hash itself is never stored
  ip         TEXT    NOT NULL,                 -- canonical client address the hash is bound to
  comment    TEXT    NOT NULL DEFAULT '',
  created_at TEXT    NOT NULL                  -- ISO 8601 UTC
);

CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,                    -- JSON
  updated_at TEXT NOT NULL
);

CREATE TABLE license (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  key_sealed   TEXT NOT NULL,                  -- the license key, SecretBox-sealed
  installed_at TEXT NOT NULL,
  last_check   TEXT                            -- ISO 8601 UTC of the last signature verification
);
