// Fixture tests of the UAPI `get=1` counter parser (answers captured from wireguard-go 0.0.20220316: 3 peers, one with
// traffic; 3 peers, two of them parked without allowed IPs; the `wg show dump` taken right after each from the same interface).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseWgTransfers } from '../../../panel/dataplane/render/parse-wg-transfers.ts';
import { parseWgUapiTransfers } from '../../../panel/dataplane/render/parse-wg-uapi-transfers.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/wireguard/${name}`, import.meta.url));
const ANSWER = fixture('uapi-get-3-peers.txt');
const DUMP = fixture('wg-dump-3-peers.txt').toString('utf8');

const byKey = (t: { keys: string[]; rx: Float64Array; tx: Float64Array }) => new Map(t.keys.map((k, i) => [k, [t.rx[i], t.tx[i]]]));

test('a real get=1 answer: base64 keys and rx/tx, the same as wg show dump of the same interface', () => {
  const parsed = parseWgUapiTransfers(ANSWER);
  assert.deepEqual(parsed.keys, [
    'C4fGFxYB9BXOZ/GtNn8MNcD+nbm8/ZRiCHNdzEnG2Hc=',
    'DIhAmwjNhQeIRv9YE9XfvkXNTTFFZXXrYfoKqB9bigw=',
    'gnSgzhlYq7Tn5BaWcNg0hNS1uf9cnuowLSUNKXLE7To=',
  ]);
  assert.deepEqual([...parsed.rx], [532, 0, 0]);
  assert.deepEqual([...parsed.tx], [476, 0, 0]);
  assert.deepEqual(byKey(parsed), byKey(parseWgTransfers(DUMP)));
});

test('an interface without peers, and counters above 2^32', () => {
  assert.deepEqual(parseWgUapiTransfers(Buffer.from('private_key=00\nlisten_port=1\nerrno=0\n\n')).keys, []);
  const key = 'ab'.repeat(32);
  const big = parseWgUapiTransfers(Buffer.from(`public_key=${key}\nrx_bytes=123456789012345\ntx_bytes=4294967296\nerrno=0\n\n`));
  assert.deepEqual(big.keys, [Buffer.from(key, 'hex').toString('base64')]);
  assert.equal(big.rx[0], 123456789012345);
  assert.equal(big.tx[0], 4294967296);
});

test('many peers: the columns grow past their first capacity', () => {
  const lines: string[] = [];
  for (let i = 0; i < 2500; i++) lines.push(`public_key=${i.toString(16).padStart(64, '0')}`, `tx_bytes=${i * 2}`, `rx_bytes=${i}`);
  const parsed = parseWgUapiTransfers(Buffer.from(`${lines.join('\n')}\nerrno=0\n\n`));
  assert.equal(parsed.keys.length, 2500);
  assert.equal(parsed.rx[2499], 2499);
  assert.equal(parsed.tx[2499], 4998);
  assert.equal(Buffer.from(parsed.keys[2499], 'base64').toString('hex'), (2499).toString(16).padStart(64, '0'));
});

test('errors: errno other than 0, no errno, malformed key or counter, a counter before any peer', () => {
  const key = 'cd'.repeat(32);
  assert.throws(() => parseWgUapiTransfers(Buffer.from('errno=19\n\n')), /errno=19/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from(`public_key=${key}\nrx_bytes=1\n`)), /no errno/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from(`public_key=${'zz'.repeat(32)}\nerrno=0\n\n`)), /public_key/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from(`public_key=${key.slice(2)}\nerrno=0\n\n`)), /public_key/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from(`public_key=${key}\nrx_bytes=12x\nerrno=0\n\n`)), /number/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from('rx_bytes=1\nerrno=0\n\n')), /before public_key/);
  assert.throws(() => parseWgUapiTransfers(Buffer.from(`public_key=${key}\nno equals sign\nerrno=0\n\n`)), /without =/);
});

test('parked peers (no allowed IP) with their endpoints, the same from get=1 and from wg show dump', () => {
  const answer = parseWgUapiTransfers(fixture('uapi-get-parked.txt'));
  const dump = parseWgTransfers(fixture('wg-dump-parked.txt').toString('utf8'));
  const parked = [
    ['CowKHRaRczAJQfjk/p109udm4y/6Dz2+TLnI0jinXl0=', '192.0.2.11:40002'],
    ['I2A+BENQzB55WLAap1xnN3TqQ9NDT33iMLKJZCvizT8=', null],
  ];
  const sorted = (list: unknown[][] | undefined) => [...(list ?? [])].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  assert.equal(answer.keys.length, 3);
  assert.deepEqual(sorted(answer.parked), parked);
  assert.deepEqual(sorted(dump.parked), parked);
  assert.deepEqual(parseWgUapiTransfers(ANSWER).parked, [], 'peers with allowed IPs are not parked');
  assert.deepEqual(parseWgTransfers(DUMP).parked, []);
});
