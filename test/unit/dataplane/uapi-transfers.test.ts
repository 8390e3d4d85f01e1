// The UAPI socket reader against a fake daemon on a unix socket in a temp directory: the answer's end split over
// writes, no daemon (no file, a stale file), a cut connection and a silent daemon.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { uapiSocketPath } from '../../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { readUapiAnswer, readUapiTransfers } from '../../../panel/dataplane/wireguard/linux/uapi-transfers.ts';

const KEY = 'ef'.repeat(32);

/** A fake daemon for `wg9` in a temp dir; `answer` runs once the request `get=1\n\n` has arrived whole. */
async function withDaemon(answer: (socket: Socket) => void, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-uapi-test-'));
  const server = createServer((socket) => {
    let request = '';
    socket.on('data', (d) => {
      request += d.toString();
      if (request === 'get=1\n\n') answer(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(uapiSocketPath('wg9', dir), resolve));
  try {
    await body(dir);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('reads the whole answer when its closing empty line arrives in a write of its own', async () => {
  const head = `listen_port=1\npublic_key=${KEY}\nrx_bytes=7\ntx_bytes=9\nerrno=0\n`;
  await withDaemon((socket) => {
    socket.write(head);
    setTimeout(() => socket.write('\n'), 20); // the daemon keeps the connection open: the reader must stop by itself
  }, async (dir) => {
    assert.equal((await readUapiAnswer('wg9', { dir }))!.toString(), `${head}\n`);
    const counters = (await readUapiTransfers('wg9', { dir }))!;
    assert.deepEqual([counters.keys[0], counters.rx[0], counters.tx[0]], [Buffer.from(KEY, 'hex').toString('base64'), 7, 9]);
  });
});

test('no daemon: no socket file, or a file nobody accepts on, is null', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-uapi-test-'));
  try {
    assert.equal(await readUapiAnswer('wg9', { dir }), null);
    writeFileSync(join(dir, 'wg7.sock'), ''); // connect() to a file nobody listens on is refused, as after kill -9
    assert.equal(await readUapiAnswer('wg7', { dir }), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a connection cut before the end, or no answer in time, throws', async () => {
  await withDaemon((socket) => socket.end(`public_key=${KEY}\n`), async (dir) => {
    await assert.rejects(readUapiAnswer('wg9', { dir }), /closed before the answer ended/);
  });
  await withDaemon(() => undefined, async (dir) => {
    await assert.rejects(readUapiAnswer('wg9', { dir, timeoutMs: 100 }), /no answer within 100 ms/);
  });
});
