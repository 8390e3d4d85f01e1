// Bench (not a test): POST/PUT/DELETE /account with shaping and marks at N shaped peers vs the raw tc floor, and
// set_bandwidth (DataplaneSync.applyServerBandwidth) of 10,000 peers.
//
// Run as root: `node --import tsx test/bench/panel-policy.ts [--sizes 1000,10000] [--samples 20] [--bulk 10000]`.
// For each size a fresh network namespace holds the whole linux data plane (wireguard-go, iptables + ipset, tc); the
// app is built in-process with `buildApp` (requests through `inject`, no sockets) on a temp SQLite store. The store
// is filled directly (N accounts with b_download 8 / b_upload 4 on one /16 server), then one reconcile installs
// every peer, mark and class (timed). Then, interleaved so both see the same machine: the median of one
// `POST /account` (wg set + ipset restore + tc batch), one `PUT` rate change (tc only), one `DELETE`, and the raw
// floor — `tc class add` + `tc filter add` of one peer in the same tree (two tc runs, one direction). Last, the
// server's values written to min(N, bulk) accounts and pushed with one batched apply (what set_bandwidth does).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../../panel/app.ts';
import { createDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { fixedRouteProbe } from '../../panel/dataplane/default-route.ts';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { GROUP_MAJORS } from '../../panel/dataplane/render/tc-layout.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { ServersRepository } from '../../panel/store/repositories/servers.ts';
import { openDatabase } from '../../panel/store/db.ts';
import { issueLicenseKey } from '../../panel/services/license-key.ts';
import { generateKeyPairSync } from 'node:crypto';
import { createNamespace, destroyNamespace, execIn } from '../helpers/netns.ts';
import { benchNeeds, fmt as fmtDigits, median } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    samples: { type: 'string', default: '20' },
    bulk: { type: 'string', default: '10000' },
  },
  strict: true,
});
const SIZES = args.sizes!.split(',').map(Number);
const SAMPLES = Number(args.samples);
const BULK = Number(args.bulk);

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
/** Host `i` (0-based) of 10.91.0.0/16, skipping .0/.255 of each /24 and the server's .1. */
const host = (i: number) => {
  const n = i + 2;
  return { third: Math.floor(n / 254), fourth: (n % 254) + 1 };
};
const hostIp = (i: number) => `10.91.${host(i).third}.${host(i).fourth}`;

interface Row {
  size: number;
  fillMs: number;
  post: number;
  put: number;
  del: number;
  raw: number;
  bulkPeers: number;
  bulkMs: number;
}

const fmt = (n: number, digits = 2) => fmtDigits(n, digits);

