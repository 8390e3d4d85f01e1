// Shaper contract: the behaviour every shaping implementation (simulated, linux tc) must show; run by each one.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import { SHAPING_TEXTS, type ShapedPeer, type Shaper, type ShapingTarget } from '../../panel/dataplane/shaping/shaping.ts';

/** What an implementation hands the contract. */
export interface ShaperFixture {
  shaper: Shaper;
  /** Creates a fresh link the shaper may shape (a veth end in a namespace, or a name the twin knows). */
  makeInterface(): Promise<string>;
  /** A new shaper on the same kernel state (a panel restart). */
  restart(): Shaper;
  /** A counter of data-plane writes (tc batches, or simulated object changes); unchanged means nothing was written. */
  writes(): number;
  cleanup(): Promise<void>;
}

/** Options of {@link runShaperContract}. */
export interface ShaperContractOptions {
  /** Checked by every test before the fixture is built; false skips the test (e.g. `requireTools`). */
  gate?(t: TestContext): boolean;
}

/** A view without its live counters (real links see stray packets, e.g. IPv6 router solicitations). */
const shape = (view: string) => view.replace(/Sent \d+ bytes \d+ pkt \(dropped \d+, overlimits \d+\)/g, 'Sent …');

const peer = (n: number, over: Partial<ShapedPeer> = {}): ShapedPeer => ({
  key: `peer-${n}`, ipv4: `10.77.0.${n}`, ipv6: null, downloadMbit: 8, uploadMbit: 4, ...over,
});

