// Tests of the X25519 key math and CIDR normalisation (the forms wg and ip print).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeAddress, normalizeAllowedIp, networkOf, parseCidr } from '../../../panel/dataplane/cidr.ts';
import { generateKeyPair, isValidKey, publicKeyFrom } from '../../../panel/dataplane/keys.ts';

test('public key from a private key matches the RFC 7748 test vector', () => {
  // RFC 7748 §6.1 Alice: private a546e36b..., public 8520f009...
  const priv = Buffer.from('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a', 'hex').toString('base64');
  const pub = Buffer.from('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a', 'hex').toString('base64');
  assert.equal(publicKeyFrom(priv), pub);
});

test('generated pairs are consistent, clamped and well-formed', () => {
  const pair = generateKeyPair();
  assert.equal(publicKeyFrom(pair.privateKey), pair.publicKey);
  const raw = Buffer.from(pair.privateKey, 'base64');
  assert.equal(raw[0] & 7, 0);
  assert.equal(raw[31] & 0xc0, 0x40);
  assert.ok(isValidKey(pair.privateKey) && isValidKey(pair.publicKey));
});

test('key format checks', () => {
  assert.equal(isValidKey('abc'), false);
  assert.equal(isValidKey(`${'A'.repeat(42)}==`), false);
  assert.equal(isValidKey(`${'A'.repeat(43)}=`), true);
  assert.equal(isValidKey(`${'A'.repeat(42)}B=`), false, 'non-zero padding bits');
  assert.equal(isValidKey(42), false);
  assert.throws(() => publicKeyFrom('nope'));
});

test('allowed IPs are masked and canonical like wg prints them', () => {
  assert.equal(normalizeAllowedIp('10.0.0.9/24'), '10.0.0.0/24');
  assert.equal(normalizeAllowedIp('10.0.0.9'), '10.0.0.9/32');
  assert.equal(normalizeAllowedIp('fd00:0:0::1/128'), 'fd00::1/128');
  assert.equal(normalizeAllowedIp('FD00:0:0:7:0:0:0:1/64'), 'fd00:0:0:7::/64');
  assert.equal(normalizeAllowedIp('10.0.0.300/32'), null);
  assert.equal(normalizeAllowedIp('10.0.0.1/33'), null);
  assert.equal(normalizeAllowedIp('::ffff:10.0.0.1/128'), '::ffff:10.0.0.1/128');
});

test('interface addresses keep host bits; networkOf masks them', () => {
  assert.equal(normalizeAddress('10.0.1.1/24'), '10.0.1.1/24');
  assert.equal(normalizeAddress('fd00:0:0:7::1/64'), 'fd00:0:0:7::1/64');
  assert.equal(networkOf('10.0.1.1/24'), '10.0.1.0/24');
  assert.deepEqual(parseCidr('10.1.2.3/8'), { family: 4, value: 0x0a010203n, prefix: 8 });
  assert.equal(parseCidr('1.2.3.4/8/1'), null);
});