async function measure(size: number): Promise<Row> {
  const ns = await createNamespace('vhpb');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-policy-'));
  const vendor = generateKeyPairSync('ed25519');
  try {
    await execIn(ns, 'ip', ['link', 'add', 'vbp0', 'type', 'veth', 'peer', 'name', 'vbp1']);
    await execIn(ns, 'ip', ['addr', 'add', '192.0.2.1/24', 'dev', 'vbp0']);
    await execIn(ns, 'ip', ['link', 'set', 'vbp0', 'up']);
    const runner = new ExecaRunner({ netns: ns, timeoutMs: 1_800_000 });
    const dataplane = await createDataplane({ kind: 'linux', dataDir: dir, wireguard: 'userspace', runner, apiPort: null });
    const db = openDatabase(join(dir, 'panel.db'));
    const box = SecretBox.open(dir);
    const app = buildApp({
      db, dataplane, dataDir: dir, secretBox: box, baseUrl: 'http://bench', version: 'bench',
      licensePublicKey: vendor.publicKey, routeProbe: fixedRouteProbe({ address: '192.0.2.1', interface: 'vbp0' }),
    });
    await app.ready();
    app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: size + SAMPLES + 100, expires: new Date(Date.now() + 86400_000) }));
    const cookie = `access_hash=${app.services.accessHashes.create('127.0.0.1').hash}`;
    const call = async (method: 'POST' | 'PUT' | 'DELETE', url: string, form?: Record<string, string>) => {
      const res = await app.inject({
        method, url: `/api/v1${url}`, headers: { cookie, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        payload: form ? new URLSearchParams(form).toString() : undefined,
      });
      const body = res.json() as { status: string; error: string };
      if (body.status !== 'success') throw new Error(`${method} ${url}: ${body.error}`);
    };
    const iface = `wg${Math.floor(Math.random() * 900000) + 100000}`;
    await call('POST', '/wireguard', { name: 'bench', interface_name: iface, address: '10.91.0.1/16', external_ip: '192.0.2.1', listen_port: '52999' });
    const server = new ServersRepository(db).get('bench')!;
    const accounts = new AccountsRepository(db);
    const password = box.seal('benchpassword12');
    db.transaction(() => {
      for (let i = 0; i < size; i++) {
        const ip = host(i);
        accounts.create((seq) => ({
          name: `b${i}`, username: `bu${i}`, password, status: 'enable', server_id: server.id,
          ip: (((10 << 24) | (91 << 16) | (ip.third << 8) | ip.fourth) >>> 0), allowed_ips_ipv6: null,
          b_download: 8, b_upload: 4, mangle: seq, private_key: '', public_key: generateKeyPair().publicKey,
        }));
      }
    })();
    let start = process.hrtime.bigint();
    await app.services.dataplaneSync.reconcileAll();
    const fillMs = since(start);
    const post: number[] = [];
    const put: number[] = [];
    const del: number[] = [];
    const raw: number[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      const ip = hostIp(size + k);
      start = process.hrtime.bigint();
      await call('POST', '/account', { wg_name: 'bench', name: `s${k}`, allowed_IPs: ip, b_download: '8', b_upload: '4' });
      post.push(since(start));
      start = process.hrtime.bigint();
      await call('PUT', `/account/s${k}`, { b_download: '9' });
      put.push(since(start));
      start = process.hrtime.bigint();
      await call('DELETE', `/account/s${k}`);
      del.push(since(start));
      // Raw floor in the same tree, group and hash bucket: class add + filter add, two tc runs.
      const { third, fourth } = host(size + k);
      const group = `${GROUP_MAJORS[third].toString(16)}:`;
      const id = `${group}${((third << 8) | fourth).toString(16)}`;
      const ht = `1:${fourth.toString(16)}:`;
      start = process.hrtime.bigint();
      await runner.run('tc', ['class', 'add', 'dev', iface, 'parent', group, 'classid', id, 'htb', 'rate', '8mbit']);
      await runner.run('tc', ['filter', 'add', 'dev', iface, 'parent', group, 'prio', '1', 'protocol', 'ip', 'handle', `${ht}1`, 'u32',
        'ht', ht, 'match', 'ip', 'dst', `${ip}/32`, 'flowid', id]);
      raw.push(since(start));
      await runner.run('tc', ['-batch', '-'], {
        input: `filter del dev ${iface} parent ${group} prio 1 protocol ip handle ${ht}1 u32\nclass del dev ${iface} classid ${id}\n`,
      });
    }
    const bulkPeers = Math.min(size, BULK);
    db.prepare('UPDATE accounts SET b_download = 20, b_upload = 10 WHERE id IN (SELECT id FROM accounts WHERE server_id = ? ORDER BY id LIMIT ?)').run(server.id, bulkPeers);
    start = process.hrtime.bigint();
    await app.services.dataplaneSync.applyServerBandwidth('bench');
    const bulkMs = since(start);
    await app.close();
    await dataplane.close();
    db.close();
    return { size, fillMs, post: median(post), put: median(put), del: median(del), raw: median(raw), bulkPeers, bulkMs };
  } finally {
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  if (benchNeeds('panel-policy', ['ip', 'tc', 'wg', 'wireguard-go', 'iptables', 'ipset'])) return 2;
  process.stdout.write(`panel-policy bench: sizes ${SIZES.join(', ')}, ${SAMPLES} samples each, bulk ${BULK}\n`);
  process.stdout.write('size    fill ms  POST ms  PUT ms  DELETE ms  raw ms  POST/raw  PUT/raw  DELETE/raw  bulk peers  set_bandwidth ms\n');
  const rows: Row[] = [];
  for (const size of SIZES) {
    const r = await measure(size);
    rows.push(r);
    process.stdout.write(
      `${String(size).padEnd(7)} ${fmt(r.fillMs, 0).padStart(7)}  ${fmt(r.post).padStart(7)}  ${fmt(r.put).padStart(6)}  ${fmt(r.del).padStart(9)}  ` +
        `${fmt(r.raw).padStart(6)}  ${fmt(r.post / r.raw).padStart(8)}  ${fmt(r.put / r.raw).padStart(7)}  ${fmt(r.del / r.raw).padStart(10)}  ` +
        `${String(r.bulkPeers).padStart(10)}  ${fmt(r.bulkMs, 0).padStart(17)}\n`,
    );
  }
  if (rows.length > 1) {
    const [a, b] = [rows[0], rows[rows.length - 1]];
    process.stdout.write(`largest vs smallest (${b.size} vs ${a.size}): POST ${fmt(b.post / a.post)}x, PUT ${fmt(b.put / a.put)}x, DELETE ${fmt(b.del / a.del)}x, raw ${fmt(b.raw / a.raw)}x\n`);
  }
  return 0;
}

process.exitCode = await main();
