// Unit tests of IPv4 address arithmetic: parsing, subnet bounds, free-address enumeration, subnet picking.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatIpv4, freeAddresses, hostBounds, isHostOf, isServerAddress, parseIpv4, parseV4Cidr, peerIpv6, pickServerSubnet,
} from '../../../panel/services/addressing.ts';

test('parses and formats dotted quads, including the top of the range', () => {
  assert.equal(parseIpv4('10.0.1.2'), 0x0a000102);
  assert.equal(parseIpv4('255.255.255.255'), 0xffffffff);
  assert.equal(formatIpv4(0xffffffff), '255.255.255.255');
  assert.equal(formatIpv4(parseIpv4('192.168.7.9')!), '192.168.7.9');
  for (const bad of ['10.0.1', '10.0.1.256', 'a.b.c.d', '', '::1', '10.0.1.2/32']) assert.equal(parseIpv4(bad), null, bad);
});

test('a bare address is a /32; a CIDR yields its subnet bounds', () => {
  assert.deepEqual(parseV4Cidr('10.0.110.4'), { ip: 0x0a006e04, prefix: 32, first: 0x0a006e04, last: 0x0a006e04 });
  const c = parseV4Cidr('10.0.1.77/24')!;
  assert.equal(formatIpv4(c.first), '10.0.1.0');
  assert.equal(formatIpv4(c.last), '10.0.1.255');
  assert.deepEqual(hostBounds(c), { lo: c.first + 1, hi: c.last - 1 });
  assert.equal(parseV4Cidr('10.0.0.0/0')!.last, 0xffffffff);
  for (const bad of ['10.0.1.1/33', '10.0.1.1/', '10.0.1.1/a', '10.0.1.1/24/1', 'x/24']) assert.equal(parseV4Cidr(bad), null, bad);
});

test('host membership excludes network and broadcast addresses up to /30', () => {
  const c = parseV4Cidr('10.0.1.1/24')!;
  assert.equal(isHostOf(parseIpv4('10.0.1.0')!, c), false);
  assert.equal(isHostOf(parseIpv4('10.0.1.1')!, c), true);
  assert.equal(isHostOf(parseIpv4('10.0.1.254')!, c), true);
  assert.equal(isHostOf(parseIpv4('10.0.1.255')!, c), false);
  assert.equal(isHostOf(parseIpv4('10.0.2.1')!, c), false);
  assert.equal(isServerAddress(parseV4Cidr('10.0.1.1/24')), true);
  assert.equal(isServerAddress(parseV4Cidr('10.0.1.0/24')), false);
  assert.equal(isServerAddress(parseV4Cidr('10.0.1.1/31')), false);
  assert.equal(isServerAddress(parseV4Cidr('10.0.1.1')), false);
});

test('free addresses skip the server address and the used ones, ascending, up to the limit', () => {
  const server = parseV4Cidr('10.0.5.1/29')!; // hosts .1-.6
  const used = ['10.0.5.3', '10.0.5.6'].map((ip) => parseIpv4(ip)!);
  assert.deepEqual(freeAddresses(server, used, 100), ['10.0.5.2', '10.0.5.4', '10.0.5.5']);
  assert.deepEqual(freeAddresses(server, used, 2), ['10.0.5.2', '10.0.5.4']);
  assert.deepEqual(freeAddresses(server, [], 100).length, 5);
  const full = [2, 3, 4, 5, 6].map((n) => parseIpv4(`10.0.5.${n}`)!);
  assert.deepEqual(freeAddresses(server, full, 100), []);
});

test('a /16 enumerates 65,533 free addresses next to its server address', () => {
  const server = parseV4Cidr('10.8.0.1/16')!;
  const free = freeAddresses(server, [parseIpv4('10.8.200.7')!], 70000);
  assert.equal(free.length, 65534 - 2);
  assert.equal(free[0], '10.8.0.2');
  assert.equal(free[free.length - 1], '10.8.255.254');
  assert.ok(!free.includes('10.8.200.7'));
});

test('picks the first 10.0.<n>.1/24 that overlaps no server subnet', () => {
  assert.equal(formatIpv4(pickServerSubnet([])!.ip), '10.0.1.1');
  const taken = [parseV4Cidr('10.0.1.1/24')!, parseV4Cidr('10.0.2.0/23')!];
  const picked = pickServerSubnet(taken)!;
  assert.equal(formatIpv4(picked.ip), '10.0.4.1');
  assert.equal(picked.prefix, 24);
  assert.equal(pickServerSubnet([parseV4Cidr('10.0.0.1/16')!]), null);
});

test('peer IPv6: the server network plus the IPv4 host offset; own or taken addresses move one 2^32 slot on', () => {
  const none = () => false;
  assert.equal(peerIpv6('fd00:0:0:1::1/64', 7, none), 'fd00:0:0:1::7/128');
  assert.equal(peerIpv6('FD00:0:0:1::1/64', 65535, none), 'fd00:0:0:1::ffff/128');
  assert.equal(peerIpv6('fd00:0:0:1::5/64', 5, none), 'fd00::1:0:1:0:5/128', 'the server address itself is skipped');
  const taken = new Set(['fd00:0:0:1::7/128', 'fd00::1:0:1:0:7/128']);
  assert.equal(peerIpv6('fd00:0:0:1::1/64', 7, (c) => taken.has(c)), 'fd00::1:0:2:0:7/128');
  assert.equal(peerIpv6('2001:db8::1/120', 200, none), '2001:db8::c8/128', 'small subnets work while the offset fits');
  assert.equal(peerIpv6('2001:db8::1/120', 256, none), null, 'no room for the offset');
  assert.equal(peerIpv6('2001:db8::1/120', 7, () => true), null, 'a small subnet has one slot only');
  assert.equal(peerIpv6('fd00::1/64', 7, () => true), null, 'bounded tries');
  assert.equal(peerIpv6('10.0.0.1/24', 7, none), null);
  assert.equal(peerIpv6('', 7, none), null);
});
