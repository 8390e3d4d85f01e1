// The provisioning pipeline's skeleton, for the provisioning bench: the same hops a service takes end to end, with every
// store write, module and check left out. Per service: an HTTP POST to a Fastify route in this process, which adds a
// BullMQ job; a Worker (the bench's slot count) runs it by POSTing a form to a bare Fastify "panel" in a child process
// (undici Pool, keep-alive) and adding a second, no-op job (the provisioning mail); the service is done when that one
// completes. Its rate against the no-op floor is the most any implementation of this pipeline shape can reach on the
// machine the bench runs on.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Queue, Worker } from 'bullmq';
import Fastify from 'fastify';
import { Pool } from 'undici';

/** A bare panel: POST /api/v1/account answers the panel's success envelope; prints its port on stdout. */
const BARE_PANEL = `
const Fastify = require('fastify');
const app = Fastify();
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, new URLSearchParams(body)));
app.post('/api/v1/account', async (req) => ({ error: '', msg: { username: req.body.get('username'), status: 'enabled' }, status: 'success' }));
app.listen({ host: '127.0.0.1', port: 0 }).then(() => process.stdout.write(app.server.address().port + '\\n'));
`;

async function startBarePanel(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', BARE_PANEL], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  const [chunk] = (await Promise.race([
    once(child.stdout!, 'data'),
    once(child, 'exit').then(() => { throw new Error('bare panel exited before listening'); }),
  ])) as [Buffer];
  return { url: `http://127.0.0.1:${chunk.toString().trim()}`, child };
}

/**
 * Runs `services` services through the skeleton on Redis `redisUrl` with `slots` job slots and `httpParallel` requests
 * in flight; answers services/s. `beforeStop` runs while the bare panel still lives (to read its CPU).
 */
export async function pipelineSkeletonRate(redisUrl: string, services: number, slots: number, httpParallel: number, beforeStop: () => void): Promise<number> {
  const connection = { url: redisUrl, maxRetriesPerRequest: null } as const;
  const name = `skeleton-${process.pid}`;
  const queue = new Queue(name, { connection });
  const panel = await startBarePanel();
  const pool = new Pool(panel.url, { connections: slots });
  const app = Fastify();
  let mailed = 0;
  let resolveAll!: () => void;
  let failAll!: (error: Error) => void;
  const all = new Promise<void>((resolve, reject) => {
    resolveAll = resolve;
    failAll = reject;
  });
  const worker = new Worker(name, async (job) => {
    if (job.name === 'mail') return null;
    const res = await pool.request({
      method: 'POST', path: '/api/v1/account',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: job.data.uuid, password: 'BenchPassw0rd', server: 'bench' }).toString(),
    });
    const answer = (await res.body.json()) as { status: string };
    if (answer.status !== 'success') throw new Error('bare panel refused');
    await queue.add('mail', { uuid: job.data.uuid }, { removeOnComplete: true });
    return answer;
  }, { connection, concurrency: slots });
  worker.on('completed', (job) => {
    if (job.name === 'mail' && ++mailed === services) resolveAll();
  });
  worker.on('failed', (_job, err) => failAll(err));
  app.post<{ Params: { uuid: string } }>('/api/admin/services/:uuid/create', async (req) => {
    await queue.add('create', { uuid: req.params.uuid }, { removeOnComplete: true });
    return { status: 'success' };
  });
  try {
    await worker.waitUntilReady();
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const uuids = Array.from({ length: services }, (_, i) => `service-${i}`);
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: Math.min(httpParallel, services) }, async () => {
      while (next < uuids.length) {
        const res = await fetch(`${url}/api/admin/services/${uuids[next++]}/create`, { method: 'POST', signal: AbortSignal.timeout(30_000) });
        if ((await res.json()).status !== 'success') throw new Error('skeleton create refused');
      }
    }));
    await all;
    const rate = services / ((performance.now() - started) / 1000);
    beforeStop();
    return rate;
  } finally {
    await worker.close();
    await app.close();
    await pool.close();
    panel.child.kill();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}
