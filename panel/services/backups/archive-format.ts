// The archive layout: the file list every archive carries (names, sizes, SHA-256) and the reader's bounds.
import { z } from 'zod';

/** The file list inside every archive; restore checks the archive against it. */
export const FILE_LIST_NAME = 'filelist.json';
/** The store snapshot inside the archive. */
export const DATABASE_NAME = 'panel.db';
/** Folder of the data-plane configuration files (for the operator to read; restore rebuilds the data plane from the store). */
export const DATAPLANE_DIR = 'dataplane/';
/** What `key_check` seals: restore opens it to prove the archive's secrets are sealed with this panel's data key. */
export const KEY_CHECK_PLAIN = 'vpnhost-backup-key-check';
/** Tables holding traffic statistics: emptied in the snapshot unless `statistics=1`. */
export const STATISTICS_TABLES = ['traffic_statistics'] as const;
/** The table never taken from an archive: counters relative to this host's live data plane (migration 010). */
export const BASELINE_TABLE = 'traffic_baseline_sets';

/** One archived file. */
const listedFileSchema = z.object({
  name: z.string().min(1).max(255),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ListedFile = z.infer<typeof listedFileSchema>;

/** Version of the file lists this panel writes: 2 is signed ({@link FileList.signature}); 1 (older releases) is not. */
export const FILE_LIST_VERSION = 2;

/** `filelist.json`. */
export const fileListSchema = z.object({
  format: z.literal('vpnhost-panel-backup'),
  version: z.union([z.literal(1), z.literal(2)]),
  created_at: z.string(),
  panel_version: z.string(),
  statistics: z.boolean(),
  /** Migration versions of the snapshot. */
  schema_versions: z.array(z.number().int()),
  /** `KEY_CHECK_PLAIN` sealed with the data key the archive's secrets are sealed with. */
  key_check: z.string(),
  files: z.array(listedFileSchema).max(100_000),
  /** Version 2: HMAC-SHA256 (hex) of the manifest under a key derived from the data key (archive-signature.ts). */
  signature: z.string().optional(),
});
export type FileList = z.infer<typeof fileListSchema>;

/** Bounds of the archive reader (no zip bomb, no runaway entry count). */
export interface ReaderLimits {
  /** Largest uncompressed entry in bytes. */
  maxEntryBytes: number;
  /** Largest sum of uncompressed entries in bytes. */
  maxTotalBytes: number;
  /** Most entries. */
  maxEntries: number;
  /** Largest file list in bytes. */
  maxFileListBytes: number;
}

/** 2 GiB per entry and 4 GiB in all (a store of 50,000 accounts with a year of statistics is far below). */
export const DEFAULT_LIMITS: ReaderLimits = {
  maxEntryBytes: 2 * 1024 ** 3,
  maxTotalBytes: 4 * 1024 ** 3,
  maxEntries: 20_000,
  maxFileListBytes: 8 * 1024 ** 2,
};

/** Whether an entry name is a plain relative path inside the archive (no absolute path, no `..`, no backslash). */
export function isSafeEntryName(name: string): boolean {
  if (!name || name.length > 255 || name.startsWith('/') || name.includes('\\') || /^[A-Za-z]:/.test(name)) return false;
  if (!/^[A-Za-z0-9._/-]+$/.test(name)) return false;
  return name.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}
