// Driver contract: the behaviour every data-plane driver (simulated, linux) must show; run by each implementation.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import { DataplaneError, InterfaceHeldError, type Driver, type InterfaceSpec, type PeerSpec } from '../../panel/dataplane/wireguard/driver.ts';
import { normalizeAddress } from '../../panel/dataplane/cidr.ts';
import { generateKeyPair, publicKeyFrom } from '../../panel/dataplane/keys.ts';
import { reconcile } from '../../panel/dataplane/reconcile.ts';

/** What an implementation hands the contract. */
export interface DriverFixture {
  driver: Driver;
  cleanup(): Promise<void>;
  /** A fresh interface name, unique on the host (default: `wg` + 6 random digits). */
  interfaceName?(): string;
  /** Identity of a link that changes only when the link is re-created (an ifindex); proves "no restart". */
  linkIdentity?(name: string): Promise<number | null>;
  /**
   * Makes a live WireGuard daemon elsewhere (another namespace) hold `name`; resolves to a function releasing it.
   * Linux: a listener on /var/run/wireguard/<name>.sock; simulated: the twin's hold hook.
   */
  holdName(name: string): Promise<() => Promise<void>>;
}

const key = () => generateKeyPair().publicKey;

/** Options of {@link runDriverContract}. */
export interface ContractOptions {
  /** Checked by every test before the fixture is built; false skips the test (e.g. `requireTools`). */
  gate?(t: TestContext): boolean;
}

