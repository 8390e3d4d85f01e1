-- Network policy: port forwards to peers, the operator's INPUT filter rules in order, the global firewall settings.

-- One forward `external_ip:dst_port/protocol` → peer:to_port, keyed by server + dst_port + protocol. A pair is also
-- unique across servers (DELETE /port_forward/<dst_port>/<protocol> names no server, and the firewall refuses a
-- pair twice). Deleting the peer (or its server) deletes its forwards in the store itself.
CREATE TABLE port_forwards (
  server_id  INTEGER NOT NULL REFERENCES wireguard_servers (id) ON DELETE CASCADE,
  dst_port   INTEGER NOT NULL CHECK (dst_port BETWEEN 1 AND 65535),
  protocol   TEXT    NOT NULL CHECK (protocol IN ('tcp', 'udp')),
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  to_port    INTEGER NOT NULL CHECK (to_port BETWEEN 1 AND 65535),
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (server_id, dst_port, protocol)
) WITHOUT ROWID;
CREATE UNIQUE INDEX port_forwards_pair ON port_forwards (dst_port, protocol);
CREATE INDEX port_forwards_account ON port_forwards (account_id);

-- The operator's INPUT rules after the built-in system_CONTROLPANEL (which is not stored); `position` orders them
-- (a rule added at the top gets the smallest position minus one, at the end the largest plus one).
CREATE TABLE firewall_filter_rules (
  name     TEXT    PRIMARY KEY CHECK (name GLOB '[A-Za-z0-9]*' AND name NOT GLOB '*[^A-Za-z0-9]*'),
  position INTEGER NOT NULL UNIQUE,
  action   TEXT    NOT NULL CHECK (action IN ('ACCEPT', 'DROP')),
  chain    TEXT    NOT NULL CHECK (chain = 'INPUT'),
  protocol TEXT    NOT NULL CHECK (protocol IN ('TCP', 'UDP', 'ICMP', 'ANY')),
  s_ip     TEXT    NOT NULL DEFAULT '',
  d_ip     TEXT    NOT NULL DEFAULT '',
  s_port   TEXT    NOT NULL DEFAULT '',
  d_port   TEXT    NOT NULL DEFAULT ''
);

-- The global firewall settings (spec FirewallConf), one row.
CREATE TABLE firewall_conf (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  internal_traffic INTEGER NOT NULL DEFAULT 1 CHECK (internal_traffic IN (0, 1)),
  ip_forward       INTEGER NOT NULL DEFAULT 1 CHECK (ip_forward IN (0, 1)),
  policy_forward   TEXT    NOT NULL DEFAULT 'ACCEPT' CHECK (policy_forward IN ('ACCEPT', 'DROP')),
  policy_input     TEXT    NOT NULL DEFAULT 'ACCEPT' CHECK (policy_input IN ('ACCEPT', 'DROP')),
  policy_output    TEXT    NOT NULL DEFAULT 'ACCEPT' CHECK (policy_output IN ('ACCEPT', 'DROP'))
);
INSERT INTO firewall_conf (id) VALUES (1);
