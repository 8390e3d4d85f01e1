// Tests of the shaping layout: derived class minors and u32 handles, the IFB name, and every refusal text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ifbName, layoutOf, placePeer, slotHandle } from '../../../panel/dataplane/render/tc-layout.ts';
import { SHAPING_TEXTS, ShapingError, type ShapedPeer } from '../../../panel/dataplane/shaping/shaping.ts';

const U32 = { flow: false, u32: true, ifb: true, leaf: null };
const FLOW = { flow: true, u32: true, ifb: true, leaf: 'fq_codel' };
const peer = (over: Partial<ShapedPeer> = {}): ShapedPeer => ({ key: 'K', ipv4: '10.0.5.7', ipv6: null, downloadMbit: 8, uploadMbit: 8, ...over });

describe('layoutOf', () => {
  it('derives the subnet, the /16 window and one level-2 table per third octet', () => {
    const l24 = layoutOf({ name: 'wg1', address: '10.0.5.1/24' }, U32);
    assert.deepEqual(l24.subnet, { network: 0x0a000500, prefix: 24, text: '10.0.5.0/24' });
    assert.deepEqual(l24.window, { network: 0x0a000500, prefix: 24 });
    assert.deepEqual(l24.thirds, [5]);
    assert.equal(l24.classifier, 'u32');
    assert.equal(l24.ifb, 'ifb-wg1');
    const l20 = layoutOf({ name: 'wg1', address: '10.1.16.9/20' }, U32);
    assert.deepEqual(l20.thirds, Array.from({ length: 16 }, (_, i) => 16 + i));
    const l8 = layoutOf({ name: 'wg1', address: '10.200.3.1/8' }, U32);
    assert.deepEqual(l8.window, { network: 0x0a000000, prefix: 16 });
    assert.equal(l8.thirds.length, 256);
  });

  it('uses cls_flow where the kernel has it and the subnet is a /16 or narrower, u32 otherwise', () => {
    assert.equal(layoutOf({ name: 'wg1', address: '10.0.0.1/16' }, FLOW).classifier, 'flow');
    assert.equal(layoutOf({ name: 'wg1', address: '10.0.0.1/15' }, FLOW).classifier, 'u32');
    assert.equal(layoutOf({ name: 'wg1', address: '10.0.0.1/24' }, FLOW).leaf, 'fq_codel');
  });

  it('refuses a kernel without IFB or classifiers, and a target that is not an IPv4 CIDR', () => {
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

  it('takes the class minor from the IPv4 host offset and the filter handle from the octets', () => {
    const p = placePeer(layout, peer({ ipv4: '10.0.5.7/32', ipv6: 'FD00:0:0:0::1:0207/128' }));
    assert.equal(p.minor, 0x107);
    assert.equal(slotHandle(p.v4!), '105:7:1');
    assert.deepEqual(p.v4!.words, [0x0a000507]);
    assert.equal(p.v6!.addr, 'fd00::1:207');
    assert.equal(slotHandle(p.v6!), '202:7:' + (1 + (0x107 % 0xfff)).toString(16));
    assert.deepEqual(p.v6!.words, [0xfd000000, 0, 0, 0x00010207]);
  });

  it('is stable: the same peer always gets the same handles', () => {
    assert.deepEqual(placePeer(layout, peer()), placePeer(layout, peer()));
  });

  it('places an unlimited peer nowhere, without checks', () => {
    assert.deepEqual(placePeer(layout, peer({ ipv4: '192.0.2.1', downloadMbit: 0, uploadMbit: 0 })), {
      key: 'K', minor: 0, download: 0, upload: 0, v4: null, v6: null,
    });
  });

  it('refuses addresses outside the subnet, without IPv4, and past the 16-bit class minor', () => {
    assert.throws(() => placePeer(layout, peer({ ipv4: '10.0.8.1' })), { message: SHAPING_TEXTS.outsideSubnet('K', '10.0.8.1', '10.0.4.0/22') });
    assert.throws(() => placePeer(layout, peer({ ipv4: null })), { message: SHAPING_TEXTS.noIpv4('K') });
    assert.throws(() => placePeer(layout, peer({ ipv4: '10.0.5.0/24' })), ShapingError);
    assert.throws(() => placePeer(layout, peer({ ipv6: '10.0.5.9' })), ShapingError);
    const wide = layoutOf({ name: 'wg1', address: '10.0.0.1/8' }, U32);
    assert.equal(placePeer(wide, peer({ ipv4: '10.0.255.254' })).minor, 0xfffe);
    assert.throws(() => placePeer(wide, peer({ ipv4: '10.0.255.255' })), { message: SHAPING_TEXTS.minorRange('K', '10.0.255.255', 65535) });
    assert.throws(() => placePeer(wide, peer({ ipv4: '10.1.0.1' })), { message: SHAPING_TEXTS.minorRange('K', '10.1.0.1', 65537) });
  });
});
