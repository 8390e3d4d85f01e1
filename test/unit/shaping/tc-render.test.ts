// Fixture tests of the tc batch renderers: root setup (u32 and cls_flow) and O(1) lines per peer change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { layoutOf, placePeer } from '../../../panel/dataplane/render/tc-layout.ts';
import { orderOps, peerOps, renderOps } from '../../../panel/dataplane/render/tc-peer.ts';
import { ingressLines, scaffoldLines } from '../../../panel/dataplane/render/tc-setup.ts';
import type { ShapedPeer } from '../../../panel/dataplane/shaping/shaping.ts';

const U32 = { flow: false, u32: true, ifb: true, leaf: null };
const FLOW = { flow: true, u32: true, ifb: true, leaf: 'fq_codel' };
const u32 = layoutOf({ name: 'wg7', address: '10.0.5.1/24' }, U32);
const flow = layoutOf({ name: 'wg7', address: '10.0.5.1/24' }, FLOW);
const peer = (over: Partial<ShapedPeer> = {}): ShapedPeer => ({ key: 'K', ipv4: '10.0.5.2', ipv6: null, downloadMbit: 8, uploadMbit: 4, ...over });
const lines = (layout = u32, before?: ShapedPeer, after?: ShapedPeer) =>
  renderOps(layout, orderOps(peerOps(layout, before && placePeer(layout, before), after && placePeer(layout, after))));

