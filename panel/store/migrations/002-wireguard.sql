-- WireGuard servers and their accounts (peers): the desired state the data plane is made to match.

CREATE TABLE wireguard_servers (
  id                 INTEGER PRIMARY KEY,
  name               TEXT    NOT NULL UNIQUE,
  interface_name     TEXT    NOT NULL UNIQUE,
  listen_port        INTEGER NOT NULL UNIQUE,
  -- server address in its subnet as CIDR, and the subnet's first/last address as unsigned 32-bit numbers
  address            TEXT    NOT NULL,
  net_first          INTEGER NOT NULL,
  net_last           INTEGER NOT NULL,
  external_ip        TEXT    NOT NULL,
  -- egress interface for NAT found by the default-route probe; NULL means any
  external_interface TEXT,
  endpoint           TEXT    NOT NULL DEFAULT '',
  dns_1              TEXT    NOT NULL,
  dns_2              TEXT    NOT NULL,
  internal_traffic   INTEGER NOT NULL DEFAULT 0,
  keep_alive         INTEGER NOT NULL DEFAULT 0,
  mtu                INTEGER NOT NULL DEFAULT 0,
  allowed_ips        TEXT    NOT NULL,
  b_download         INTEGER NOT NULL DEFAULT 0,
  b_upload           INTEGER NOT NULL DEFAULT 0,
  ikev2              INTEGER NOT NULL DEFAULT 0,
  ipv6               INTEGER NOT NULL DEFAULT 0,
  address_ipv6       TEXT    NOT NULL DEFAULT '',
  dns_1_ipv6         TEXT    NOT NULL DEFAULT '',
  dns_2_ipv6         TEXT    NOT NULL DEFAULT '',
  -- sealed with SecretBox
  private_key        TEXT    NOT NULL,
  public_key         TEXT    NOT NULL UNIQUE,
  created_at         TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX wireguard_servers_net ON wireguard_servers (net_first, net_last);

CREATE TABLE accounts (
  id               INTEGER PRIMARY KEY,
  name             TEXT    NOT NULL UNIQUE,
  username         TEXT    NOT NULL UNIQUE,
  -- sealed with SecretBox
  password         TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('enable', 'disable')),
  server_id        INTEGER NOT NULL REFERENCES wireguard_servers (id) ON DELETE RESTRICT,
  -- peer IPv4 address (allowed_IPs) as an unsigned 32-bit number; server subnets never overlap, so unique overall
  ip               INTEGER NOT NULL UNIQUE,
  -- optional peer IPv6 address as CIDR, NULL when none
  allowed_ips_ipv6 TEXT,
  b_download       INTEGER NOT NULL DEFAULT 0,
  b_upload         INTEGER NOT NULL DEFAULT 0,
  mangle           INTEGER NOT NULL UNIQUE,
  -- sealed with SecretBox; '' when the client brought only its public key
  private_key      TEXT    NOT NULL,
  public_key       TEXT    NOT NULL UNIQUE,
  created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX accounts_server_ip ON accounts (server_id, ip);
CREATE UNIQUE INDEX accounts_ipv6 ON accounts (allowed_ips_ipv6) WHERE allowed_ips_ipv6 IS NOT NULL;

-- Counters kept O(1): the account count (license limit) and the sequence behind mangle marks and generated names.
CREATE TABLE wireguard_counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO wireguard_counters (name, value) VALUES ('accounts', 0), ('account_seq', 0);

CREATE TRIGGER accounts_count_insert AFTER INSERT ON accounts
BEGIN
  UPDATE wireguard_counters SET value = value + 1 WHERE name = 'accounts';
END;
CREATE TRIGGER accounts_count_delete AFTER DELETE ON accounts
BEGIN
  UPDATE wireguard_counters SET value = value - 1 WHERE name = 'accounts';
END;
