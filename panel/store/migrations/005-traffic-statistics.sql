-- Daily traffic per account (issue 9): one row per account and local day, plus the last counters seen per peer.
-- Both go with their account (ON DELETE CASCADE). Bytes are WireGuard payload counters from `wg show dump`:
-- download = transfer_tx (bytes the server sent to the peer), upload = transfer_rx (bytes received from it).

CREATE TABLE traffic_statistics (
  account_id       INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  day              TEXT    NOT NULL,           -- YYYY-MM-DD in the panel's time zone
  traffic_download INTEGER NOT NULL DEFAULT 0, -- bytes
  traffic_upload   INTEGER NOT NULL DEFAULT 0, -- bytes
  PRIMARY KEY (account_id, day)
) WITHOUT ROWID;
CREATE INDEX traffic_statistics_day ON traffic_statistics (day);

-- The counters of the last sample per peer; the next sample adds the difference. A missing row means the next
-- counters seen are counted whole (a peer added or re-added since starts at zero).
CREATE TABLE traffic_baselines (
  account_id  INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  public_key  TEXT    NOT NULL,
  rx          INTEGER NOT NULL,
  tx          INTEGER NOT NULL,
  sampled_at  INTEGER NOT NULL                 -- Unix ms of the sample that read these counters
);
