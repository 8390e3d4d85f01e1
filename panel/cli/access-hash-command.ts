// `vpnhost panel access-hash create|list|delete`: manage API access hashes in the panel's database.
import { parseArgs } from 'node:util';
import { AccessHashService } from '../services/access-hashes.ts';
import { canonicalIp } from '../schemas/ip.ts';
import { databasePath, openDatabase } from '../store/db.ts';
import { AccessHashRepository } from '../store/repositories/access-hashes.ts';
import { defaultDataDir } from './serve-options.ts';

const ACCESS_HASH_HELP = `usage:
  vpnhost panel access-hash create --ip IP [--comment TEXT] [--data DIR]   prints the new hash (shown only once)
  vpnhost panel access-hash list [--json] [--data DIR]                     id, ip, created, comment (never the hash)
  vpnhost panel access-hash delete ID [--data DIR]

  --data DIR   data directory (VPNHOST_PANEL_DATA, default ./data/panel)
A running panel sees every change at once.
`;

function withService<T>(dataDir: string, fn: (service: AccessHashService) => T): T {
  const db = openDatabase(databasePath(dataDir));
  try {
    return fn(new AccessHashService(new AccessHashRepository(db)));
  } finally {
    db.close();
  }
}

/** Runs `access-hash <verb> ...`; resolves to the exit code. */
export async function accessHashCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h') {
    process.stdout.write(ACCESS_HASH_HELP);
    return verb ? 0 : 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      ip: { type: 'string' },
      comment: { type: 'string' },
      data: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(ACCESS_HASH_HELP);
    return 0;
  }
  const dataDir = values.data ?? defaultDataDir();
  switch (verb) {
    case 'create': {
      if (!values.ip || !canonicalIp(values.ip)) {
        process.stderr.write('access-hash create: --ip must be an IPv4 or IPv6 address\n');
        return 2;
      }
      const created = withService(dataDir, (s) => s.create(values.ip as string, values.comment ?? ''));
      process.stdout.write(`${created.hash}\n`);
      process.stderr.write(`access hash ${created.id} created for ${created.ip}; it is shown only this once\n`);
      return 0;
    }
    case 'list': {
      const rows = withService(dataDir, (s) => s.list());
      if (values.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return 0;
      }
      const lines = [['ID', 'IP', 'CREATED', 'COMMENT'], ...rows.map((r) => [String(r.id), r.ip, r.created_at, r.comment])];
      const widths = [0, 1, 2].map((i) => Math.max(...lines.map((l) => l[i].length)));
      for (const line of lines) process.stdout.write(`${line.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell)).join('  ')}\n`);
      return 0;
    }
    case 'delete': {
      const id = positionals[0];
      if (!id || !/^\d+$/.test(id)) {
        process.stderr.write('access-hash delete: give the numeric ID (see `access-hash list`)\n');
        return 2;
      }
      const deleted = withService(dataDir, (s) => s.delete(Number(id)));
      if (!deleted) {
        process.stderr.write(`access-hash delete: no access hash with id ${id}\n`);
        return 1;
      }
      process.stderr.write(`access hash ${id} deleted\n`);
      return 0;
    }
    default:
      process.stderr.write(`access-hash: unknown verb '${verb}'\n\n${ACCESS_HASH_HELP}`);
      return 2;
  }
}
