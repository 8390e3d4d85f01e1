// Fixture tests of the `wg show <if> dump` parser (fixture captured from wireguard-tools 1.0.20210914).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWgDump } from '../../../panel/dataplane/render/parse-wg-dump.ts';

const PRIVATE = '4FzLsvU25UrMJmc5LuXME9BK4mUJYhyQL7aK81QbN2Q=';
const DUMP = [
  `${PRIVATE}\tLUK3spADXE3TovK8AIQSSf6p8rA7DUO/2nlKgzNK4Vo=\t51820\toff`,
  'zTaft4yn2U1I9PGHNahiYsBxH7UHZEBye5nPJEuhsiI=\t(none)\t(none)\t10.0.0.3/32\t0\t0\t0\toff',
  '37SRqeDVo+kRihXk7YnZFwgzhGBKq9b+lilMJ49zrxE=\t(none)\t192.0.2.2:41000\t10.0.0.2/32,fd00::2/128\t1700000000\t1200\t3400\t25',
  'G9mqtiJ5FMkCZw6kEY/wYSj4imSm/ppgGoR3HUOGOj8=\t(none)\t(none)\t(none)\t0\t0\t0\toff',
  '',
].join('\n');

test('parses interface and peers, sorted like wg show, without the private key', () => {
  const dump = parseWgDump(DUMP);
  assert.deepEqual(dump, {
    publicKey: 'LUK3spADXE3TovK8AIQSSf6p8rA7DUO/2nlKgzNK4Vo=',
    listenPort: 51820,
    peers: [
      {
        publicKey: '37SRqeDVo+kRihXk7YnZFwgzhGBKq9b+lilMJ49zrxE=',
        endpoint: '192.0.2.2:41000',
        allowedIps: ['10.0.0.2/32', 'fd00::2/128'],
        latestHandshake: 1700000000,
        transferRx: 1200,
        transferTx: 3400,
        persistentKeepalive: 25,
      },
      {
        publicKey: 'G9mqtiJ5FMkCZw6kEY/wYSj4imSm/ppgGoR3HUOGOj8=',
        endpoint: null,
        allowedIps: [],
        latestHandshake: 0,
        transferRx: 0,
        transferTx: 0,
        persistentKeepalive: 0,
      },
      {
        publicKey: 'zTaft4yn2U1I9PGHNahiYsBxH7UHZEBye5nPJEuhsiI=',
        endpoint: null,
        allowedIps: ['10.0.0.3/32'],
        latestHandshake: 0,
        transferRx: 0,
        transferTx: 0,
        persistentKeepalive: 0,
      },
    ],
  });
  assert.ok(!JSON.stringify(dump).includes(PRIVATE));
});

test('reads an interface without key or port', () => {
  assert.deepEqual(parseWgDump('(none)\t(none)\t0\toff\n'), { publicKey: null, listenPort: 0, peers: [] });
});

test('throws on text that is not a dump', () => {
  assert.throws(() => parseWgDump('interface: wg0\n  public key: x\n'));
  assert.throws(() => parseWgDump(`${PRIVATE}\tpub\t1\toff\nshort\tline\n`));
});
