// `vpnhost panel backup-key`: set or remove the backup passphrase, and unlock an archive's data key on a new machine.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS, FILE_LIST_NAME, KEY_CHECK_PLAIN } from '../services/backups/archive-format.ts';
import { extractArchive, extractedPath } from '../services/backups/archive-reader.ts';
import { isValidBackupName } from '../services/backups/backup-folder.ts';
import {
  BACKUP_KEY_FILE, DATA_KEY_FILE, MIN_PASSPHRASE_LENGTH, unwrapDataKey, wrapDataKey, wrappedKeySchema,
} from '../services/backups/backup-key.ts';
import { SecretBox } from '../shared/secret-box.ts';

export const BACKUP_KEY_HELP = `usage: vpnhost panel backup-key <set|remove|restore> --data DIR [options]

Secrets in the panel store (private keys, the FTP password, ...) are sealed with the data key <DIR>/${DATA_KEY_FILE}, and
stay sealed inside backup archives. To open an archive on another machine, either copy ${DATA_KEY_FILE} there yourself,
or set a backup passphrase: every archive then also carries the data key wrapped by it (scrypt + AES-256-GCM).

  set      --data DIR --passphrase-file FILE   wrap the data key with the passphrase (first line of FILE, '-' = stdin;
                                               at least ${MIN_PASSPHRASE_LENGTH} characters); archives made from now on carry it
  remove   --data DIR                          archives made from now on carry no wrapped key
  restore  --data NEWDIR --archive ZIP --passphrase-file FILE
           verifies the archive, unwraps its data key into NEWDIR/${DATA_KEY_FILE} and copies the archive into
           NEWDIR/backups/; then start \`vpnhost panel serve --data NEWDIR\` and call PUT /api/v1/backups/restore
           with backup_name=<the archive's name>. NEWDIR must be new (or already hold that same key).

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
    if (SecretBox.fromKey(key).open(extracted.list.key_check) !== KEY_CHECK_PLAIN) throw new Error(`the wrapped key does not open ${FILE_LIST_NAME}'s key check`);
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
    } else {
      throw new Error(`unknown action '${action}'`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`vpnhost panel backup-key: ${(err as Error).message}\n`);
    return 1;
  }
}
