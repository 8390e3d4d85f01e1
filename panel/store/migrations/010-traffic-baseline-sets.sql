-- Traffic baselines as one packed blob per source (the sampler redesign of issue 9): `wg:<interface>` holds the
-- counters of every peer of that interface as the last sample read them, `ikev2` those of every live IKE SA. A sample
-- rewrites the blobs of the sources it read and adds the day rows of the peers whose counters moved, in one
-- transaction. The blob format is the sampler's (panel/services/statistics/baseline-set.ts).
CREATE TABLE traffic_baseline_sets (
  source     TEXT    PRIMARY KEY,
  sampled_at INTEGER NOT NULL,                 -- Unix ms of the sample that read these counters
  data       BLOB    NOT NULL
);

-- The per-account rows of 005 are renamed here and carried over once by the repository (TrafficStatisticsRepository
-- packs them per interface, then drops the table, in one transaction), so an upgrade neither loses nor re-counts the
-- traffic since the old panel's last sample.
ALTER TABLE traffic_baselines RENAME TO traffic_baselines_legacy;

-- Day rows keyed by (day, account_id): a sample updates the rows of one day, which now sit together (half the time of
-- the per-account order at 50,000 accounts); the month query per account reads through the (account_id, day) index,
-- which also serves the ON DELETE CASCADE. Pruning by day walks the primary key.
CREATE TABLE traffic_statistics_by_day (
  account_id       INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  day              TEXT    NOT NULL,           -- YYYY-MM-DD in the panel's time zone
  traffic_download INTEGER NOT NULL DEFAULT 0, -- bytes
  traffic_upload   INTEGER NOT NULL DEFAULT 0, -- bytes
  PRIMARY KEY (day, account_id)
) WITHOUT ROWID;
INSERT INTO traffic_statistics_by_day (account_id, day, traffic_download, traffic_upload)
  SELECT account_id, day, traffic_download, traffic_upload FROM traffic_statistics;
DROP TABLE traffic_statistics;
ALTER TABLE traffic_statistics_by_day RENAME TO traffic_statistics;
CREATE INDEX traffic_statistics_account ON traffic_statistics (account_id, day);
