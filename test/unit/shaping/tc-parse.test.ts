// Fixture tests of the tc text parsers and the reconcile plan on output captured from iproute2 6.1 (test/fixtures/tc).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { layoutOf, placePeer } from '../../../panel/dataplane/render/tc-layout.ts';
import { describeFilter, parseClasses, parseFilters, parseGroupFilters, parseQdiscs, rateOf } from '../../../panel/dataplane/render/tc-parse.ts';
import { emptyDevice, isPeerFilter, planReconcile, type LiveDevice } from '../../../panel/dataplane/render/tc-reconcile.ts';
import { ingressSignature, scaffoldFilterLines, scaffoldSignatures } from '../../../panel/dataplane/render/tc-setup.ts';
import { rateText } from '../../../panel/dataplane/render/tc-view.ts';
import type { ShapedPeer } from '../../../panel/dataplane/shaping/shaping.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tc/${name}`, import.meta.url), 'utf8');
// The fixtures are a live `ensure` of interface d0 (10.0.5.1/24, u32, no fair leaf) with peers A and B below,
// plus a bfifo put by hand under A's download class; `*-group-filters.txt` is the read of group 100's block.
const layout = layoutOf({ name: 'd0', address: '10.0.5.1/24' }, { u32: true, ifb: true, leaf: null });
const A: ShapedPeer = { key: 'A', ipv4: '10.0.5.2', ipv6: 'fd00::2', downloadMbit: 8, uploadMbit: 4 };
const B: ShapedPeer = { key: 'B', ipv4: '10.0.5.3', ipv6: null, downloadMbit: 0, uploadMbit: 1500 };
const blocks = (prefix: string) => new Map([[1, parseFilters(fixture(`${prefix}-filter.txt`))], ...parseGroupFilters(fixture(`${prefix}-group-filters.txt`))]);
const live = (): Record<'download' | 'upload', LiveDevice> => ({
  download: {
    qdiscs: parseQdiscs(fixture('wg-qdisc-s.txt')),
    classes: parseClasses(fixture('wg-class-s.txt')),
    filters: blocks('wg'),
    ingressFilters: parseFilters(fixture('wg-filter-ingress.txt')),
  },
  upload: {
    qdiscs: parseQdiscs(fixture('ifb-qdisc-s.txt')),
    classes: parseClasses(fixture('ifb-class-s.txt')),
    filters: blocks('ifb'),
    ingressFilters: [],
  },
});

