// X25519 in plain JavaScript: RFC 7748's vectors, the fixed-base comb against the ladder, node:crypto's answers for
// random keys, and key pairs in a row (the former generation through node:crypto key objects deadlocked its thread
// within about 15,000 pairs; this test makes 2,000).
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { generateKeyPair, publicKeyFrom } from '../../../panel/dataplane/keys.ts';
import { x25519PublicKey } from '../../../panel/dataplane/x25519.ts';
import { x25519 } from '../../helpers/x25519-ladder.ts';

const hex = (s: string) => Buffer.from(s, 'hex');

test('RFC 7748 section 5.2 vectors (the scalar clamped, the u-coordinate\'s top bit masked)', () => {
  assert.equal(
    x25519(hex('a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4'), hex('e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c')).toString('hex'),
    'c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552');
  assert.equal(
    x25519(hex('4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d'), hex('e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493')).toString('hex'),
    '95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957');
});

test('public keys by the fixed-base comb equal the ladder on u = 9, for random and extreme private keys', () => {
  const nine = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 9 : 0));
  const keys = [Buffer.alloc(32), Buffer.alloc(32, 0xff), ...Array.from({ length: 200 }, () => randomBytes(32))];
  for (const k of keys) assert.equal(x25519PublicKey(k).toString('hex'), x25519(k, nine).toString('hex'), k.toString('hex'));
});

test('the same public keys as node:crypto for random private keys', () => {
  const pkcs8 = hex('302e020100300506032b656e04220420');
  for (let i = 0; i < 100; i++) {
    const raw = randomBytes(32);
    const native = createPublicKey(createPrivateKey({ key: Buffer.concat([pkcs8, raw]), format: 'der', type: 'pkcs8' })).export({ format: 'jwk' }).x!;
    assert.equal(publicKeyFrom(raw.toString('base64')), Buffer.from(native, 'base64url').toString('base64'));
  }
});

test('2,000 key pairs in a row, all different; a pair is consistent', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2_000; i++) seen.add(generateKeyPair().publicKey);
  assert.equal(seen.size, 2_000);
  const pair = generateKeyPair();
  assert.equal(publicKeyFrom(pair.privateKey), pair.publicKey);
});
