// Bench (not a test): the boot of a panel after a full data-plane loss (a reboot) at N shaped, firewalled accounts vs the raw tools.
//
// Run as root: `node --import tsx test/bench/panel-boot.ts [--sizes 1000,10000,50000]`.
// For each size a fresh network namespace holds the whole linux data plane (wireguard-go, iptables + ipset, tc); the
// app is built in process (`buildApp`) on a temp SQLite store with one /16 server and N enabled accounts at 8/4 Mbit/s
// written through the repository. First the floors, each on scratch objects removed again before the next step:
// `wg setconf` of the same peers on the server's interface, `ipset restore` of the same mark set, and one `tc -batch` of
// the same tree (both directions, as the shaper renders a rebuild) on a scratch veth + IFB. Then a reboot: the data
// plane is torn down (interface, IFB, chains, sets) and a new data plane + app run the boot reconcile; its time is
// split by subsystem (time inside each seam's calls). Last, the bench checks that every peer, mark and class is back.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../../panel/app.ts';
import { createDataplane } from '../../panel/dataplane/create-dataplane.ts';
import type { Dataplane } from '../../panel/dataplane/dataplane.ts';
import { fixedRouteProbe } from '../../panel/dataplane/default-route.ts';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { renderSetSync } from '../../panel/dataplane/render/firewall-ipset.ts';
import { layoutOf, placePeer } from '../../panel/dataplane/render/tc-layout.ts';
import { emptyDevice, planReconcile } from '../../panel/dataplane/render/tc-reconcile.ts';
import { issueLicenseKey } from '../../panel/services/license-key.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { openDatabase } from '../../panel/store/db.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { ServersRepository } from '../../panel/store/repositories/servers.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName } from '../helpers/netns.ts';
import { benchNeeds, fmt } from './bench-math.ts';

const { values: args } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000,50000' } }, strict: true });
const SIZES = args.sizes!.split(',').map(Number);
const TARGET_RATIO = 2;
const NETWORK = (10 << 24) | (92 << 16);
/** Host `i` (0-based) of 10.92.0.0/16, skipping .0/.255 of each /24 and the server's .1. */
const hostIp = (i: number) => {
  const n = i + 2;
  return ((NETWORK | (Math.floor(n / 254) << 8) | ((n % 254) + 1)) >>> 0);
};
const dotted = (ip: number) => [24, 16, 8, 0].map((s) => (ip >>> s) & 255).join('.');
const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

interface Row {
  size: number;
  floors: { wg: number; ipset: number; tc: number };
  boot: { total: number; wireguard: number; firewall: number; shaping: number };
  back: { peers: number; marks: number; classes: number };
}

/** Wraps every method of a seam so the time spent inside its calls adds up in `parts[name]`. */
function timed<T extends object>(seam: T, parts: Record<string, number>, name: string): T {
  parts[name] = 0;
  return new Proxy(seam, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...a: unknown[]) => {
        const start = process.hrtime.bigint();
        try {
          return await value.apply(target, a);
        } finally {
          parts[name] += since(start);
        }
      };
    },
  });
}

