// IP parsing, canonical forms, CIDR containment, client address behind proxies and the exact access-hash cookie.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exactAccessHash } from '../../../panel/http/auth.ts';
import { clientIp } from '../../../panel/http/client-ip.ts';
import { canonicalIp, cidrContains, cidrsOverlap, ipVersion, isSubnetZeroHost, parseCidr, reservedRangeOf, sameIp } from '../../../panel/schemas/ip.ts';

describe('IP helpers', () => {
  it('canonicalises IPv4, IPv6 and IPv4-mapped forms', () => {
    const cases: Array<[string, string | null]> = [
      ['1.2.3.4', '1.2.3.4'], ['::ffff:1.2.3.4', '1.2.3.4'], ['::FFFF:0102:0304', '1.2.3.4'], ['0:0:0:0:0:ffff:1.2.3.4', '1.2.3.4'],
      ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'], ['::', '::'], ['::1', '::1'], ['1::', '1::'],
      ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'], ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
      ['fe80::1:2', 'fe80::1:2'], ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
      ['256.1.1.1', null], ['1.2.3', null], ['01.2.3.4', null], ['1.2.3.4.5', null], ['1:2:3:4:5:6:7:8:9', null], ['1::2::3', null],
      ['12345::', null], ['g::1', null], ['', null], [':::', null], ['1.2.3.4/32', null], ['fe80::1%eth0', null], [' 1.2.3.4', null],
    ];
    for (const [input, out] of cases) assert.equal(canonicalIp(input), out, input);
  });

  it('compares addresses across forms and tells versions apart', () => {
    assert.ok(sameIp('::ffff:10.0.0.1', '10.0.0.1'));
    assert.ok(sameIp('2001:db8::1', '2001:DB8:0::0:1'));
    assert.ok(!sameIp('10.0.0.1', '10.0.0.2'));
    assert.ok(!sameIp('::1', '127.0.0.1'));
    assert.ok(!sameIp('x', 'x'));
    assert.equal(ipVersion('10.0.0.1'), 4);
    assert.equal(ipVersion('::ffff:10.0.0.1'), 6);
    assert.equal(ipVersion('nope'), 0);
  });

  it('parses CIDRs and tests containment', () => {
    const net = parseCidr('10.8.0.1/24')!;
    assert.equal(net.prefix, 24);
    assert.ok(cidrContains(net, '10.8.0.200'));
    assert.ok(!cidrContains(net, '10.8.1.1'));
    assert.ok(cidrContains(parseCidr('10.8.0.0/23')!, '10.8.1.255'));
    assert.ok(cidrContains(parseCidr('0.0.0.0/0')!, '8.8.8.8'));
    assert.ok(!cidrContains(parseCidr('0.0.0.0/0')!, '::1'));
    assert.ok(cidrContains(parseCidr('fd00::/64')!, 'fd00::abcd'));
    assert.ok(!cidrContains(parseCidr('fd00::/64')!, 'fd00:0:0:1::1'));
    for (const bad of ['10.0.0.1', '10.0.0.1/33', '10.0.0.1/-1', '::/129', '10.0.0.1/24/1', 'x/8']) assert.equal(parseCidr(bad), null, bad);
  });
});

describe('clientIp', () => {
  it('uses the socket peer unless it is a trusted proxy', () => {
    assert.equal(clientIp('::ffff:127.0.0.1', undefined), '127.0.0.1');
    assert.equal(clientIp('127.0.0.1', '203.0.113.9'), '127.0.0.1');
    assert.equal(clientIp('127.0.0.1', '203.0.113.9', ['127.0.0.1']), '203.0.113.9');
    assert.equal(clientIp('::ffff:127.0.0.1', '203.0.113.9', ['127.0.0.1']), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', '1.1.1.1, 203.0.113.9, 10.0.0.2', ['127.0.0.1', '10.0.0.2']), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', ['1.1.1.1', '203.0.113.9'], ['127.0.0.1']), '203.0.113.9');
    assert.equal(clientIp('127.0.0.1', '10.0.0.2', ['127.0.0.1', '10.0.0.2']), '10.0.0.2', 'all trusted: the leftmost');
    assert.equal(clientIp('127.0.0.1', 'garbage', ['127.0.0.1']), null);
    assert.equal(clientIp('127.0.0.1', '', ['127.0.0.1']), '127.0.0.1');
    assert.equal(clientIp('fe80::1%eth0', undefined), 'fe80::1');
    assert.equal(clientIp(undefined, '1.1.1.1'), null);
  });
});

