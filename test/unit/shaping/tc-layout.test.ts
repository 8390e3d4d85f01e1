// Tests of the shaping layout: /24 groups and their majors, derived class minors and u32 handles, the IFB name, every refusal text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GROUP_MAJORS, ifbName, layoutOf, placePeer, qdiscHashBucket, slotHandle } from '../../../panel/dataplane/render/tc-layout.ts';
import { SHAPING_TEXTS, ShapingError, type ShapedPeer } from '../../../panel/dataplane/shaping/shaping.ts';

const U32 = { u32: true, ifb: true, leaf: null };
const peer = (over: Partial<ShapedPeer> = {}): ShapedPeer => ({ key: 'K', ipv4: '10.0.5.7', ipv6: null, downloadMbit: 8, uploadMbit: 8, ...over });

describe('layoutOf', () => {
  it('derives the subnet, the /16 window and one group per /24 of it', () => {
    const l24 = layoutOf({ name: 'wg1', address: '10.0.5.1/24' }, U32);
    assert.deepEqual(l24.subnet, { network: 0x0a000500, prefix: 24, text: '10.0.5.0/24' });
    assert.deepEqual(l24.window, { network: 0x0a000500, prefix: 24 });
    assert.deepEqual(l24.groups, [{ index: 0, network: 0x0a000500, major: 0x100 }]);
    assert.equal(l24.ifb, 'ifb-wg1');
    const l20 = layoutOf({ name: 'wg1', address: '10.1.16.9/20' }, U32);
    assert.deepEqual(l20.groups.map((g) => g.network), Array.from({ length: 16 }, (_, i) => 0x0a011000 + i * 256));
    const l8 = layoutOf({ name: 'wg1', address: '10.200.3.1/8' }, U32);
    assert.deepEqual(l8.window, { network: 0x0a000000, prefix: 16 });
    assert.equal(l8.groups.length, 256);
    const l26 = layoutOf({ name: 'wg1', address: '10.0.5.65/26' }, U32);
    assert.deepEqual(l26.groups, [{ index: 0, network: 0x0a000500, major: 0x100 }]);
  });

  it('gives groups majors outside the qdisc-hash bucket of the HTB default leaves (handle 0)', () => {
    assert.equal(GROUP_MAJORS.length, 256);
    assert.equal(new Set(GROUP_MAJORS).size, 256);
    assert.ok(GROUP_MAJORS.every((m) => m > 1 && m < 0x8000 && qdiscHashBucket(m) !== qdiscHashBucket(0)));
    // hash_32(0x010b0000, 4) is 0, so 0x10b is skipped: index 11 is 0x10c.
    assert.equal(qdiscHashBucket(0x10b), 0);
    assert.deepEqual(GROUP_MAJORS.slice(9, 12), [0x109, 0x10a, 0x10c]);
  });

  it('refuses a kernel without IFB or u32, and a target that is not an IPv4 CIDR', () => {
    assert.throws(() => layoutOf({ name: 'wg1', address: '10.0.0.1/24' }, { ...U32, ifb: false }), { message: SHAPING_TEXTS.noIfb });
    assert.throws(() => layoutOf({ name: 'wg1', address: '10.0.0.1/24' }, { ...U32, u32: false }), { message: SHAPING_TEXTS.noClassifier });
    assert.throws(() => layoutOf({ name: 'wg1', address: '10.0.0.1' }, U32), ShapingError);
    assert.throws(() => layoutOf({ name: 'wg1', address: 'fd00::1/64' }, U32), ShapingError);
  });

  it('names the IFB device ifb-<iface>, or ifb + a 12-hex hash when that would pass 15 characters', () => {
    assert.equal(ifbName('wg123456789'), 'ifb-wg123456789');
    const long = ifbName('wg1234567890123');
    assert.match(long, /^ifb[0-9a-f]{12}$/);
    assert.equal(long, ifbName('wg1234567890123'));
    assert.notEqual(long, ifbName('wg1234567890124'));
  });
});

describe('placePeer', () => {
  const layout = layoutOf({ name: 'wg1', address: '10.0.4.1/22' }, U32);

  it('takes the class minor from the IPv4 host offset, the group from its /24, the filter handles from the octets', () => {
    const p = placePeer(layout, peer({ ipv4: '10.0.5.7/32', ipv6: 'FD00:0:0:0::1:0207/128' }));
    assert.equal(p.minor, 0x107);
    assert.deepEqual(p.group, { index: 1, network: 0x0a000500, major: 0x101 });
    assert.equal(p.ipv6, 'fd00::1:207');
    const [v4, v6root, v6group] = p.slots;
    assert.deepEqual([v4.block, slotHandle(v4), v4.flow, v4.words], [0x101, '1:7:1', { major: 0x101, minor: 0x107 }, [0x0a000507]]);
    // Root block: the last two bytes pick table and bucket, the node derives from the minor; it sends to the group.
    assert.deepEqual([v6root.block, slotHandle(v6root), v6root.flow], [1, `202:7:${(1 + (0x107 % 0xfff)).toString(16)}`, { major: 1, minor: 0x101 }]);
    // Group block: the last byte picks the bucket, the fourth octet + 1 the node (unique in a /24).
    assert.deepEqual([v6group.block, slotHandle(v6group), v6group.flow], [0x101, '2:7:8', { major: 0x101, minor: 0x107 }]);
    assert.deepEqual(v6group.words, [0xfd000000, 0, 0, 0x00010207]);
  });

  it('is stable: the same peer always gets the same handles', () => {
    assert.deepEqual(placePeer(layout, peer()), placePeer(layout, peer()));
  });

  it('places an unlimited peer nowhere, without checks', () => {
    assert.deepEqual(placePeer(layout, peer({ ipv4: '192.0.2.1', downloadMbit: 0, uploadMbit: 0 })), {
      key: 'K', minor: 0, group: null, download: 0, upload: 0, ipv4: null, ipv6: null, slots: [],
    });
  });

  it('refuses addresses outside the subnet, without IPv4, and past the 16-bit class minor', () => {
    assert.throws(() => placePeer(layout, peer({ ipv4: '10.0.8.1' })), { message: SHAPING_TEXTS.outsideSubnet('K', '10.0.8.1', '10.0.4.0/22') });
    assert.throws(() => placePeer(layout, peer({ ipv4: null })), { message: SHAPING_TEXTS.noIpv4('K') });
    assert.throws(() => placePeer(layout, peer({ ipv4: '10.0.5.0/24' })), ShapingError);
    assert.throws(() => placePeer(layout, peer({ ipv6: '10.0.5.9' })), ShapingError);
    const wide = layoutOf({ name: 'wg1', address: '10.0.0.1/8' }, U32);
    const last = placePeer(wide, peer({ ipv4: '10.0.255.254' }));
    assert.equal(last.minor, 0xfffe);
    assert.equal(last.group!.major, GROUP_MAJORS[255]);
    assert.throws(() => placePeer(wide, peer({ ipv4: '10.0.255.255' })), { message: SHAPING_TEXTS.minorRange('K', '10.0.255.255', 65535) });
    assert.throws(() => placePeer(wide, peer({ ipv4: '10.1.0.1' })), { message: SHAPING_TEXTS.minorRange('K', '10.1.0.1', 65537) });
  });
});
