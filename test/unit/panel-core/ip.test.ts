// IP parsing, canonical forms, CIDR containment, client address behind proxies and cookie reading.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientIp, readCookie } from '../../../panel/http/client-ip.ts';
import { canonicalIp, cidrContains, ipVersion, parseCidr, sameIp } from '../../../panel/schemas/ip.ts';

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

describe('readCookie', () => {
  it('finds the named cookie among others', () => {
    assert.equal(readCookie('a=1; access_hash=abc; b=2', 'access_hash'), 'abc');
    assert.equal(readCookie('access_hash="abc"', 'access_hash'), 'abc');
    assert.equal(readCookie('xaccess_hash=abc', 'access_hash'), undefined);
    assert.equal(readCookie('access_hash=%zz', 'access_hash'), '%zz');
    assert.equal(readCookie(undefined, 'access_hash'), undefined);
    assert.equal(readCookie('garbage', 'access_hash'), undefined);
  });
});
