// Fixture tests of the online-peer parsers (GET /wireguard/online): the same peers as the full dump parser keeps,
// from a captured wireguard-go get=1 answer and the `wg show dump` taken right after it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseWgDump } from '../../../panel/dataplane/render/parse-wg-dump.ts';
import { parseWgDumpSessions, parseWgUapiSessions } from '../../../panel/dataplane/render/parse-wg-sessions.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/wireguard/${name}`, import.meta.url));
const ANSWER = fixture('uapi-get-3-peers.txt');
const DUMP = fixture('wg-dump-3-peers.txt').toString('utf8');
const HANDSHAKE = 1795453074;

/** What parseWgDump says of the peers with a handshake since `since`. */
const fromFullDump = (since: number) => parseWgDump(DUMP).peers
  .filter((p) => p.latestHandshake !== 0 && p.latestHandshake >= since)
  .map(({ publicKey, endpoint, latestHandshake, transferRx, transferTx }) => ({ publicKey, endpoint, latestHandshake, transferRx, transferTx }));

test('a real get=1 answer and dump: the online peer with endpoint and counters, as the full parse has it', () => {
  const online = [{ publicKey: 'C4fGFxYB9BXOZ/GtNn8MNcD+nbm8/ZRiCHNdzEnG2Hc=', endpoint: '10.199.7.2:48641', latestHandshake: HANDSHAKE, transferRx: 532, transferTx: 476 }];
  assert.deepEqual(parseWgUapiSessions(ANSWER, HANDSHAKE), online);
  assert.deepEqual(parseWgDumpSessions(DUMP, HANDSHAKE), online);
  assert.deepEqual(fromFullDump(HANDSHAKE), online);
  assert.deepEqual(parseWgUapiSessions(ANSWER, HANDSHAKE + 1), []);
  assert.deepEqual(parseWgDumpSessions(DUMP, HANDSHAKE + 1), []);
});

test('many peers: keys converted exactly, wg show order (latest first, ties by key), never-shaken left out', () => {
  const peers = Array.from({ length: 300 }, (_, i) => ({ key: randomBytes(32), handshake: i % 3 === 0 ? 0 : 1_800_000_000 + (i % 7) }));
  const answer = Buffer.from(`${peers.map((p, i) => [
    `public_key=${p.key.toString('hex')}`, `preshared_key=${'00'.repeat(32)}`, 'protocol_version=1', `endpoint=192.0.2.1:${1000 + i}`,
    `last_handshake_time_sec=${p.handshake}`, 'last_handshake_time_nsec=5', `tx_bytes=${2 * i}`, `rx_bytes=${i}`,
    'persistent_keepalive_interval=0', `allowed_ip=10.0.${i >> 8}.${i & 255}/32`,
  ].join('\n')).join('\n')}\nerrno=0\n\n`);
  const sessions = parseWgUapiSessions(answer, 1_800_000_002);
  const want = peers
    .map((p, i) => ({ publicKey: p.key.toString('base64'), endpoint: `192.0.2.1:${1000 + i}`, latestHandshake: p.handshake, transferRx: i, transferTx: 2 * i }))
    .filter((p) => p.latestHandshake >= 1_800_000_002)
    .sort((a, b) => b.latestHandshake - a.latestHandshake || (a.publicKey < b.publicKey ? -1 : 1));
  assert.deepEqual(sessions, want);
});

test('errors: errno other than 0, no errno, a malformed key or number', () => {
  const key = 'ab'.repeat(32);
  assert.throws(() => parseWgUapiSessions(Buffer.from('errno=19\n\n'), 1), /errno=19/);
  assert.throws(() => parseWgUapiSessions(Buffer.from(`public_key=${key}\n`), 1), /no errno/);
  assert.throws(() => parseWgUapiSessions(Buffer.from(`public_key=${'zz'.repeat(32)}\nlast_handshake_time_sec=5\nerrno=0\n\n`), 1), /public_key/);
  assert.throws(() => parseWgUapiSessions(Buffer.from(`public_key=${key}\nlast_handshake_time_sec=5x\nerrno=0\n\n`), 1), /number/);
  assert.throws(() => parseWgDumpSessions('priv\tpub\t1\toff\nkey\tonly three\tcolumns\n', 1), /peer line/);
});