/** Runs the contract against the shaper `setup` builds (one fixture for the whole suite, built on first use). */
export function runShaperContract(label: string, setup: () => Promise<ShaperFixture>, opts: ShaperContractOptions = {}): void {
  describe(`Shaper contract: ${label}`, () => {
    let fx: ShaperFixture;
    let building: Promise<ShaperFixture> | null = null;
    const ready = async (t: TestContext): Promise<boolean> => {
      if (opts.gate && !opts.gate(t)) return false;
      building ??= setup();
      fx = await building;
      return true;
    };
    after(async () => {
      if (!building || !(await building.catch(() => null))) return;
      await fx.cleanup();
    });
    const target = (name: string, address = '10.77.0.1/24'): ShapingTarget => ({ name, address });

    it('reports capabilities', async (t) => {
      if (!(await ready(t))) return;
      const caps = await fx.shaper.capabilities();
      for (const field of ['u32', 'ifb'] as const) assert.equal(typeof caps[field], 'boolean');
      assert.ok(caps.leaf === null || typeof caps.leaf === 'string');
      assert.ok(caps.ifb && caps.u32, 'the contract needs a kernel that can shape');
    });

    it('refuses a missing interface, and apply/show before ensure', async (t) => {
      if (!(await ready(t))) return;
      const missing = `vsx${randomInt(100000, 1000000)}`;
      await assert.rejects(fx.shaper.ensure(target(missing), []), { name: 'ShapingError', message: SHAPING_TEXTS.noInterface(missing) });
      const name = await fx.makeInterface();
      await assert.rejects(fx.shaper.apply(target(name), { upsert: [peer(2)], remove: [] }), { message: SHAPING_TEXTS.notEnsured(name) });
      await assert.rejects(fx.shaper.show(name), { message: SHAPING_TEXTS.notEnsured(name) });
    });

    it('ensure shapes limited peers only, in the child HTB of their /24; the view shows each class with its peer and filters', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      await fx.shaper.ensure(target(name), [peer(2, { ipv6: 'fd77::2' }), peer(3, { downloadMbit: 0 }), peer(4, { downloadMbit: 0, uploadMbit: 0 })]);
      const view = await fx.shaper.show(name);
      const lines = view.trimEnd().split('\n');
      assert.match(lines[0], new RegExp(`^${name} download \\(egress of ${name}\\): htb 1: default 0, 1 group of /24, classifier u32, leaf \\S+; Sent \\d+ bytes \\d+ pkt \\(dropped \\d+, overlimits \\d+\\)$`));
      assert.match(view, /\n  class 100:2 rate 8Mbit ceil 8Mbit leaf \S+ peer peer-2 10\.77\.0\.2 fd77::2; Sent \d+ bytes/);
      assert.match(view, /\n  class 100:2 rate 4Mbit ceil 4Mbit leaf \S+ peer peer-2 /);
      assert.match(view, /\n  class 100:3 rate 4Mbit ceil 4Mbit leaf \S+ peer peer-3 10\.77\.0\.3; /);
      assert.equal((view.match(/ class 100:3 /g) ?? []).length, 1, 'no download class for a 0 download');
      assert.doesNotMatch(view, /peer-4/);
      // IPv4: a node of the group's block; IPv6: a root-block node picks the group, a group-block node the class.
      assert.match(view, /\n    filter 100: 1:2:1 ip 10\.77\.0\.2 flowid 100:2\n    filter 1: 200:2:3 ip6 fd77::2 flowid 1:100\n    filter 100: 2:2:3 ip6 fd77::2 flowid 100:2\n/);
      assert.match(view, /\n    filter 100: 1:3:1 ip 10\.77\.0\.3 flowid 100:3\n/);
      const ifbLine = lines.find((l) => / upload \(ingress of /.test(l));
      assert.ok(ifbLine, view);
      const mine = await fx.shaper.show(name, 'peer-3');
      assert.doesNotMatch(mine, /peer-2/);
      assert.equal((mine.match(/^ {2}class /gm) ?? []).length, 1);
      assert.equal(await fx.shaper.show(name, 'peer-4'), '');
      assert.equal(await fx.shaper.show(name, 'nobody'), '');
    });

    it('a second ensure of the same peers, also after a restart, writes nothing', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      const peers = [peer(2), peer(3, { ipv6: 'fd77::3' }), peer(9, { uploadMbit: 0 })];
      await fx.shaper.ensure(target(name), peers);
      const view = await fx.shaper.show(name);
      const before = fx.writes();
      await fx.shaper.ensure(target(name), peers);
      const restarted = fx.restart();
      await restarted.ensure(target(name), [...peers].reverse());
      assert.equal(fx.writes(), before);
      assert.equal(shape(await restarted.show(name)), shape(view));
      await restarted.apply(target(name), { upsert: [peer(2, { downloadMbit: 3 })], remove: [] });
      assert.match(await restarted.show(name, 'peer-2'), /class 100:2 rate 3Mbit/);
    });

    it('apply: changes a rate in place, 0 lifts a limit, removes by key, moves a peer to its new address', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      await fx.shaper.ensure(target(name), [peer(2), peer(3)]);
      await fx.shaper.apply(target(name), { upsert: [peer(2, { downloadMbit: 16 })], remove: [] });
      assert.match(await fx.shaper.show(name, 'peer-2'), /class 100:2 rate 16Mbit ceil 16Mbit/);
      await fx.shaper.apply(target(name), { upsert: [peer(2, { downloadMbit: 0 })], remove: [] });
      const lifted = await fx.shaper.show(name, 'peer-2');
      assert.equal((lifted.match(/^ {2}class /gm) ?? []).length, 1, lifted);
      assert.match(lifted, /^ifb-|upload/m);
      await fx.shaper.apply(target(name), { upsert: [], remove: ['peer-3', 'unknown-key'] });
      assert.equal(await fx.shaper.show(name, 'peer-3'), '');
      await fx.shaper.apply(target(name), { upsert: [peer(3, { ipv4: '10.77.0.30' })], remove: [] });
      const moved = await fx.shaper.show(name, 'peer-3');
      assert.match(moved, /class 100:1e rate 8Mbit/);
      assert.doesNotMatch(await fx.shaper.show(name), /class 100:3 /);
      // A batch may hand a freed address to another peer.
      await fx.shaper.apply(target(name), { upsert: [peer(3, { key: 'peer-3', ipv4: '10.77.0.31' }), peer(30, { ipv4: '10.77.0.30' })], remove: [] });
      assert.match(await fx.shaper.show(name, 'peer-30'), /class 100:1e .*peer peer-30 10\.77\.0\.30;/);
    });

    it('refuses conflicting or out-of-range peers with its texts and changes nothing', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      await fx.shaper.ensure(target(name), [peer(2, { ipv6: 'fd77::2' })]);
      const view = await fx.shaper.show(name);
      const before = fx.writes();
      const refuse = (upsert: ShapedPeer[], message: string) =>
        assert.rejects(fx.shaper.apply(target(name), { upsert, remove: [] }), { name: 'ShapingError', message });
      await refuse([peer(5, { ipv4: '10.77.0.2' })], SHAPING_TEXTS.sameAddress('peer-5', 'peer-2', '10.77.0.2'));
      await refuse([peer(5, { ipv6: 'fd77::2' })], SHAPING_TEXTS.sameAddress('peer-5', 'peer-2', 'fd77::2'));
      await refuse([peer(5), peer(5)], SHAPING_TEXTS.duplicateKey('peer-5'));
      await refuse([peer(5, { ipv4: '10.78.0.5' })], SHAPING_TEXTS.outsideSubnet('peer-5', '10.78.0.5', '10.77.0.0/24'));
      await refuse([peer(5, { ipv4: null })], SHAPING_TEXTS.noIpv4('peer-5'));
      await assert.rejects(fx.shaper.apply(target(name), { upsert: [peer(5, { downloadMbit: 10001 })], remove: [] }), { name: 'ShapingError', message: /^shaping: invalid peer: / });
      await assert.rejects(fx.shaper.apply(target(name), { upsert: [peer(5, { downloadMbit: 1.5 })], remove: [] }), { name: 'ShapingError' });
      await assert.rejects(fx.shaper.ensure({ name, address: 'nonsense' }, []), { name: 'ShapingError' });
      assert.equal(fx.writes(), before);
      assert.equal(shape(await fx.shaper.show(name)), shape(view));
      const wide = await fx.makeInterface();
      await assert.rejects(fx.shaper.ensure({ name: wide, address: '10.0.0.1/8' }, [peer(5, { ipv4: '10.1.0.5' })]), {
        message: SHAPING_TEXTS.minorRange('peer-5', '10.1.0.5', 65541),
      });
    });

    it('shapes a whole /16 window of a wider subnet: one group per /24, each peer in its own', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      const peers = Array.from({ length: 300 }, (_, i) => ({
        key: `p${i}`, ipv4: `10.8.${1 + (i % 3)}.${1 + Math.floor(i / 3)}`, ipv6: null, downloadMbit: 1 + (i % 5), uploadMbit: 0,
      }));
      await fx.shaper.ensure({ name, address: '10.8.0.1/15' }, peers);
      const view = await fx.shaper.show(name, 'p299');
      assert.match(view, /^\S+ download \(egress of \S+\): htb 1: default 0, 256 groups of \/24, /);
      assert.match(view, /class 103:364 rate 5Mbit .*peer p299 10\.8\.3\.100;[^\n]*\n    filter 103: 1:64:1 ip 10\.8\.3\.100 flowid 103:364\n/);
      const all = await fx.shaper.show(name);
      assert.equal((all.match(/^ {2}class /gm) ?? []).length, 300);
      assert.equal((all.match(/^ {2}class 101:/gm) ?? []).length, 100);
    });

    it('remove clears the interface; a second remove is a no-op', async (t) => {
      if (!(await ready(t))) return;
      const name = await fx.makeInterface();
      await fx.shaper.ensure(target(name), [peer(2)]);
      await fx.shaper.remove(name);
      await assert.rejects(fx.shaper.show(name), { message: SHAPING_TEXTS.notEnsured(name) });
      await fx.shaper.remove(name);
      await fx.shaper.ensure(target(name), []);
      assert.doesNotMatch(await fx.shaper.show(name), /\n  class /);
    });
  });
}