async function measure(size: number): Promise<Row> {
  const ns = await createNamespace('vhbt');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-boot-'));
  const vendor = generateKeyPairSync('ed25519');
  const runner = new ExecaRunner({ netns: ns, timeoutMs: 3_600_000 });
  try {
    await execIn(ns, 'ip', ['link', 'add', 'vbx0', 'type', 'veth', 'peer', 'name', 'vbx1']);
    await execIn(ns, 'ip', ['addr', 'add', '192.0.2.1/24', 'dev', 'vbx0']);
    await execIn(ns, 'ip', ['link', 'set', 'vbx0', 'up']);
    const db = openDatabase(join(dir, 'panel.db'));
    const box = SecretBox.open(dir);
    const boot = async (wrap?: (d: Dataplane) => Dataplane) => {
      const raw = await createDataplane({ kind: 'linux', dataDir: dir, wireguard: 'userspace', runner, apiPort: null });
      const dataplane = wrap ? wrap(raw) : raw;
      const app = buildApp({
        db, dataplane, dataDir: dir, secretBox: box, baseUrl: 'http://bench', version: 'bench', licensePublicKey: vendor.publicKey,
        routeProbe: fixedRouteProbe({ address: '192.0.2.1', interface: 'vbx0' }),
      });
      await app.ready();
      return { raw, app };
    };
    // The store: one /16 server, `size` accounts at 8/4 Mbit/s.
    let { raw, app } = await boot();
    app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: size + 100, expires: new Date(Date.now() + 86400_000) }));
    const iface = uniqueWgName();
    await app.services.servers.create({ name: 'boot', interface_name: iface, address: '10.92.0.1/16', external_ip: '192.0.2.1', listen_port: '52998' } as never);
    const server = new ServersRepository(db).get('boot')!;
    const accounts = new AccountsRepository(db);
    const password = box.seal('benchpassword12');
    const keys: string[] = [];
    db.transaction(() => {
      for (let i = 0; i < size; i++) {
        const key = generateKeyPair().publicKey;
        keys.push(key);
        accounts.create((seq) => ({
          name: `b${i}`, username: `bu${i}`, password, status: 'enable', server_id: server.id, ip: hostIp(i), allowed_ips_ipv6: null,
          b_download: 8, b_upload: 4, mangle: seq, private_key: '', public_key: key,
        }));
      }
    })();

    // Floors, each on scratch objects (removed again): wg setconf, ipset restore, tc -batch of the same tree.
    const conf = join(dir, 'floor.conf');
    const head = `[Interface]\nPrivateKey = ${box.open(server.private_key)}\nListenPort = 52998\n`;
    writeFileSync(conf, head + keys.map((k, i) => `\n[Peer]\nPublicKey = ${k}\nAllowedIPs = ${dotted(hostIp(i))}/32\n`).join(''));
    let start = process.hrtime.bigint();
    await runner.run('wg', ['setconf', iface, conf]);
    const wgFloor = since(start);
    writeFileSync(conf, head);
    await runner.run('wg', ['setconf', iface, conf]);
    const wanted = new Map(keys.map((_, i) => [dotted(hostIp(i)), i + 1]));
    start = process.hrtime.bigint();
    await runner.run('ipset', ['restore'], { input: `${renderSetSync(null, 'vhfloor-4', 4, wanted).join('\n')}\n` });
    const ipsetFloor = since(start);
    await runner.run('ipset', ['destroy', 'vhfloor-4']);
    const layout = layoutOf({ name: 'vfl0', address: '10.92.0.1/16' }, { u32: true, ifb: true, leaf: null });
    const peers = keys.map((key, i) => placePeer(layout, { key, ipv4: dotted(hostIp(i)), ipv6: null, downloadMbit: 8, uploadMbit: 4 }));
    const tree = planReconcile(layout, peers, { download: emptyDevice(), upload: emptyDevice() }).lines;
    await execIn(ns, 'ip', ['link', 'add', 'vfl0', 'type', 'veth', 'peer', 'name', 'vfl1']);
    await execIn(ns, 'ip', ['link', 'add', layout.ifb, 'type', 'ifb']);
    start = process.hrtime.bigint();
    await runner.run('tc', ['-batch', '-'], { input: `${tree.join('\n')}\n` });
    const tcFloor = since(start);
    process.stderr.write(`${size}: floors wg ${fmt(wgFloor, 0)} ms, ipset ${fmt(ipsetFloor, 0)} ms, tc ${fmt(tcFloor, 0)} ms (${tree.length} lines)\n`);
    await execIn(ns, 'ip', ['link', 'del', layout.ifb], { timeoutMs: 3_600_000 });
    await execIn(ns, 'ip', ['link', 'del', 'vfl0'], { timeoutMs: 3_600_000 });

    // A reboot: every peer, chain, set and tree of the panel goes; a new data plane and app boot on the same store.
    await raw.shaper.remove(iface);
    await raw.firewall.resetAll();
    await raw.wireguard.removeInterface(iface);
    await app.close();
    await raw.close();
    const parts: Record<string, number> = {};
    ({ raw, app } = await boot((d) => ({
      ...d, wireguard: timed(d.wireguard, parts, 'wireguard'), firewall: timed(d.firewall, parts, 'firewall'), shaper: timed(d.shaper, parts, 'shaping'),
    }) as Dataplane));
    start = process.hrtime.bigint();
    await app.services.system.reconcileOnBoot();
    const total = since(start);
    const status = await app.services.system.status();
    if ((status as { status: string }).status !== 'OK') throw new Error(`status after the boot: ${JSON.stringify(status)}`);
    const back = {
      peers: (await execIn(ns, 'wg', ['show', iface, 'peers'])).stdout.split('\n').filter(Boolean).length,
      marks: (await execIn(ns, 'ipset', ['save', `vpnhost-${iface}-4`])).stdout.split('\n').filter((l) => l.startsWith('add ')).length,
      classes: ['', 'ifb-'].reduce(async (n, p) => (await n) + ((await execIn(ns, 'tc', ['class', 'show', 'dev', `${p}${iface}`])).stdout.match(/^class htb (?!1:)/gm) ?? []).length, Promise.resolve(0)),
    };
    const row: Row = {
      size,
      floors: { wg: wgFloor, ipset: ipsetFloor, tc: tcFloor },
      boot: { total, wireguard: parts.wireguard, firewall: parts.firewall, shaping: parts.shaping },
      back: { peers: back.peers, marks: back.marks, classes: await back.classes },
    };
    await raw.shaper.remove(iface);
    await raw.firewall.resetAll();
    await raw.wireguard.removeInterface(iface);
    await app.close();
    await raw.close();
    db.close();
    return row;
  } finally {
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  if (benchNeeds('panel-boot', ['ip', 'tc', 'wg', 'wireguard-go', 'iptables', 'ipset'])) return 2;
  process.stdout.write(`panel-boot bench: sizes ${SIZES.join(', ')} (one /16 server, 8/4 Mbit/s, IPv4)\n`);
  process.stdout.write('size     boot ms  = wireguard + firewall + shaping (+ rest)   floors: wg setconf + ipset restore + tc -batch = sum   boot/sum  back: peers marks classes\n');
  for (const size of SIZES) {
    const r = await measure(size);
    const sum = r.floors.wg + r.floors.ipset + r.floors.tc;
    const rest = r.boot.total - r.boot.wireguard - r.boot.firewall - r.boot.shaping;
    const ratio = r.boot.total / sum;
    process.stdout.write(
      `${String(size).padEnd(8)} ${fmt(r.boot.total, 0).padStart(7)}  = ${fmt(r.boot.wireguard, 0)} + ${fmt(r.boot.firewall, 0)} + ${fmt(r.boot.shaping, 0)} (+ ${fmt(rest, 0)})` +
        `   ${fmt(r.floors.wg, 0)} + ${fmt(r.floors.ipset, 0)} + ${fmt(r.floors.tc, 0)} = ${fmt(sum, 0)}   ${fmt(ratio, 2)}x ${ratio <= TARGET_RATIO ? 'ok' : 'MISSED'}` +
        `   ${r.back.peers} ${r.back.marks} ${r.back.classes}${r.back.peers === size && r.back.marks === size && r.back.classes === 2 * size ? '' : ' INCOMPLETE'}\n`,
    );
  }
  process.stdout.write(`target: boot <= ${TARGET_RATIO}x the sum of the floors\n`);
  return 0;
}

process.exitCode = await main();
