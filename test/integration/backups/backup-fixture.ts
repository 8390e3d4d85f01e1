// Test fixture for backups: a panel (simulated data plane, manual clock, recording FTP twin) and a filled store.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { backupKeyCommand } from '../../../panel/cli/backup-key-command.ts';
import type { FileList } from '../../../panel/services/backups/archive-format.ts';
import { signFileList, type ManifestKey } from '../../../panel/services/backups/archive-signature.ts';
import type { FtpTarget, FtpUploader } from '../../../panel/services/backups/ftp-upload.ts';
import { manualClock } from '../../../shared/clock.ts';
import { makePanel, type PanelOptions, type TestPanel } from '../wireguard/panel-fixture.ts';
import type { RawEntry } from './raw-zip.ts';

/** An FTP twin keeping uploaded files in memory; `fail` makes the next calls throw like a refused login. */
export class MemoryFtp implements FtpUploader {
  readonly files = new Map<string, Buffer>();
  fail: string | null = null;
  targets: FtpTarget[] = [];

  async upload(target: FtpTarget, localPath: string): Promise<void> {
    this.targets.push(target);
    if (this.fail) throw new Error(this.fail);
    this.files.set(localPath.split('/').pop()!, readFileSync(localPath));
  }

  async prune(_target: FtpTarget, keep: number): Promise<string[]> {
    const names = [...this.files.keys()].sort();
    const removed = names.slice(0, Math.max(0, names.length - keep));
    for (const n of removed) this.files.delete(n);
    return removed;
  }
}

/** A backup test panel. */
export interface BackupPanel extends TestPanel {
  clock: ReturnType<typeof manualClock>;
  ftp: MemoryFtp;
}

/** A panel at 2026-03-15 12:00 UTC with the FTP twin. */
export async function makeBackupPanel(opts: PanelOptions = {}): Promise<BackupPanel> {
  const clock = manualClock(new Date('2026-03-15T12:00:00Z'));
  const ftp = new MemoryFtp();
  const p = await makePanel({
    clock, licenseAccounts: 100, ...opts,
    deps: { timeZone: 'UTC', backups: { ftp, ...opts.deps?.backups }, ...opts.deps },
  });
  return Object.assign(p, { clock, ftp });
}

/** Servers, accounts (one disabled), forwards, filter rules, settings and two days of statistics. */
export async function fillStore(p: BackupPanel): Promise<void> {
  const srv = await p.ok('POST', '/wireguard', { name: 'srv', address: '10.0.1.1/24', external_ip: '192.0.2.10' });
  await p.ok('POST', '/wireguard', { name: 'two', address: '10.0.2.1/24', external_ip: '192.0.2.20', mtu: '1380' });
  const alice = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice', b_download: '20' });
  await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'bob', status: 'disable' });
  await p.ok('POST', '/account', { wg_name: 'two', allowed_IPs: '10.0.2.2', name: 'carol' });
  await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'alice', to_port: '80' });
  await p.ok('POST', '/wireguard/two/port_forward', { dst_port: '5353', protocol: 'udp', to_peer: 'carol', to_port: '53' });
  await p.ok('POST', '/firewall/rules/filter/end', {
    name: 'ssh', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '198.51.100.0/24', d_ip: '', s_port: '', d_port: '22',
  });
  await p.ok('PUT', '/system/config', { traffic_statistics_history: '400', wireguard_handshake_uptime: '120' });
  const iface = srv.interface_name as string;
  p.driver.simulateHandshake(iface, alice.public_key, { endpoint: '192.0.2.7:5000', rx: 1_000, tx: 50_000 });
  await p.app.services.statistics.sampler.sample();
  p.clock.advance(86_400_000);
  p.driver.simulateHandshake(iface, alice.public_key, { endpoint: '192.0.2.7:5000', rx: 3_000, tx: 90_000 });
  await p.app.services.statistics.sampler.sample();
}

/** Every API answer a restore must bring back (names are of the filled store). */
export async function snapshotAnswers(p: TestPanel): Promise<Record<string, unknown>> {
  const paths = [
    '/wireguard', '/wireguard/srv', '/wireguard/two', '/account', '/account/alice', '/account/bob', '/account/carol',
    '/wireguard/srv/peers', '/wireguard/two/peers', '/wireguard/srv/port_forward', '/wireguard/two/port_forward',
    '/firewall/rules/filter', '/firewall/conf', '/system/config', '/account/alice/config_text', '/account/carol/config_text',
    '/account/alice/traffic_statistics/2026/3', '/account/carol/traffic_statistics/2026/3', '/backups/config', '/traffic_logging',
  ];
  const out: Record<string, unknown> = {};
  for (const path of paths) out[path] = (await p.call('GET', path)).body;
  out['count_accounts'] = (await p.ok('GET', '/system/status')).count_accounts;
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Rewrites filelist.json so its sizes and hashes describe `entries` (the list stays consistent), after `edit`. The
 * signature is left as it was (what an attacker without the data key can do) unless `signWith` re-signs it (what
 * only the holder of the data key can do: the tests of deeper checks).
 */
export function relist(entries: RawEntry[], edit: (list: any) => void = () => undefined, signWith?: ManifestKey): RawEntry[] {
  const others = entries.filter((e) => e.name !== 'filelist.json');
  let list = JSON.parse(entries.find((e) => e.name === 'filelist.json')!.data.toString('utf8'));
  list.files = others.map((e) => ({ name: e.name, size: e.data.length, sha256: sha(e.data) }));
  edit(list);
  if (signWith) list = signFileList(list as FileList, signWith);
  return [{ name: 'filelist.json', data: Buffer.from(JSON.stringify(list)) }, ...others];
}

/** Runs `vpnhost panel backup-key ...` with stdout/stderr captured; returns exit code and output. */
export async function runBackupKey(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const write = (chunk: unknown) => {
    out += String(chunk);
    return true;
  };
  const [o, e] = [process.stdout.write, process.stderr.write];
  process.stdout.write = write as typeof process.stdout.write;
  process.stderr.write = write as typeof process.stderr.write;
  try {
    return { code: await backupKeyCommand(args), out };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

/** The entries of an archive whose panel.db `edit` changed, relisted (see {@link relist}: signed only with `signWith`). */
export function editArchiveDb(
  dir: string,
  entries: RawEntry[],
  edit: (db: Database.Database) => void,
  signWith?: ManifestKey,
): RawEntry[] {
  const path = join(dir, `edit-${randomBytes(4).toString('hex')}.db`);
  try {
    writeFileSync(path, entries.find((e) => e.name === 'panel.db')!.data);
    const db = new Database(path);
    try {
      edit(db);
    } finally {
      db.close();
    }
    const data = readFileSync(path);
    return relist(entries.map((e) => (e.name === 'panel.db' ? { ...e, data } : e)), undefined, signWith);
  } finally {
    rmSync(path, { force: true });
  }
}
