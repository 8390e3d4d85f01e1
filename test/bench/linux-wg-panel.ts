// Bench fixture: an in-process panel app whose WireGuard seam is the real LinuxDriver (wireguard-go), filled with N peers.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../panel/app.ts';
import { createSimulatedDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { LinuxDriver } from '../../panel/dataplane/wireguard/linux/linux-driver.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { openDatabase, type Db } from '../../panel/store/db.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { createNamespace, destroyNamespace } from '../helpers/netns.ts';
import { ROOT } from '../helpers/panel-process.ts';
import { hasTool, isRoot } from '../helpers/require-tools.ts';
import { fmt } from './bench-math.ts';

/** The panel of {@link linuxWgPanel} and what the benches read around it. */
export interface LinuxWgPanel {
  app: FastifyInstance;
  db: Db;
  /** The server's interface (wireguard-go) and its UDP port and public key. */
  iface: string;
  listenPort: number;
  serverPublicKey: string;
  /** The access hash cookie for 127.0.0.1. */
  cookie: string;
  driver: LinuxDriver;
  /** The runner the driver uses (a long timeout: `wg addconf` of 50,000 peers takes minutes). */
  run: ExecaRunner;
  repo: AccountsRepository;
  /** The peers' public keys; account `a<i>` holds `keys[i]` at {@link peerIp}(i). */
  keys: string[];
  /** Ends the app, deletes the interface, closes the store. */
  close(): Promise<void>;
}

/** The number of peer `i`'s address in 10.64.0.0/10 (the server holds 10.64.0.1). */
export const peerIpNumber = (i: number): number => ((10 << 24) | (64 << 16)) + 2 + i;
/** Peer `i`'s address as text. */
export const peerIp = (i: number): string => {
  const v = peerIpNumber(i);
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
};

/**
 * A panel app (buildApp, Fastify, a SQLite file in `dir`) whose WireGuard seam is the real LinuxDriver; firewall,
 * shaping, IPsec and DNS are the twins. A server made through POST /wireguard (10.64.0.1/10), `keys.length` peers
 * added with one `wg addconf` (random keys unless given) and as many enabled accounts `a<i>` written through the
 * repository. Run it inside a namespace of the bench's own.
 */
export async function linuxWgPanel(dir: string, n: number, keys?: string[]): Promise<LinuxWgPanel> {
  const run = new ExecaRunner({ timeoutMs: 30 * 60_000 });
  const driver = new LinuxDriver({ runner: run, stateDir: join(dir, 'state'), wireguard: 'userspace' });
  const db = openDatabase(join(dir, 'panel.db'));
  const box = SecretBox.open(dir);
  const app = buildApp({
    db, dataplane: createSimulatedDataplane({ wireguard: driver }), dataDir: dir, secretBox: box, baseUrl: 'http://127.0.0.1',
    version: 'bench', timeZone: 'UTC',
  });
  await app.ready();
  const { hash } = app.services.accessHashes.create('127.0.0.1');
  const cookie = `access_hash=${hash}`;
  const created = await app.inject({
    method: 'POST', url: '/api/v1/wireguard', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ name: 'bench', address: '10.64.0.1/10' }).toString(),
  });
  const server = created.json().msg as { interface_name: string; listen_port: string; public_key: string };
  if (!server?.interface_name) throw new Error(`POST /wireguard: ${created.body}`);
  const iface = server.interface_name;
  const peerKeys = keys ?? Array.from({ length: n }, () => randomBytes(32).toString('base64'));
  const file = join(dir, `${iface}.conf`);
  writeFileSync(file, peerKeys.map((k, i) => `[Peer]\nPublicKey = ${k}\nAllowedIPs = ${peerIp(i)}/32\n`).join(''), { mode: 0o600 });
  const t = performance.now();
  await run.run('wg', ['addconf', iface, file]);
  process.stdout.write(`${n} peers: wg addconf ${fmt((performance.now() - t) / 1000)} s\n`);
  const repo = new AccountsRepository(db);
  const serverId = (db.prepare('SELECT id FROM wireguard_servers').get() as { id: number }).id;
  const sealedKey = box.seal(Buffer.alloc(32, 1).toString('base64'));
  db.transaction(() => peerKeys.forEach((k, i) => repo.insert({
    name: `a${i}`, username: `u${i}`, password: box.seal(`password${i}`), status: 'enable', server_id: serverId, ip: peerIpNumber(i),
    allowed_ips_ipv6: null, b_download: 0, b_upload: 0, mangle: 1000 + i, private_key: sealedKey, public_key: k,
  })))();
  repo.forgetCached();
  return {
    app, db, iface, listenPort: Number(server.listen_port), serverPublicKey: server.public_key, cookie, driver, run, repo, keys: peerKeys,
    close: async () => {
      await app.close();
      await run.run('ip', ['link', 'del', iface]).catch(() => undefined);
      db.close();
    },
  };
}

/**
 * The outer half of a bench that runs inside a namespace of its own: checks root and the tools, makes the namespace
 * (loopback up), re-runs this script in it with `--inner` and the given arguments, and removes the namespace.
 */
export async function runInNamespace(script: string, args: string[], tools = ['wg', 'wireguard-go', 'ip']): Promise<number> {
  const missing = tools.filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) {
    process.stderr.write(`bench needs: ${missing.join(', ')}\n`);
    return 2;
  }
  const ns = await createNamespace('vhbs');
  try {
    const child = execa('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', script, '--inner', ...args],
      { cwd: ROOT, stdio: 'inherit', reject: false, timeout: 3 * 60 * 60_000 });
    return (await child).exitCode ?? 1;
  } finally {
    await destroyNamespace(ns);
  }
}
