-- IKEv2 (spec Ikev2Config, Ikev2AdvancedSettings): one row; private keys sealed (SecretBox), settings as JSON.
CREATE TABLE ikev2 (
  id                            INTEGER PRIMARY KEY CHECK (id = 1),
  enabled                       INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
  ca_cert                       TEXT    NOT NULL DEFAULT '',
  -- `enc:v1:...` (SecretBox) or '' when no CA
  ca_key_sealed                 TEXT    NOT NULL DEFAULT '',
  ca_common_name                TEXT    NOT NULL DEFAULT '',
  ca_country_name               TEXT    NOT NULL DEFAULT '',
  ca_locality                   TEXT    NOT NULL DEFAULT '',
  ca_organization               TEXT    NOT NULL DEFAULT '',
  ca_organizational_unit        TEXT    NOT NULL DEFAULT '',
  ca_state_or_province_name     TEXT    NOT NULL DEFAULT '',
  server_cert                   TEXT    NOT NULL DEFAULT '',
  server_key_sealed             TEXT    NOT NULL DEFAULT '',
  server_common_name            TEXT    NOT NULL DEFAULT '',
  server_country_name           TEXT    NOT NULL DEFAULT '',
  server_domain                 TEXT    NOT NULL DEFAULT '',
  server_ip                     TEXT    NOT NULL DEFAULT '',
  server_ipv6                   TEXT    NOT NULL DEFAULT '',
  server_locality               TEXT    NOT NULL DEFAULT '',
  server_organization           TEXT    NOT NULL DEFAULT '',
  server_organizational_unit    TEXT    NOT NULL DEFAULT '',
  server_state_or_province_name TEXT    NOT NULL DEFAULT '',
  -- Ikev2AdvancedSettings as JSON ('' = the spec's defaults)
  advanced                      TEXT    NOT NULL DEFAULT '',
  -- profiles carry the account password only when the operator opted in
  profile_password              INTEGER NOT NULL DEFAULT 0 CHECK (profile_password IN (0, 1)),
  updated_at                    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
INSERT INTO ikev2 (id) VALUES (1);
