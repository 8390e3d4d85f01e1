// The archive's authentication: the key check (which data key sealed its secrets) and the manifest's HMAC-SHA256.
import { ApiError, E } from '../../http/errors.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import { FILE_LIST_VERSION, KEY_CHECK_PLAIN, type FileList } from './archive-format.ts';

/** Purpose of the key {@link SecretBox.mac} derives from the data key for manifests. */
const MANIFEST_MAC_PURPOSE = 'backup-manifest/1';

/** What signs and verifies manifests: the panel's SecretBox, or one built from a key unwrapped by the passphrase. */
export type ManifestKey = Pick<SecretBox, 'open' | 'mac' | 'verifyMac'>;

/** Detail of the refusal of an unsigned archive (a file list of version 1, made by a release before signatures). */
export const UNSIGNED_DETAIL =
  'the archive is not signed (made by a panel release before archives were signed); if you trust it, sign it with ' +
  '`vpnhost panel backup-key sign --data DIR --archive FILE` and restore again';

/** Detail of the refusal of an archive whose secrets another data key sealed. */
const FOREIGN_KEY_DETAIL =
  'the archive is sealed with another data key (copy secret.key of the panel that made it into the data directory, ' +
  'or use `vpnhost panel backup-key restore` with its backup passphrase)';

/**
 * The bytes the signature covers: every field of the file list but the signature, and each listed file as
 * `[name, size, sha256]` in list order, as one JSON array (no field can be moved into another unnoticed).
 */
function manifestText(list: FileList): string {
  return JSON.stringify([
    'vpnhost-panel-backup-manifest', list.format, list.version, list.created_at, list.panel_version, list.statistics,
    list.schema_versions, list.key_check, list.files.map((f) => [f.name, f.size, f.sha256]),
  ]);
}

/** `list` as version {@link FILE_LIST_VERSION} with its signature under `key`. */
export function signFileList(list: FileList, key: ManifestKey): FileList {
  const unsigned: FileList = { ...list, version: FILE_LIST_VERSION, signature: undefined };
  return { ...unsigned, signature: key.mac(MANIFEST_MAC_PURPOSE, manifestText(unsigned)) };
}

/** Whether the key check of `list` opens with `key` (the archive's secrets are sealed with that data key). */
export function keyCheckOpens(list: FileList, key: ManifestKey): boolean {
  try {
    return key.open(list.key_check) === KEY_CHECK_PLAIN;
  } catch {
    return false;
  }
}

/** `valid`, `unsigned` (a version-1 list) or `mismatch` (a signature that does not verify, or a version 2 without one). */
export function signatureVerdict(list: FileList, key: ManifestKey): 'valid' | 'unsigned' | 'mismatch' {
  if (list.version === 1 && list.signature === undefined) return 'unsigned';
  if (list.version !== FILE_LIST_VERSION || list.signature === undefined) return 'mismatch';
  return key.verifyMac(MANIFEST_MAC_PURPOSE, manifestText(list), list.signature) ? 'valid' : 'mismatch';
}

/**
 * Authenticates a file list before anything it names is trusted: the key check must open with `key` (`Error backup
 * reader: the archive is sealed with another data key ...`), then the signature must verify (`Mismatch between
 * files in archive and list of files`). An unsigned list (older release) is refused (`Error backup reader: the
 * archive is not signed ...`) unless `allowUnsigned`. Throws an ApiError with the spec's text.
 */
export function authenticateFileList(list: FileList, key: ManifestKey, opts: { allowUnsigned?: boolean } = {}): 'valid' | 'unsigned' {
  if (!keyCheckOpens(list, key)) throw new ApiError(E.BACKUP_READER, FOREIGN_KEY_DETAIL);
  const verdict = signatureVerdict(list, key);
  if (verdict === 'mismatch') throw new ApiError(E.BACKUP_FILE_MISMATCH);
  if (verdict === 'unsigned' && !opts.allowUnsigned) throw new ApiError(E.BACKUP_READER, UNSIGNED_DETAIL);
  return verdict;
}

/** `filelist.json` text of a list. */
export function fileListText(list: FileList): string {
  return `${JSON.stringify(list, null, 2)}\n`;
}