describe('exactAccessHash', () => {
  const hash = 'ab'.repeat(40);
  it('returns the value of the one exact access_hash cookie', () => {
    assert.equal(exactAccessHash(`access_hash=${hash}`), hash);
    assert.equal(exactAccessHash(`a=1; access_hash=${hash}; b=2`), hash);
    assert.equal(exactAccessHash(`a=1;access_hash=${hash}`), hash);
  });
  it('refuses every other form', () => {
    for (const header of [
      undefined, '', 'garbage', `xaccess_hash=${hash}`, `access_hash="${hash}"`, `access_hash=${hash.toUpperCase()}`,
      `access_hash= ${hash}`, `access_hash=${hash} ; a=1`, `access_hash =${hash}`, `ACCESS_HASH=${hash}`,
      `access_hash=%61${hash.slice(1)}`, `access_hash=${hash}; access_hash=${hash}`, `access_hash=${hash}; Access_Hash=x`,
      `access_hash=${hash}0`, `access_hash=${hash.slice(1)}`, `access_hash=${'z'.repeat(80)}`,
    ]) {
      assert.equal(exactAccessHash(header), undefined, String(header));
    }
    assert.equal(exactAccessHash([`access_hash=${hash}`]), undefined, 'an array is never one header');
  });
});

describe('reserved ranges and overlaps', () => {
  it('names the reserved range a subnet touches, whatever its host bits', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1/8', 'loopback'], ['127.255.255.254/32', 'loopback'], ['126.0.0.1/7', 'loopback'],
      ['0.0.0.0/32', 'unspecified'], ['0.0.0.1/8', 'unspecified'], ['0.0.0.0/0', 'unspecified'],
      ['169.254.1.1/16', 'link-local'], ['224.0.0.1/24', 'multicast'], ['239.255.0.1/16', 'multicast'],
      ['255.255.255.255/32', 'broadcast'], ['255.255.255.1/24', 'broadcast'],
      ['::/128', 'unspecified'], ['::1/128', 'loopback'], ['::2/64', 'unspecified'], ['::ffff:127.0.0.1/128', 'ipv4-mapped'],
      ['fe80::1/64', 'link-local'], ['febf::1/16', 'link-local'], ['ff02::1/16', 'multicast'],
      ['10.0.1.1/24', null], ['192.0.2.1/24', null], ['240.0.0.1/8', null], ['fd00:1::1/64', null], ['2001:db8::1/64', null],
      ['fec0::1/10', null],
    ];
    for (const [text, kind] of cases) assert.equal(reservedRangeOf(parseCidr(text)!), kind, text);
  });

  it('tells overlapping subnets (either containing the other) from disjoint ones, never across versions', () => {
    assert.ok(cidrsOverlap(parseCidr('10.199.0.1/30')!, parseCidr('10.199.0.5/24')!));
    assert.ok(cidrsOverlap(parseCidr('10.199.0.5/24')!, parseCidr('10.199.0.1/30')!));
    assert.ok(!cidrsOverlap(parseCidr('10.199.0.1/30')!, parseCidr('10.199.0.5/30')!));
    assert.ok(cidrsOverlap(parseCidr('fd00::1/64')!, parseCidr('fd00::/16')!));
    assert.ok(!cidrsOverlap(parseCidr('0.0.0.0/0')!, parseCidr('::/0')!));
  });

  it('finds the all-zero host of a subnet (the IPv4 network address, the IPv6 subnet-router anycast)', () => {
    assert.ok(isSubnetZeroHost('fd00:1::', parseCidr('fd00:1::1/64')!));
    assert.ok(!isSubnetZeroHost('fd00:1::1', parseCidr('fd00:1::1/64')!));
    assert.ok(!isSubnetZeroHost('fd00:2::', parseCidr('fd00:1::1/64')!), 'outside the subnet');
    assert.ok(isSubnetZeroHost('10.0.1.0', parseCidr('10.0.1.1/24')!));
    assert.ok(!isSubnetZeroHost('10.0.1.0', parseCidr('10.0.1.1/31')!), '/31 has no network address');
    assert.ok(!isSubnetZeroHost('fd00::', parseCidr('fd00::/127')!));
  });
});
