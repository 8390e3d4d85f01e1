-- DNS resolver settings (spec DnsStatus): one row. Listen addresses and the ACL are not stored: they derive from
-- the WireGuard servers (each server's own address and subnet).
CREATE TABLE dns_settings (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  enabled       INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
  forwarders_1  TEXT    NOT NULL DEFAULT '1.1.1.1',
  forwarders_2  TEXT    NOT NULL DEFAULT '8.8.8.8',    -- '' = none
  max_cache_ttl INTEGER NOT NULL DEFAULT 3600 CHECK (max_cache_ttl BETWEEN 30 AND 3600),
  updated_at    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
INSERT INTO dns_settings (id) VALUES (1);
