// Fixture tests of the tc batch renderers: the per-/24 scaffold and O(1) lines per peer change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { layoutOf, placePeer } from '../../../panel/dataplane/render/tc-layout.ts';
import { orderOps, peerOps, renderOps } from '../../../panel/dataplane/render/tc-peer.ts';
import { ingressLines, scaffoldFilterLines, trunkLines } from '../../../panel/dataplane/render/tc-setup.ts';
import type { ShapedPeer } from '../../../panel/dataplane/shaping/shaping.ts';

const U32 = { u32: true, ifb: true, leaf: null };
const FAIR = { u32: true, ifb: true, leaf: 'fq_codel' };
const u32 = layoutOf({ name: 'wg7', address: '10.0.5.1/24' }, U32);
const fair = layoutOf({ name: 'wg7', address: '10.0.5.1/24' }, FAIR);
const peer = (over: Partial<ShapedPeer> = {}): ShapedPeer => ({ key: 'K', ipv4: '10.0.5.2', ipv6: null, downloadMbit: 8, uploadMbit: 4, ...over });
const lines = (layout = u32, before?: ShapedPeer, after?: ShapedPeer) =>
  renderOps(layout, orderOps(peerOps(before && placePeer(layout, before), after && placePeer(layout, after))));

describe('scaffold', () => {
  it('trunk: the HTB root, then per /24 a group class (never the limit) and its child HTB', () => {
    assert.deepEqual(trunkLines(u32, 'download'), [
      'qdisc add dev wg7 root handle 1: htb default 0',
      'class add dev wg7 parent 1: classid 1:100 htb rate 100gbit ceil 100gbit burst 1250000b cburst 1250000b quantum 1514',
      'qdisc add dev wg7 parent 1:100 handle 100: htb default 0',
    ]);
    assert.equal(trunkLines(u32, 'upload')[0], 'qdisc add dev ifb-wg7 root handle 1: htb default 0');
    const wide = layoutOf({ name: 'wg7', address: '10.9.0.1/16' }, U32);
    assert.equal(trunkLines(wide, 'download').length, 1 + 2 * 256);
  });

  it('filters: root → group by the third octet, IPv6 tables in the root; per group the fourth octet and last byte', () => {
    const down = scaffoldFilterLines(u32, 'download');
    assert.deepEqual(down.slice(0, 6), [
      'filter add dev wg7 parent 1: prio 1 protocol ip u32',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 1: u32 divisor 256',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip dst 10.0.5.0/24 hashkey mask 0x0000ff00 at 16 link 1:',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 1:5:1 u32 ht 1:5: match ip dst 10.0.5.0/24 flowid 1:100',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 u32',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 2: u32 divisor 256',
    ]);
    assert.equal(down[6 + 255], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 2ff: u32 divisor 256');
    assert.equal(down[6 + 256], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 801::1 u32 ht 801:: match u32 0 0 at 0 hashkey mask 0x0000ff00 at 36 link 2:');
    assert.deepEqual(down.slice(-6), [
      'filter add dev wg7 parent 100: prio 1 protocol ip u32',
      'filter add dev wg7 parent 100: prio 1 protocol ip handle 1: u32 divisor 256',
      'filter add dev wg7 parent 100: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip dst 10.0.5.0/24 hashkey mask 0x000000ff at 16 link 1:',
      'filter add dev wg7 parent 100: prio 2 protocol ipv6 u32',
      'filter add dev wg7 parent 100: prio 2 protocol ipv6 handle 2: u32 divisor 256',
      'filter add dev wg7 parent 100: prio 2 protocol ipv6 handle 801::1 u32 ht 801:: match u32 0 0 at 0 hashkey mask 0x000000ff at 36 link 2:',
    ]);
    assert.equal(down.length, 4 + (2 + 256 + 1 + 256) + 6);
    const up = scaffoldFilterLines(u32, 'upload');
    assert.equal(up[2], 'filter add dev ifb-wg7 parent 1: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip src 10.0.5.0/24 hashkey mask 0x0000ff00 at 12 link 1:');
    assert.match(up[up.length - 1], /hashkey mask 0x000000ff at 20 link 2:$/);
  });

  it('a /16: one root node and one group block per /24', () => {
    const wide = layoutOf({ name: 'wg7', address: '10.9.0.1/16' }, U32);
    const down = scaffoldFilterLines(wide, 'download');
    assert.ok(down.includes('filter add dev wg7 parent 1: prio 1 protocol ip handle 1:ff:1 u32 ht 1:ff: match ip dst 10.9.255.0/24 flowid 1:210'));
    assert.ok(down.includes('filter add dev wg7 parent 210: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip dst 10.9.255.0/24 hashkey mask 0x000000ff at 16 link 1:'));
    assert.equal(down.filter((l) => / parent (?!1: )[0-9a-f]+: prio 1 protocol ip u32$/.test(l)).length, 256);
  });

  it('ingress: one redirect of every packet to the IFB device', () => {
    assert.deepEqual(ingressLines(u32), [
      'qdisc add dev wg7 handle ffff: ingress',
      'filter add dev wg7 parent ffff: prio 1 protocol all u32 match u32 0 0 action mirred egress redirect dev ifb-wg7',
    ]);
  });
});

describe('peer changes', () => {
  it('add: a class in the group per limited direction, its IPv4 node in the group block, IPv6 in root and group', () => {
    assert.deepEqual(lines(u32, undefined, peer({ ipv6: 'fd00::5:2' })), [
      'class replace dev wg7 parent 100: classid 100:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'class replace dev ifb-wg7 parent 100: classid 100:2 htb rate 4mbit ceil 4mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32 ht 1:2: match ip dst 10.0.5.2/32 flowid 100:2',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 200:2:3 u32 ht 200:2: match ip6 dst fd00::5:2/128 flowid 1:100',
      'filter add dev wg7 parent 100: prio 2 protocol ipv6 handle 2:2:3 u32 ht 2:2: match ip6 dst fd00::5:2/128 flowid 100:2',
      'filter add dev ifb-wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32 ht 1:2: match ip src 10.0.5.2/32 flowid 100:2',
      'filter add dev ifb-wg7 parent 1: prio 2 protocol ipv6 handle 200:2:3 u32 ht 200:2: match ip6 src fd00::5:2/128 flowid 1:100',
      'filter add dev ifb-wg7 parent 100: prio 2 protocol ipv6 handle 2:2:3 u32 ht 2:2: match ip6 src fd00::5:2/128 flowid 100:2',
    ]);
  });

  it('change of a rate: one class replace; 0 removes that direction (filters first); nothing for no change', () => {
    assert.deepEqual(lines(u32, peer(), peer({ downloadMbit: 20 })), [
      'class replace dev wg7 parent 100: classid 100:2 htb rate 20mbit ceil 20mbit burst 2500b cburst 2500b quantum 1514',
    ]);
    assert.deepEqual(lines(u32, peer(), peer({ uploadMbit: 0 })), [
      'filter del dev ifb-wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32',
      'class del dev ifb-wg7 classid 100:2',
    ]);
    assert.deepEqual(lines(u32, peer(), peer()), []);
  });

  it('remove: filters, then classes', () => {
    assert.deepEqual(lines(u32, peer(), undefined), [
      'filter del dev wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32',
      'filter del dev ifb-wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32',
      'class del dev wg7 classid 100:2',
      'class del dev ifb-wg7 classid 100:2',
    ]);
  });

  it('a new address moves the class and the filter', () => {
    assert.deepEqual(lines(u32, peer({ uploadMbit: 0 }), peer({ ipv4: '10.0.5.9', uploadMbit: 0 })), [
      'filter del dev wg7 parent 100: prio 1 protocol ip handle 1:2:1 u32',
      'class del dev wg7 classid 100:2',
      'class replace dev wg7 parent 100: classid 100:9 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev wg7 parent 100: prio 1 protocol ip handle 1:9:1 u32 ht 1:9: match ip dst 10.0.5.9/32 flowid 100:9',
    ]);
  });

  it('a fair leaf goes under each new class; a rate change is one class replace', () => {
    assert.deepEqual(lines(fair, undefined, peer({ uploadMbit: 0 })).slice(0, 2), [
      'class replace dev wg7 parent 100: classid 100:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'qdisc replace dev wg7 parent 100:2 fq_codel',
    ]);
    assert.deepEqual(lines(fair, peer(), peer({ uploadMbit: 10000 })), [
      'class replace dev ifb-wg7 parent 100: classid 100:2 htb rate 10000mbit ceil 10000mbit burst 1250000b cburst 1250000b quantum 1514',
    ]);
  });
});
