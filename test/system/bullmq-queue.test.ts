// The TaskQueue contract against BullMQ on a real redis-server started for this file (loopback, no persistence).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after } from 'node:test';
import { Redis } from 'ioredis';
import { requireTools } from '../helpers/require-tools.ts';
import { createHarness } from '../fixtures/task/harness.ts';
import { runTaskQueueContract } from '../contract/task-queue.contract.ts';

interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return { url, stop };
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  await stop();
  throw new Error('redis-server did not start');
}

let server: Promise<RedisServer> | undefined;
after(async () => {
  if (server) await (await server).stop();
});

runTaskQueueContract('bullmq', async (t) => {
  if (!requireTools(t, ['redis-server'])) return null;
  server ??= startRedis();
  const { url } = await server;
  return createHarness({ url, prefix: `vpnhost-test-${randomUUID().slice(0, 8)}`, pollMs: 50, lockDurationMs: 2000, stalledIntervalMs: 500 });
});
