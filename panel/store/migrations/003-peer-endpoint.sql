-- The last endpoint of a suspended peer (`ip:port` from `wg show dump` taken when it was disabled), so enabling it
-- sets the endpoint and lets the server start the handshake at once, also after a panel restart; NULL = unknown.
-- The per-peer firewall mark needs nothing here: `accounts.mangle` is NOT NULL UNIQUE since 002 and allocated at
-- creation from the never-reused account sequence, so every existing account already holds its unique mark.
ALTER TABLE accounts ADD COLUMN last_endpoint TEXT;
