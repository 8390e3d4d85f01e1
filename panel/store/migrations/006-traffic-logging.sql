-- Traffic logging (spec TrafficLoggingConfig): one row of settings; the TSDB token is stored sealed (SecretBox).
CREATE TABLE traffic_logging (
  id                        INTEGER PRIMARY KEY CHECK (id = 1),
  enabled                   INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
  enabled_tsdb              INTEGER NOT NULL DEFAULT 0 CHECK (enabled_tsdb IN (0, 1)),
  enabled_remote_syslog     INTEGER NOT NULL DEFAULT 0 CHECK (enabled_remote_syslog IN (0, 1)),
  -- Which attributes and connection states are logged (spec flags, 1 or 0).
  flags                     TEXT    NOT NULL DEFAULT '{}',
  tsdb_url                  TEXT    NOT NULL DEFAULT '',
  tsdb_organization         TEXT    NOT NULL DEFAULT '',
  tsdb_bucket               TEXT    NOT NULL DEFAULT '',
  -- `enc:v1:...` (SecretBox) or '' when unset.
  tsdb_token_sealed         TEXT    NOT NULL DEFAULT '',
  remote_syslog_server      TEXT    NOT NULL DEFAULT '',
  remote_syslog_server_port INTEGER NOT NULL DEFAULT 514 CHECK (remote_syslog_server_port BETWEEN 1 AND 65535),
  updated_at                TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