describe('tc text parsers', () => {
  it('qdiscs: kind, handle, parent, HTB default and counters', () => {
    const q = parseQdiscs(fixture('wg-qdisc-s.txt'));
    assert.deepEqual(q.map((x) => [x.kind, x.handle, x.parent, x.htbDefault]), [
      ['htb', '1:', 'root', '0'],
      ['htb', '100:', '1:100', '0'],
      ['bfifo', '87d6:', '100:2', null],
      ['ingress', 'ffff:', 'ingress', null],
    ]);
    assert.deepEqual(q[0].stats, { bytes: 0, packets: 0, dropped: 0, overlimits: 0 });
    const text = 'qdisc htb 1: root refcnt 3 r2q 10 default 0 direct_packets_stat 5\n Sent 12345 bytes 67 pkt (dropped 8, overlimits 9 requeues 0) \n';
    assert.deepEqual(parseQdiscs(text)[0].stats, { bytes: 12345, packets: 67, dropped: 8, overlimits: 9 });
  });

  it('classes: the group class and its child HTB, peer classes with minor, leaf, rate and ceil in bit/s', () => {
    const down = parseClasses(fixture('wg-class-s.txt'));
    assert.deepEqual(down.map((c) => [c.major, c.minor, c.parent, c.leaf, c.rateBit, c.ceilBit]), [
      ['1', 0x100, 'root', '100:', 100e9, 100e9],
      ['100', 2, 'root', '87d6:', 8e6, 8e6],
    ]);
    const up = parseClasses(fixture('ifb-class-s.txt'));
    assert.deepEqual(up.filter((c) => c.major === '100').map((c) => [c.minor, c.rateBit]).sort(), [[2, 4e6], [3, 1500e6]]);
  });

  it('rates both ways: tc text ↔ bit/s', () => {
    for (const [text, bit] of [['8Mbit', 8e6], ['1500Mbit', 1.5e9], ['10Gbit', 1e10], ['800Kbit', 8e5], ['96bit', 96]] as const) {
      assert.equal(rateOf(text), bit);
      assert.equal(rateText(bit), text);
    }
    assert.equal(rateOf('fast'), 0);
  });

  it('filters: the scaffold of each block reads back as the renderer describes it; peer filters are told apart', () => {
    for (const [dir, prefix] of [['download', 'wg'], ['upload', 'ifb']] as const) {
      const read = blocks(prefix);
      assert.deepEqual([...read.keys()], [1, 0x100]);
      const signatures = scaffoldSignatures(layout, dir);
      for (const [block, filters] of read) {
        assert.deepEqual(filters.filter((f) => !isPeerFilter(f, block)).map(describeFilter).sort(), [...signatures.get(block)!].sort());
      }
      // Each scaffold filter is one `filter add` line of the setup (the bare `u32` lines make one entry per block).
      const count = [...signatures.values()].reduce((n, list) => n + list.length, 0);
      assert.equal(count, scaffoldFilterLines(layout, dir).filter((l) => !/ u32$/.test(l)).length + 2 * read.size);
    }
    const root = blocks('wg').get(1)!.filter((f) => isPeerFilter(f, 1));
    assert.deepEqual(root.map((f) => [f.protocol, f.fh, f.flowid, f.matches]), [
      ['ipv6', { ht: 0x200, bucket: 2, node: 3 }, '1:100', ['fd000000/ffffffff@24', '00000000/ffffffff@28', '00000000/ffffffff@32', '00000002/ffffffff@36']],
    ]);
    const group = blocks('wg').get(0x100)!.filter((f) => isPeerFilter(f, 0x100));
    assert.deepEqual(group.map((f) => [f.protocol, f.fh, f.flowid, f.matches.length]), [
      ['ip', { ht: 1, bucket: 2, node: 1 }, '100:2', 1],
      ['ipv6', { ht: 2, bucket: 2, node: 3 }, '100:2', 4],
    ]);
    assert.deepEqual(parseGroupFilters('class htb 1:101 root prio 0 rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b \n'), new Map(), 'no leaf: no block');
  });

  it('the ingress redirect', () => {
    const redirect = parseFilters(fixture('wg-filter-ingress.txt')).filter((f) => f.divisor === null);
    assert.equal(redirect.length, 1);
    assert.equal(redirect[0].mirred, 'ifb-d0');
    assert.equal(describeFilter(redirect[0]), ingressSignature(layout));
  });
});