describe('root setup', () => {
  it('u32: HTB root, level-1 table on the third octet, level-2 tables on the fourth, IPv6 on the last two bytes', () => {
    const down = scaffoldLines(u32, 'download');
    assert.deepEqual(down.slice(0, 7), [
      'qdisc add dev wg7 root handle 1: htb default 0',
      'filter add dev wg7 parent 1: prio 1 protocol ip u32',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 1: u32 divisor 256',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 105: u32 divisor 256',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip dst 10.0.5.0/24 hashkey mask 0x0000ff00 at 16 link 1:',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 1:5:1 u32 ht 1:5: match ip dst 10.0.5.0/24 hashkey mask 0x000000ff at 16 link 105:',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 u32',
    ]);
    assert.equal(down[7], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 2: u32 divisor 256');
    assert.equal(down[8 + 255], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 2ff: u32 divisor 256');
    assert.equal(down[8 + 256], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 801::1 u32 ht 801:: match u32 0 0 at 0 hashkey mask 0x0000ff00 at 36 link 2:');
    assert.equal(down[down.length - 1], 'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 2:ff:1 u32 ht 2:ff: match u32 0 0 at 0 hashkey mask 0x000000ff at 36 link 2ff:');
    assert.equal(down.length, 6 + 1 + 1 + 256 + 1 + 256);
    const up = scaffoldLines(u32, 'upload');
    assert.equal(up[0], 'qdisc add dev ifb-wg7 root handle 1: htb default 0');
    assert.equal(up[4], 'filter add dev ifb-wg7 parent 1: prio 1 protocol ip handle 800::1 u32 ht 800:: match ip src 10.0.5.0/24 hashkey mask 0x0000ff00 at 12 link 1:');
    assert.match(up[up.length - 1], /hashkey mask 0x000000ff at 20 link 2ff:$/);
  });

  it('u32 on a /16: 256 level-2 IPv4 tables, one per third octet', () => {
    const wide = layoutOf({ name: 'wg7', address: '10.9.0.1/16' }, U32);
    const down = scaffoldLines(wide, 'download');
    assert.equal(down.filter((l) => / protocol ip handle 1[0-9a-f]{2}: u32 divisor 256$/.test(l)).length, 256);
    assert.ok(down.includes('filter add dev wg7 parent 1: prio 1 protocol ip handle 1:ff:1 u32 ht 1:ff: match ip dst 10.9.255.0/24 hashkey mask 0x000000ff at 16 link 1ff:'));
  });

  it('cls_flow: one map filter per direction derives the minor from the address, IPv6 stays on u32 (root 800:)', () => {
    const down = scaffoldLines(flow, 'download');
    assert.deepEqual(down.slice(0, 3), [
      'qdisc add dev wg7 root handle 1: htb default 0',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 1 flow map key dst and 0xff addend 0xffffffff baseclass 1:1',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 u32',
    ]);
    assert.ok(down.some((l) => l.includes('handle 800::1 u32 ht 800:: match u32 0 0 at 0')));
    assert.equal(scaffoldLines(flow, 'upload')[1], 'filter add dev ifb-wg7 parent 1: prio 1 protocol ip handle 1 flow map key src and 0xff addend 0xffffffff baseclass 1:1');
    const sixteen = layoutOf({ name: 'wg7', address: '10.9.0.1/16' }, FLOW);
    assert.match(scaffoldLines(sixteen, 'download')[1], /and 0xffff addend/);
  });

  it('ingress: one redirect of every packet to the IFB device', () => {
    assert.deepEqual(ingressLines(u32), [
      'qdisc add dev wg7 handle ffff: ingress',
      'filter add dev wg7 parent ffff: prio 1 protocol all u32 match u32 0 0 action mirred egress redirect dev ifb-wg7',
    ]);
  });
});

describe('peer changes', () => {
  it('add: a class and a filter per limited direction', () => {
    assert.deepEqual(lines(u32, undefined, peer({ ipv6: 'fd00::5:2' })), [
      'class replace dev wg7 parent 1: classid 1:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'class replace dev ifb-wg7 parent 1: classid 1:2 htb rate 4mbit ceil 4mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32 ht 105:2: match ip dst 10.0.5.2/32 flowid 1:2',
      'filter add dev wg7 parent 1: prio 2 protocol ipv6 handle 200:2:3 u32 ht 200:2: match ip6 dst fd00::5:2/128 flowid 1:2',
      'filter add dev ifb-wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32 ht 105:2: match ip src 10.0.5.2/32 flowid 1:2',
      'filter add dev ifb-wg7 parent 1: prio 2 protocol ipv6 handle 200:2:3 u32 ht 200:2: match ip6 src fd00::5:2/128 flowid 1:2',
    ]);
  });

  it('change of a rate: one class replace; 0 removes that direction (filters first); nothing for no change', () => {
    assert.deepEqual(lines(u32, peer(), peer({ downloadMbit: 20 })), [
      'class replace dev wg7 parent 1: classid 1:2 htb rate 20mbit ceil 20mbit burst 2500b cburst 2500b quantum 1514',
    ]);
    assert.deepEqual(lines(u32, peer(), peer({ uploadMbit: 0 })), [
      'filter del dev ifb-wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32',
      'class del dev ifb-wg7 classid 1:2',
    ]);
    assert.deepEqual(lines(u32, peer(), peer()), []);
  });

  it('remove: filters, then classes', () => {
    assert.deepEqual(lines(u32, peer(), undefined), [
      'filter del dev wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32',
      'filter del dev ifb-wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32',
      'class del dev wg7 classid 1:2',
      'class del dev ifb-wg7 classid 1:2',
    ]);
  });

  it('a new address moves the class and the filter', () => {
    const out = lines(u32, peer({ uploadMbit: 0 }), peer({ ipv4: '10.0.5.9', uploadMbit: 0 }));
    assert.deepEqual(out, [
      'filter del dev wg7 parent 1: prio 1 protocol ip handle 105:2:1 u32',
      'class del dev wg7 classid 1:2',
      'class replace dev wg7 parent 1: classid 1:9 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'filter add dev wg7 parent 1: prio 1 protocol ip handle 105:9:1 u32 ht 105:9: match ip dst 10.0.5.9/32 flowid 1:9',
    ]);
  });

  it('cls_flow: no per-peer IPv4 filter; a new class gets the fair leaf; a change is one class replace', () => {
    assert.deepEqual(lines(flow, undefined, peer({ uploadMbit: 0 })), [
      'class replace dev wg7 parent 1: classid 1:2 htb rate 8mbit ceil 8mbit burst 1600b cburst 1600b quantum 1514',
      'qdisc replace dev wg7 parent 1:2 fq_codel',
    ]);
    assert.deepEqual(lines(flow, peer(), peer({ uploadMbit: 10000 })), [
      'class replace dev ifb-wg7 parent 1: classid 1:2 htb rate 10000mbit ceil 10000mbit burst 1250000b cburst 1250000b quantum 1514',
    ]);
  });
});
