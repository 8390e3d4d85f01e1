// `vpnhost panel backup-key`: set or remove the backup passphrase, and unlock an archive's data key on a new machine.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS } from '../services/backups/archive-format.ts';
import { extractArchive, extractedPath } from '../services/backups/archive-reader.ts';
import { authenticateFileList, keyCheckOpens, signatureVerdict, signFileList } from '../services/backups/archive-signature.ts';
import { zipEntries } from '../services/backups/archive-writer.ts';
import { isValidBackupName } from '../services/backups/backup-folder.ts';
import {
  BACKUP_KEY_FILE, DATA_KEY_FILE, MIN_PASSPHRASE_LENGTH, unwrapDataKey, wrapDataKey, wrappedKeySchema,
} from '../services/backups/backup-key.ts';
import type { FileList } from '../services/backups/archive-format.ts';
import { SecretBox } from '../../shared/secret-box.ts';

export const BACKUP_KEY_HELP = `usage: vpnhost panel backup-key <set|remove|restore|sign> --data DIR [options]

Secrets in the panel store (private keys, the FTP password, ...) are sealed with the data key <DIR>/${DATA_KEY_FILE}, and
stay sealed inside backup archives. To open an archive on another machine, either copy ${DATA_KEY_FILE} there yourself,
or set a backup passphrase: every archive then also carries the data key wrapped by it (scrypt + AES-256-GCM).

  set      --data DIR --passphrase-file FILE   wrap the data key with the passphrase (first line of FILE, '-' = stdin;
                                               at least ${MIN_PASSPHRASE_LENGTH} characters); archives made from now on carry it
  remove   --data DIR                          archives made from now on carry no wrapped key
  restore  --data NEWDIR --archive ZIP --passphrase-file FILE
           verifies the archive, unwraps its data key into NEWDIR/${DATA_KEY_FILE} and copies the archive into
           NEWDIR/backups/; then start \`vpnhost panel serve --data NEWDIR\` and call PUT /api/v1/backups/restore
           with backup_name=<the archive's name>. NEWDIR must be new (or already hold that same key). The archive's
           signature is verified with the unwrapped key before anything is written.
  sign     --data DIR --archive ZIP
           vouch for an archive made by a release before archives were signed (restore refuses those): verifies
           its file list, sizes, SHA-256 and that DIR's data key sealed it, then writes it signed with that key as
           DIR/backups/<its name>. Only for archives you know to be yours: the signature is what tells an edited
           archive from a genuine one.

Exit code 0 when done, 1 on failure (the reason on stderr).
`;

function readPassphrase(file: string | undefined): string {
  if (!file) throw new Error('--passphrase-file is required');
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line.length < MIN_PASSPHRASE_LENGTH) throw new Error(`the passphrase must have at least ${MIN_PASSPHRASE_LENGTH} characters`);
  return line;
}

function readDataKey(dataDir: string): Buffer {
  const key = readFileSync(join(dataDir, DATA_KEY_FILE));
  if (key.length !== 32) throw new Error(`${DATA_KEY_FILE} must hold 32 bytes`);
  return key;
}

