// Data-plane bundle contract: every subsystem driven through DataplaneSync from the API, on any implementation.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../panel/app.ts';
import type { Dataplane } from '../../panel/dataplane/dataplane.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { issueLicenseKey } from '../../panel/services/license-key.ts';
import { openDatabase, type Db } from '../../panel/store/db.ts';

/** What an implementation hands the contract. */
export interface DataplaneFixture {
  dataplane: Dataplane;
  /** A new bundle over the same kernel state (a panel restart after kill -9). */
  restart(): Promise<Dataplane>;
  /** An address the host may use as a server's external IP. */
  externalIp: string;
  /** Live state of everything the panel owns with counters stripped: the diff of "nothing changed". */
  snapshot(iface: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** Options of {@link runDataplaneContract}. */
export interface DataplaneContractOptions {
  gate?(t: TestContext): boolean;
}

interface Panel {
  app: FastifyInstance;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<{ status: number; body: any }>;
  ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<any>;
  close(): Promise<void>;
}

const vendor = generateKeyPairSync('ed25519');

async function openPanel(dir: string, dataplane: Dataplane): Promise<Panel> {
  const db: Db = openDatabase(join(dir, 'panel.db'));
  const app = buildApp({
    db, dataplane, dataDir: dir, secretBox: SecretBox.open(dir), baseUrl: 'http://127.0.0.1', version: 'contract',
    licensePublicKey: vendor.publicKey,
  });
  await app.ready();
  if (!app.services.license.expiry()) {
    app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: 1000, expires: new Date(Date.now() + 86400_000) }));
  }
  const cookie = `access_hash=${app.services.accessHashes.create('127.0.0.1').hash}`;
  const call: Panel['call'] = async (method, path, form) => {
    const res = await app.inject({
      method, url: `/api/v1${path}`,
      headers: { cookie, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const ok: Panel['ok'] = async (method, path, form) => {
    const answer = await call(method, path, form);
    assert.equal(answer.body.status, 'success', `${method} ${path}: ${answer.body.error}`);
    return answer.body.msg;
  };
  return { app, call, ok, close: async () => { await app.close(); db.close(); } };
}

/** Runs the contract against the bundle `setup` builds (a fresh fixture per test). */
export function runDataplaneContract(label: string, setup: () => Promise<DataplaneFixture>, opts: DataplaneContractOptions = {}): void {
  describe(`Dataplane contract: ${label}`, () => {
    const withPanel = async (t: TestContext, body: (p: Panel, fx: DataplaneFixture, ctx: { iface: string; net: string; dir: string }) => Promise<void>) => {
      if (opts.gate && !opts.gate(t)) return;
      const fx = await setup();
      const dir = mkdtempSync(join(tmpdir(), 'vpnhost-dp-contract-'));
      const p = await openPanel(dir, fx.dataplane);
      try {
        const n = randomInt(1, 250);
        const iface = `wg${randomInt(100000, 999999)}`;
        const net = `10.${n}.${randomInt(0, 250)}`;
        await p.ok('POST', '/wireguard', {
          name: 'c1', interface_name: iface, address: `${net}.1/24`, external_ip: fx.externalIp,
          listen_port: String(randomInt(52000, 60000)),
        });
        await body(p, fx, { iface, net, dir });
      } finally {
        await p.close();
        await fx.cleanup();
        rmSync(dir, { recursive: true, force: true });
      }
    };

    it('an account is shaped from b_download/b_upload (Mbit/s) and marked with its unique mangle', async (t) => {
      await withPanel(t, async (p, fx, { iface, net }) => {
        const a = await p.ok('POST', '/account', { wg_name: 'c1', name: 'a', allowed_IPs: `${net}.2`, b_download: '8', b_upload: '4' });
        const b = await p.ok('POST', '/account', { wg_name: 'c1', name: 'b', allowed_IPs: `${net}.3` });
        assert.ok(Number(a.mangle) > 0 && Number(b.mangle) > 0 && a.mangle !== b.mangle, 'unique marks');
        const sync = p.app.services.dataplaneSync;
        const tcA = await sync.views.accountTrafficControl('a');
        assert.match(tcA, /rate 8Mbit ceil 8Mbit/);
        assert.match(tcA, /rate 4Mbit ceil 4Mbit/);
        assert.equal((await sync.views.accountTrafficControl('b')).includes('class'), false, 'unlimited: no class');
        assert.match(await sync.views.mangleRules('a'), new RegExp(`${net.replace(/\./g, '\\.')}\\.2`));
        const marks = await sync.views.mangleList();
        assert.deepEqual(marks.filter((m) => m.server === iface).map((m) => [m.name, m.mark]).sort(), [['a', Number(a.mangle)], ['b', Number(b.mangle)]]);
        assert.match(await sync.views.natRules('c1'), new RegExp(`SNAT --to-source ${fx.externalIp.replace(/\./g, '\\.')}`));
        assert.match(await sync.views.serverTrafficControl('c1'), /htb 1:/);
      });
    });

    it('a change touches only that peer; disable/enable/delete; the server default applies to new accounts', async (t) => {
      await withPanel(t, async (p, fx, { iface, net }) => {
        await p.ok('POST', '/account', { wg_name: 'c1', name: 'a', allowed_IPs: `${net}.2`, b_download: '8', b_upload: '4' });
        await p.ok('POST', '/account', { wg_name: 'c1', name: 'b', allowed_IPs: `${net}.3`, b_download: '2', b_upload: '2' });
        const sync = p.app.services.dataplaneSync;
        const bBefore = await sync.views.accountTrafficControl('b');
        const writes = fx.dataplane.firewall.stats();
        await p.ok('PUT', '/account/a', { b_download: '16' });
        assert.deepEqual(fx.dataplane.firewall.stats(), writes, 'a rate change is no firewall write');
        await p.ok('POST', '/account', { wg_name: 'c1', name: 'x', allowed_IPs: `${net}.9` });
        assert.deepEqual(fx.dataplane.firewall.stats(), { ...writes, ipsetRestores: writes.ipsetRestores + 1 }, 'a new peer is one ipset restore');
        await p.ok('DELETE', '/account/x');
        assert.match(await sync.views.accountTrafficControl('a'), /rate 16Mbit/);
        // The root qdisc lines count every packet of the link (a stray IPv6 packet of the kernel's may pass meanwhile);
        // the peer's own class and filter lines must be byte-identical, their counters included.
        const peerLines = (view: string) => view.split('\n').filter((line) => /^\s/.test(line)).join('\n');
        assert.match(peerLines(bBefore), /class [0-9a-f]+:[0-9a-f]+ rate 2Mbit[^\n]*\n\s+filter /);
        assert.equal(peerLines(await sync.views.accountTrafficControl('b')), peerLines(bBefore), 'the other peer is untouched');
        await p.ok('PUT', '/account/a', { status: 'disable' });
        assert.equal((await sync.views.accountTrafficControl('a')).includes('class'), false);
        assert.equal((await sync.views.mangleList()).some((m) => m.name === 'a'), false);
        // parked until the next traffic sample: the key without allowed IPs
        const routed = async () => (await fx.dataplane.wireguard.inspect(iface))?.peers.filter((peer) => peer.allowedIps.length > 0).length;
        assert.equal(await routed(), 1);
        await p.ok('PUT', '/account/a', { status: 'enable' });
        assert.match(await sync.views.accountTrafficControl('a'), /rate 16Mbit/);
        assert.equal((await sync.views.mangleList()).some((m) => m.name === 'a'), true);
        await p.ok('DELETE', '/account/a');
        assert.equal((await sync.views.mangleList()).some((m) => m.name === 'a'), false);
        assert.equal((await fx.dataplane.wireguard.inspect(iface))?.peers.length, 1);
        assert.equal(await routed(), 1);
        await p.ok('PUT', '/wireguard/c1', { b_download: '5', b_upload: '3' });
        const c = await p.ok('POST', '/account', { wg_name: 'c1', name: 'c', allowed_IPs: `${net}.4` });
        assert.deepEqual([c.b_download, c.b_upload], ['5', '3']);
        assert.match(await sync.views.accountTrafficControl('c'), /rate 5Mbit/);
        await sync.applyServerBandwidth('c1');
        assert.match(await sync.views.accountTrafficControl('b'), /rate 2Mbit/, 'applyServerBandwidth applies what the store holds');
        await assert.rejects(sync.applyServerBandwidth('nope'), { message: 'Wireguard server not found' });
        await p.ok('DELETE', '/account/b');
        await p.ok('DELETE', '/account/c');
        await p.ok('DELETE', '/wireguard/c1');
        assert.equal((await fx.dataplane.firewall.listServers()).includes(iface), false);
        assert.deepEqual(await fx.dataplane.wireguard.listInterfaces(), []);
      });
    });

    it('a peer the shaper cannot class (beyond host 65,534 of a /15) is refused with its text and changes nothing', async (t) => {
      await withPanel(t, async (p, fx, { iface }) => {
        const wide = `wg${randomInt(100000, 999999)}`;
        const second = randomInt(2, 120) * 2;
        await p.ok('POST', '/wireguard', {
          name: 'wide', interface_name: wide, address: `172.${second}.0.1/15`, external_ip: fx.externalIp,
          listen_port: String(randomInt(52000, 60000)),
        });
        const before = await fx.snapshot(wide);
        const far = `172.${second + 1}.0.2`; // host 65,538 of the /15
        const refused = await p.call('POST', '/account', { wg_name: 'wide', name: 'far', allowed_IPs: far, b_download: '8' });
        assert.equal(refused.status, 422);
        assert.match(refused.body.error, new RegExp(`^shaping: peer \\S+ address ${far.replace(/\./g, '\\.')} `));
        assert.equal((await p.call('GET', '/account/far')).status, 404, 'no row');
        assert.equal(await fx.snapshot(wide), before, 'no peer, mark or class left behind');
        await p.ok('POST', '/account', { wg_name: 'wide', name: 'far', allowed_IPs: far }); // unlimited: no class needed
        assert.equal((await fx.dataplane.wireguard.inspect(wide))?.peers.length, 1);
        assert.ok(iface);
      });
    });

    it('a suspended peer gets its last endpoint back on enable, also after a restart; keepalive stays off', async (t) => {
      await withPanel(t, async (p, fx, { iface, net, dir }) => {
        const a = await p.ok('POST', '/account', { wg_name: 'c1', name: 'a', allowed_IPs: `${net}.2` });
        // As if the client had sent from there (the dump's endpoint).
        await fx.dataplane.wireguard.applyPeers(iface, {
          upsert: [{ publicKey: a.public_key, allowedIps: [`${net}.2/32`], persistentKeepalive: 0, endpoint: '192.0.2.77:40000' }], remove: [],
        });
        await p.ok('PUT', '/account/a', { status: 'disable' });
        // parked: no allowed IPs, its endpoint kept until a sample (here the one before the boot reconcile) stores it
        const parked = (await fx.dataplane.wireguard.inspect(iface))?.peers ?? [];
        assert.deepEqual(parked.map((peer) => [peer.allowedIps, peer.endpoint]), [[[], '192.0.2.77:40000']]);
        await p.close();
        const again = await openPanel(dir, await fx.restart());
        try {
          await again.app.services.system.reconcileOnBoot();
          await again.ok('PUT', '/account/a', { status: 'enable' });
          const [peer] = (await fx.dataplane.wireguard.inspect(iface))?.peers ?? [];
          assert.equal(peer?.endpoint, '192.0.2.77:40000');
          assert.equal(peer?.persistentKeepalive, 0, 'the keepalive was a one-shot');
        } finally {
          await again.close();
        }
        p.close = async () => undefined;
      });
    });

    it('reconcile of a right state writes nothing; a restart (kill -9) comes back identical with no duplicates', async (t) => {
      await withPanel(t, async (p, fx, { iface, net, dir }) => {
        for (let i = 2; i < 8; i++) {
          await p.ok('POST', '/account', { wg_name: 'c1', name: `u${i}`, allowed_IPs: `${net}.${i}`, b_download: String(i), b_upload: i % 2 ? '0' : '3' });
        }
        await p.ok('PUT', '/account/u3', { status: 'disable' });
        await p.ok('PUT', '/system/reload'); // the boot reconcile's part: global firewall state (sysctl, policies)
        const before = await fx.snapshot(iface);
        const writes = fx.dataplane.firewall.stats();
        await p.ok('PUT', '/system/reload');
        assert.deepEqual(fx.dataplane.firewall.stats(), writes, 'no firewall write');
        assert.equal(await fx.snapshot(iface), before);
        await p.close();
        const again = await openPanel(dir, await fx.restart());
        try {
          await again.app.services.system.reconcileOnBoot();
          assert.equal(await fx.snapshot(iface), before, 'identical after restart');
          assert.match(await again.app.services.dataplaneSync.views.accountTrafficControl('u4'), /rate 4Mbit/);
          await again.ok('PUT', '/account/u4', { b_download: '9' });
          assert.match(await again.app.services.dataplaneSync.views.accountTrafficControl('u4'), /rate 9Mbit/);
        } finally {
          await again.close();
        }
        p.close = async () => undefined;
      });
    });
  });
}
