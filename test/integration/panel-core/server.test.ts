// startPanel in process: listens, reconciles on boot, and close() finishes in-flight requests before closing the DB.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { createLogger } from '../../../panel/logger.ts';
import { parseListen, startPanel, type RunningPanel } from '../../../panel/server.ts';

describe('panel server', () => {
  it('parses HOST:PORT for IPv4, names and bracketed IPv6', () => {
    assert.deepEqual(parseListen('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseListen('localhost:0'), { host: 'localhost', port: 0 });
    assert.deepEqual(parseListen('[::1]:9000'), { host: '::1', port: 9000 });
    for (const bad of ['8080', '::1:80', '1.2.3.4:70000', 'host:', ':80']) assert.throws(() => parseListen(bad), bad);
  });

  it('finishes an in-flight request on close, refuses new connections, then closes the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-server-'));
    const driver = new SimulatedDriver();
    let panel: RunningPanel | null = null;
    try {
      panel = await startPanel({
        listen: '127.0.0.1:0', dataDir: dir, driver: 'simulated', wireguard: 'auto', externalInterface: null, trustProxy: [],
        licensePublicKeyPem: null, dataplaneInstance: createSimulatedDataplane({ wireguard: driver }), logger: createLogger({ destination: new Writable({ write: (_c, _e, cb) => cb() }) }),
      });
      await panel.bootReconcile;
      const { hash } = panel.app.services.accessHashes.create('127.0.0.1');
      // A request node's HTTP parser refuses still gets the envelope.
      const raw = await new Promise<string>((resolve, reject) => {
        const { port } = new URL(panel!.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.equal(raw.split('\r\n\r\n')[1], '{"error":"Bad request","msg":"","status":"error"}');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inHealth = new Promise<void>((resolve) => (entered = resolve));
      driver.health = async () => {
        entered();
        await gate;
        return { ok: true };
      };
      const inflight = fetch(`${panel.url}/api/v1/system/status`, { headers: { cookie: `access_hash=${hash}`, connection: 'close' } });
      await inHealth;
      const closing = panel.close();
      await assert.rejects(fetch(`${panel.url}/api/v1/system/status`, { headers: { connection: 'close' } }), 'no new connections');
      release();
      const res = await inflight;
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { msg: { status: string } }).msg.status, 'OK');
      await closing;
      assert.throws(() => panel!.app.services.accessHashes.list(), /database connection is not open/);
      panel = null;
    } finally {
      await panel?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