/** Unwraps the archive's key into `dataDir` and copies the archive into its backups folder; returns the archive name. */
async function restoreKey(dataDir: string, archive: string, passphrase: string): Promise<string> {
  const name = basename(archive);
  if (!isValidBackupName(name)) throw new Error(`archive name '${name}' is not a valid backup name (letters, digits, _ . -, ending in .zip)`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const work = join(dataDir, `.backup-key-${process.pid}`);
  try {
    const extracted = await extractArchive(archive, work, DEFAULT_LIMITS);
    if (!extracted.list.files.some((f) => f.name === BACKUP_KEY_FILE)) {
      throw new Error(`the archive carries no ${BACKUP_KEY_FILE} (no passphrase was set when it was made): copy ${DATA_KEY_FILE} of the old machine instead`);
    }
    const wrapped = wrappedKeySchema.parse(JSON.parse(readFileSync(extractedPath(extracted, BACKUP_KEY_FILE), 'utf8')));
    const key = unwrapDataKey(wrapped, passphrase);
    const verdict = authenticate(extracted.list, SecretBox.fromKey(key), true);
    if (verdict === 'unsigned') {
      process.stderr.write('warning: the archive is not signed (made by a release before signatures): restore refuses it until you sign it ' +
        `with \`vpnhost panel backup-key sign --data ${dataDir} --archive ${join(dataDir, 'backups', name)}\`\n`);
    }
    const keyPath = join(dataDir, DATA_KEY_FILE);
    if (existsSync(keyPath)) {
      if (!readFileSync(keyPath).equals(key)) throw new Error(`${keyPath} exists with another key: use a new data directory`);
    } else {
      writeFileSync(keyPath, key, { mode: 0o600, flag: 'wx' });
    }
    writeFileSync(join(dataDir, BACKUP_KEY_FILE), readFileSync(extractedPath(extracted, BACKUP_KEY_FILE)), { mode: 0o600 });
    mkdirSync(join(dataDir, 'backups'), { recursive: true, mode: 0o700 });
    copyFileSync(archive, join(dataDir, 'backups', name));
    return name;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** {@link authenticateFileList} with its refusal as a plain error (the CLI prints the message). */
function authenticate(list: FileList, box: SecretBox, allowUnsigned: boolean): 'valid' | 'unsigned' {
  try {
    return authenticateFileList(list, box, { allowUnsigned });
  } catch (err) {
    throw new Error(`archive refused: ${(err as Error).message}`);
  }
}

/** Signs an unsigned (older release's) archive with the data key of `dataDir`; returns its path in the backups folder. */
async function signArchive(dataDir: string, archive: string): Promise<string> {
  const name = basename(archive);
  if (!isValidBackupName(name)) throw new Error(`archive name '${name}' is not a valid backup name (letters, digits, _ . -, ending in .zip)`);
  const box = SecretBox.fromKey(readDataKey(dataDir));
  const work = join(dataDir, `.backup-sign-${process.pid}`);
  const target = join(dataDir, 'backups', name);
  try {
    const extracted = await extractArchive(archive, work, DEFAULT_LIMITS);
    if (!keyCheckOpens(extracted.list, box)) throw new Error(`the archive is sealed with another data key than ${join(dataDir, DATA_KEY_FILE)}`);
    const verdict = signatureVerdict(extracted.list, box);
    if (verdict === 'mismatch') throw new Error('the archive carries a signature that does not verify: it was changed after it was made; not signing it');
    mkdirSync(join(dataDir, 'backups'), { recursive: true, mode: 0o700 });
    if (verdict === 'valid') {
      if (resolve(archive) !== resolve(target)) copyFileSync(archive, target);
      return target;
    }
    const entries = extracted.list.files.map((f) => ({ name: f.name, path: extractedPath(extracted, f.name) }));
    const made = new Date(extracted.list.created_at);
    await zipEntries(`${target}.part`, signFileList(extracted.list, box), entries, Number.isNaN(made.getTime()) ? new Date() : made);
    renameSync(`${target}.part`, target);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(`${target}.part`, { force: true });
  }
}

/** Runs `vpnhost panel backup-key ...`; resolves to the exit code. */
export async function backupKeyCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { data: { type: 'string' }, archive: { type: 'string' }, 'passphrase-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help || !action || action === 'help' || action === '--help' || action === '-h') {
    process.stdout.write(BACKUP_KEY_HELP);
    return action ? 0 : 2;
  }
  try {
    if (!values.data) throw new Error('--data is required');
    if (action === 'set') {
      const wrapped = wrapDataKey(readDataKey(values.data), readPassphrase(values['passphrase-file']));
      writeFileSync(join(values.data, BACKUP_KEY_FILE), `${JSON.stringify(wrapped, null, 2)}\n`, { mode: 0o600 });
      process.stdout.write(`backup passphrase set: archives made from now on carry the data key wrapped by it (${BACKUP_KEY_FILE})\n`);
    } else if (action === 'remove') {
      rmSync(join(values.data, BACKUP_KEY_FILE), { force: true });
      process.stdout.write('backup passphrase removed: archives made from now on carry no wrapped key\n');
    } else if (action === 'restore') {
      if (!values.archive) throw new Error('--archive is required');
      const name = await restoreKey(values.data, values.archive, readPassphrase(values['passphrase-file']));
      process.stdout.write(`data key restored into ${join(values.data, DATA_KEY_FILE)}; archive copied as backups/${name}\n` +
        `next: vpnhost panel serve --data ${values.data} ..., then PUT /api/v1/backups/restore backup_name=${name}\n`);
    } else if (action === 'sign') {
      if (!values.archive) throw new Error('--archive is required');
      const target = await signArchive(values.data, values.archive);
      process.stdout.write(`archive signed with the data key of ${values.data}: ${target}\n`);
    } else {
      throw new Error(`unknown action '${action}'`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`vpnhost panel backup-key: ${(err as Error).message}\n`);
    return 1;
  }
}
