-- One-time links (GET /account/<name>/otl, page {base_url}/otl/<key>): only the key's SHA-256 digest is stored.
-- A link dies with its account (cascade), after use plus the download grace period, or at expires_at.
CREATE TABLE otl_links (
  id            INTEGER PRIMARY KEY,
  -- SHA-256 hex of the 80-hex-character link key; also the key GET /otl/list answers and DELETE /otl/<key> takes
  digest        TEXT    NOT NULL UNIQUE CHECK (length(digest) = 64),
  account_id    INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at    TEXT    NOT NULL,
  expires_at    TEXT    NOT NULL,
  -- set once, by the one UPDATE ... WHERE used_at IS NULL that consumes the link
  used_at       TEXT,
  -- SHA-256 hex of the consuming view's download token, and when its downloads die
  view_digest   TEXT,
  view_expires  TEXT
);
CREATE INDEX otl_links_account ON otl_links (account_id);
CREATE INDEX otl_links_expires ON otl_links (expires_at);