/** Runs the contract against the driver `setup` builds (one fixture for the whole suite, built on first use). */
export function runDriverContract(label: string, setup: () => Promise<DriverFixture>, opts: ContractOptions = {}): void {
  describe(`Driver contract: ${label}`, () => {
    let fx: DriverFixture;
    let driver: Driver;
    let port = 52000 + randomInt(5000);
    const used: string[] = [];
    const name = () => {
      const n = fx.interfaceName?.() ?? `wg${randomInt(100000, 1000000)}`;
      used.push(n);
      return n;
    };
    const spec = (n: string, over: Partial<InterfaceSpec> = {}): InterfaceSpec => ({
      name: n,
      privateKey: generateKeyPair().privateKey,
      listenPort: port++,
      address: `10.${randomInt(1, 250)}.${randomInt(0, 250)}.1/24`,
      addressIpv6: null,
      mtu: 0,
      ...over,
    });
    const peer = (ips: string[], keepalive = 0): PeerSpec => ({ publicKey: key(), allowedIps: ips, persistentKeepalive: keepalive });
    const identity = async (n: string) => (fx.linkIdentity ? fx.linkIdentity(n) : null);

    let building: Promise<DriverFixture> | null = null;
    const ready = async (t: TestContext): Promise<boolean> => {
      if (opts.gate && !opts.gate(t)) return false;
      building ??= setup();
      fx = await building;
      driver = fx.driver;
      return true;
    };
    after(async () => {
      if (!building || !(await building.catch(() => null))) return;
      try {
        for (const n of used) await driver.removeInterface(n).catch(() => undefined);
        await driver.close();
      } finally {
        await fx.cleanup();
      }
    });

    it('reports health and version labels', async (t) => {
      if (!(await ready(t))) return;
      assert.deepEqual(await driver.health(), { ok: true });
      const versions = await driver.versions();
      for (const field of ['wireguard', 'wireguard-dkms', 'wireguard-tools'] as const) {
        assert.equal(typeof versions[field], 'string');
        assert.ok(versions[field].length > 0, field);
      }
    });

    it('creates an interface and inspects it in the shape wg and ip report', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      const s = spec(n, { addressIpv6: 'fd00:0:0:7::1/64' });
      assert.equal(await driver.inspect(n), null);
      await driver.ensureInterface(s);
      const state = await driver.inspect(n);
      assert.deepEqual(state, {
        name: n,
        publicKey: publicKeyFrom(s.privateKey),
        listenPort: s.listenPort,
        addresses: [s.address, 'fd00:0:0:7::1/64'],
        mtu: 1420,
        up: true,
        peers: [],
      });
      assert.ok((await driver.listInterfaces()).includes(n));
    });

    it('transfers: the counters of every peer as inspect has them, null for a missing interface', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      assert.equal(await driver.transfers(n), null);
      await driver.ensureInterface(spec(n));
      assert.deepEqual(await driver.transfers(n), { keys: [], rx: new Float64Array(0), tx: new Float64Array(0), parked: [] });
      const peers = [peer(['10.9.2.2/32']), peer(['10.9.2.3/32'])];
      await driver.applyPeers(n, { upsert: peers, remove: [] });
      const counters = (await driver.transfers(n))!;
      const byKey = new Map(counters.keys.map((k, i) => [k, [counters.rx[i], counters.tx[i]]]));
      const state = (await driver.inspect(n))!;
      assert.deepEqual([...byKey.keys()].sort(), state.peers.map((p) => p.publicKey).sort());
      for (const p of state.peers) assert.deepEqual(byKey.get(p.publicKey), [p.transferRx, p.transferTx]);
      await driver.removeInterface(n);
    });

    it('a parked peer (allowed IPs cleared) keeps its endpoint and counters, and transfers reports it', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      const kept = peer(['10.9.3.2/32']);
      const parked = peer(['10.9.3.3/32']);
      await driver.applyPeers(n, { upsert: [kept, { ...parked, endpoint: '192.0.2.45:51999' }], remove: [] });
      await driver.applyPeers(n, { upsert: [{ ...parked, allowedIps: [] }], remove: [] });
      const state = (await driver.inspect(n))!;
      assert.deepEqual(state.peers.find((p) => p.publicKey === parked.publicKey)?.allowedIps, []);
      assert.equal(state.peers.find((p) => p.publicKey === parked.publicKey)?.endpoint, '192.0.2.45:51999');
      assert.deepEqual((await driver.transfers(n))!.parked, [[parked.publicKey, '192.0.2.45:51999']]);
      await driver.removeInterface(n);
    });

    it('sessions: null for a missing interface; only peers with a handshake since the bound', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      assert.equal(await driver.sessions(n, 1), null);
      await driver.ensureInterface(spec(n));
      await driver.applyPeers(n, { upsert: [peer(['10.9.4.2/32'])], remove: [] });
      assert.deepEqual(await driver.sessions(n, 1), [], 'no handshake yet');
      await driver.removeInterface(n);
    });

    it('an upsert with an endpoint sets it (a resumed peer); one without keeps the endpoint the peer has', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      const p = peer(['10.9.1.2/32']);
      await driver.applyPeers(n, { upsert: [p], remove: [] });
      assert.equal((await driver.inspect(n))?.peers[0].endpoint, null, 'no endpoint before any packet');
      await driver.applyPeers(n, { upsert: [{ ...p, endpoint: '192.0.2.44:51999' }], remove: [] });
      assert.equal((await driver.inspect(n))?.peers[0].endpoint, '192.0.2.44:51999');
      await driver.applyPeers(n, { upsert: [{ ...p, persistentKeepalive: 0 }], remove: [] });
      assert.equal((await driver.inspect(n))?.peers[0].endpoint, '192.0.2.44:51999', 'kept');
      await driver.removeInterface(n);
    });

    it('ensureInterface on a right interface changes nothing and restarts nothing', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      const s = spec(n);
      await driver.ensureInterface(s);
      const p = peer(['10.9.0.2/32'], 25);
      await driver.applyPeers(n, { upsert: [p], remove: [] });
      const id = await identity(n);
      const before = await driver.inspect(n);
      await driver.ensureInterface(s);
      await driver.ensureInterface({ ...s });
      assert.deepEqual(await driver.inspect(n), before);
      assert.equal(await identity(n), id);
    });

    it('changes port, key, address and MTU in place, keeping peers', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      const s = spec(n, { addressIpv6: 'fd00:0:0:8::1/64' });
      await driver.ensureInterface(s);
      const p = peer(['10.9.1.2/32']);
      await driver.applyPeers(n, { upsert: [p], remove: [] });
      const id = await identity(n);
      const changed = { ...s, listenPort: port++, privateKey: generateKeyPair().privateKey, address: '10.77.3.1/24', addressIpv6: null, mtu: 1380 };
      await driver.ensureInterface(changed);
      const state = await driver.inspect(n);
      assert.ok(state);
      assert.equal(state.listenPort, changed.listenPort);
      assert.equal(state.publicKey, publicKeyFrom(changed.privateKey));
      assert.deepEqual(state.addresses, ['10.77.3.1/24']);
      assert.equal(state.mtu, 1380);
      assert.equal(state.up, true);
      assert.deepEqual(state.peers.map((x) => x.publicKey), [p.publicKey]);
      assert.equal(await identity(n), id);
    });

    it('refuses a listen port another interface holds, and leaves no half-made interface', async (t) => {
      if (!(await ready(t))) return;
      const a = spec(name());
      await driver.ensureInterface(a);
      const n = name();
      await assert.rejects(driver.ensureInterface(spec(n, { listenPort: a.listenPort })), (error: unknown) => {
        assert.ok(error instanceof DataplaneError);
        assert.match(error.message, /Address already in use/);
        return true;
      });
      assert.equal(await driver.inspect(n), null);
      assert.ok(!(await driver.listInterfaces()).includes(n));
    });

    it('adds, updates and removes peers in one batch', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      const a = peer(['10.9.2.2/32'], 25);
      const b = peer(['10.9.2.3/32', 'fd00::3/128']);
      await driver.applyPeers(n, { upsert: [a, b], remove: [] });
      let state = await driver.inspect(n);
      assert.ok(state);
      const byKey = new Map(state.peers.map((x) => [x.publicKey, x]));
      assert.deepEqual(byKey.get(a.publicKey), {
        publicKey: a.publicKey,
        endpoint: null,
        allowedIps: ['10.9.2.2/32'],
        latestHandshake: 0,
        transferRx: 0,
        transferTx: 0,
        persistentKeepalive: 25,
      });
      assert.deepEqual(byKey.get(b.publicKey)?.allowedIps.sort(), ['10.9.2.3/32', 'fd00::3/128']);
      const c = peer(['10.9.2.4/32']);
      await driver.applyPeers(n, {
        upsert: [{ ...a, allowedIps: ['10.9.2.12/32', '10.9.2.13/32'], persistentKeepalive: 0 }, c],
        remove: [b.publicKey],
      });
      state = await driver.inspect(n);
      assert.ok(state);
      assert.deepEqual(state.peers.map((x) => x.publicKey).sort(), [a.publicKey, c.publicKey].sort());
      const updated = state.peers.find((x) => x.publicKey === a.publicKey);
      assert.deepEqual(updated?.allowedIps.sort(), ['10.9.2.12/32', '10.9.2.13/32']);
      assert.equal(updated?.persistentKeepalive, 0);
      // Peers come sorted the one way every driver reports them (no handshakes yet: by public key).
      assert.deepEqual(state.peers.map((x) => x.publicKey), [a.publicKey, c.publicKey].sort());
    });

    it('moves an allowed IP to the peer it is given to, and masks host bits like wg', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      const a = peer(['10.9.3.2/32', '10.9.3.5/32']);
      await driver.applyPeers(n, { upsert: [a], remove: [] });
      const b = peer(['10.9.3.5/32', '10.9.4.9/24']);
      await driver.applyPeers(n, { upsert: [b], remove: [] });
      const state = await driver.inspect(n);
      assert.ok(state);
      const byKey = new Map(state.peers.map((x) => [x.publicKey, x.allowedIps.sort()]));
      assert.deepEqual(byKey.get(a.publicKey), ['10.9.3.2/32']);
      assert.deepEqual(byKey.get(b.publicKey), ['10.9.3.5/32', '10.9.4.0/24']);
    });

    it('rejects malformed keys without applying any part of the batch', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      const good = peer(['10.9.5.2/32']);
      await assert.rejects(
        driver.applyPeers(n, { upsert: [good, { ...peer(['10.9.5.3/32']), publicKey: 'not-a-key' }], remove: [] }),
        (error: unknown) => error instanceof DataplaneError && /Key is not the correct length or format/.test(error.message),
      );
      assert.deepEqual((await driver.inspect(n))?.peers, []);
      const secret = 'short-private-key-value';
      await assert.rejects(driver.ensureInterface(spec(name(), { privateKey: secret })), (error: unknown) => {
        assert.ok(error instanceof DataplaneError);
        assert.ok(!error.message.includes(secret) && !(error.detail ?? '').includes(secret));
        return true;
      });
    });

    it('fails applyPeers on a missing interface and inspects it as null', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await assert.rejects(
        driver.applyPeers(n, { upsert: [peer(['10.9.6.2/32'])], remove: [] }),
        (error: unknown) => error instanceof DataplaneError && /Unable to modify interface/.test(error.message),
      );
      assert.equal(await driver.inspect(n), null);
    });

    it('removes an interface, and removing it again is a no-op', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      await driver.ensureInterface(spec(n));
      await driver.removeInterface(n);
      assert.equal(await driver.inspect(n), null);
      assert.ok(!(await driver.listInterfaces()).includes(n));
      await driver.removeInterface(n);
    });

    it("lists the host's networks: each link's addresses tagged by the link, no default route", async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      const s = spec(n, { addressIpv6: `fd00:${randomInt(1, 0xffff).toString(16)}::1/64` });
      await driver.ensureInterface(s);
      const networks = await driver.hostNetworks();
      // The kernel may add an IPv6 link-local address of its own (fe80::/64) to the link.
      const mine = networks.filter((x) => x.dev === n && x.source === 'address' && !x.cidr.startsWith('fe80:')).map((x) => x.cidr).sort();
      assert.deepEqual(mine, [normalizeAddress(s.address), normalizeAddress(s.addressIpv6!)].sort());
      assert.ok(networks.some((x) => x.cidr === '127.0.0.1/8' && x.dev === 'lo'), 'loopback is listed');
      assert.ok(!networks.some((x) => x.cidr.endsWith('/0')), 'no default route');
      await driver.removeInterface(n);
      assert.ok(!(await driver.hostNetworks()).some((x) => x.dev === n));
    });

    it('refuses a name a live daemon elsewhere holds, creating nothing, and takes it once released', async (t) => {
      if (!(await ready(t))) return;
      const n = name();
      const release = await fx.holdName(n);
      try {
        await assert.rejects(driver.ensureInterface(spec(n)), (err: unknown) => err instanceof InterfaceHeldError && err.iface === n);
        assert.equal(await driver.inspect(n), null);
        assert.ok(!(await driver.listInterfaces()).includes(n));
      } finally {
        await release();
      }
      await driver.ensureInterface(spec(n));
      assert.equal((await driver.inspect(n))?.name, n);
    });

    it('reconciles: adds what is missing, fixes what differs, removes extras, leaves the rest alone', async (t) => {
      if (!(await ready(t))) return;
      const keep = spec(name());
      const extra = spec(name());
      const fresh = spec(name());
      await driver.ensureInterface(keep);
      await driver.ensureInterface(extra);
      const right = peer(['10.9.7.2/32'], 25);
      const wrong = peer(['10.9.7.3/32']);
      const stray = peer(['10.9.7.4/32']);
      await driver.applyPeers(keep.name, { upsert: [right, { ...wrong, allowedIps: ['10.9.7.33/32'] }, stray], remove: [] });
      const missing = peer(['10.9.7.5/32']);
      const freshPeer = peer(['10.9.8.2/32']);
      const keepId = await identity(keep.name);
      const progress: Array<[number, number]> = [];
      const desired = [
        { spec: keep, peers: [right, wrong, missing] },
        { spec: fresh, peers: [freshPeer] },
      ];
      const others = (await driver.listInterfaces()).filter((n) => ![keep.name, fresh.name].includes(n));
      const report = await reconcile(driver, desired, { onProgress: (done, total) => progress.push([done, total]) });
      assert.deepEqual(report, {
        interfacesCreatedOrFixed: 1,
        interfacesRemoved: others.length,
        peersAdded: 2,
        peersUpdated: 1,
        peersRemoved: 1,
      });
      assert.deepEqual(progress.at(-1), [2 + others.length, 2 + others.length]);
      assert.equal(await driver.inspect(extra.name), null);
      assert.deepEqual((await driver.listInterfaces()).sort(), [keep.name, fresh.name].sort());
      const kept = await driver.inspect(keep.name);
      assert.deepEqual(
        kept?.peers.map((x) => [x.publicKey, x.allowedIps, x.persistentKeepalive]).sort(),
        [
          [right.publicKey, ['10.9.7.2/32'], 25],
          [wrong.publicKey, ['10.9.7.3/32'], 0],
          [missing.publicKey, ['10.9.7.5/32'], 0],
        ].sort(),
      );
      assert.deepEqual((await driver.inspect(fresh.name))?.peers.map((x) => x.publicKey), [freshPeer.publicKey]);
      assert.equal(await identity(keep.name), keepId);
      const again = await reconcile(driver, desired);
      assert.deepEqual(again, { interfacesCreatedOrFixed: 0, interfacesRemoved: 0, peersAdded: 0, peersUpdated: 0, peersRemoved: 0 });
      assert.equal(await identity(keep.name), keepId);
    });
  });
}