describe('planReconcile', () => {
  const peers = () => [placePeer(layout, A), placePeer(layout, B)];

  it('a right state needs nothing but the hand-made leaf qdisc removed', () => {
    assert.deepEqual(planReconcile(layout, peers(), live()), { lines: ['qdisc del dev d0 parent 100:2'], rebuilt: [] });
    const bfifo = layoutOf({ name: 'd0', address: '10.0.5.1/24' }, { u32: true, ifb: true, leaf: 'bfifo' });
    const plan = planReconcile(bfifo, [placePeer(bfifo, A), placePeer(bfifo, B)], live());
    assert.deepEqual(plan.lines, ['qdisc replace dev ifb-d0 parent 100:2 bfifo', 'qdisc replace dev ifb-d0 parent 100:3 bfifo']);
  });

  it('fixes only what differs: a rate, a missing peer, an extra peer', () => {
    const plan = planReconcile(layout, [
      placePeer(layout, { ...A, downloadMbit: 9 }),
      placePeer(layout, { key: 'C', ipv4: '10.0.5.4', ipv6: null, downloadMbit: 1, uploadMbit: 0 }),
    ], live());
    assert.deepEqual(plan.rebuilt, []);
    assert.deepEqual(plan.lines, [
      'filter del dev ifb-d0 parent 100: prio 1 protocol ip handle 1:3:1 u32',
      'class del dev ifb-d0 classid 100:3',
      'class replace dev d0 parent 100: classid 100:2 htb rate 9mbit ceil 9mbit burst 1600b cburst 1600b quantum 1514',
      'class replace dev d0 parent 100: classid 100:4 htb rate 1mbit ceil 1mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev d0 parent 100: prio 1 protocol ip handle 1:4:1 u32 ht 1:4: match ip dst 10.0.5.4/32 flowid 100:4',
      'qdisc del dev d0 parent 100:2',
    ]);
  });

  it('a filter pointing elsewhere is replaced (deleted, then added)', () => {
    const state = live();
    state.download.filters.set(0x100, parseFilters(fixture('wg-group-filters.txt').replace('*flowid 100:2 not_in_hw \n  match 0a000502', '*flowid 100:7 not_in_hw \n  match 0a000502')));
    const plan = planReconcile(layout, peers(), state);
    assert.deepEqual(plan.lines.slice(0, 1), ['filter del dev d0 parent 100: prio 1 protocol ip handle 1:2:1 u32']);
    assert.ok(plan.lines.includes('filter add dev d0 parent 100: prio 1 protocol ip handle 1:2:1 u32 ht 1:2: match ip dst 10.0.5.2/32 flowid 100:2'));
  });

  it('a different subnet (scaffold) or a foreign root rebuilds that tree, with its peers', () => {
    const other = layoutOf({ name: 'd0', address: '10.0.6.1/24' }, { u32: true, ifb: true, leaf: null });
    const plan = planReconcile(other, [placePeer(other, { ...A, ipv4: '10.0.6.2' })], live());
    assert.deepEqual(plan.rebuilt, ['download', 'upload']);
    // The upload tree (built last, its filter blocks nearest the front of the kernel's list) goes first.
    assert.deepEqual(plan.lines.slice(0, 2), ['qdisc del dev ifb-d0 root', 'qdisc del dev d0 root']);
    assert.ok(plan.lines.includes('class replace dev d0 parent 100: classid 100:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514'));
    const bare = live();
    bare.download = { ...emptyDevice(), qdiscs: parseQdiscs('qdisc noqueue 0: root refcnt 2\n') };
    const fresh = planReconcile(layout, peers(), bare);
    assert.deepEqual(fresh.rebuilt, ['download', 'ingress']);
    // Root, groups, then the peer classes before any filter; the redirect last.
    assert.deepEqual(fresh.lines.slice(0, 5), [
      'qdisc add dev d0 root handle 1: htb default 0',
      'class add dev d0 parent 1: classid 1:100 htb rate 100gbit ceil 100gbit burst 1250000b cburst 1250000b quantum 1514',
      'qdisc add dev d0 parent 1:100 handle 100: htb default 0',
      'class replace dev d0 parent 100: classid 100:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev d0 parent 1: prio 1 protocol ip u32',
    ]);
    assert.deepEqual(fresh.lines.slice(-2), [
      'qdisc add dev d0 handle ffff: ingress',
      'filter add dev d0 parent ffff: prio 1 protocol all u32 match u32 0 0 action mirred egress redirect dev ifb-d0',
    ]);
  });

  it('a tree of the flat layout of earlier releases (classes 1:<minor>, tables 1xx) is rebuilt', () => {
    const old = live();
    old.download = {
      qdiscs: parseQdiscs('qdisc htb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 0\nqdisc ingress ffff: parent ffff:fff1 ----------------\n'),
      classes: parseClasses('class htb 1:2 root prio 0 rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b \n'),
      filters: new Map([[1, parseFilters('filter parent 1: protocol ip pref 1 u32 chain 0 fh 105:2:1 order 1 key ht 105 bkt 2 *flowid 1:2 not_in_hw \n  match 0a000502/ffffffff at 16\n')]]),
      ingressFilters: old.download.ingressFilters,
    };
    const plan = planReconcile(layout, peers(), old);
    assert.deepEqual(plan.rebuilt, ['download']);
    assert.equal(plan.lines[0], 'qdisc del dev d0 root');
    assert.ok(plan.lines.includes('class replace dev d0 parent 100: classid 100:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514'));
  });
});
