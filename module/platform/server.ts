// Starts a platform process: store + modules + workers + the admin API on HOST:PORT; close() shuts down gracefully.
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from './app.ts';
import { parseListen } from './listen.ts';
import { Platform, type PlatformOptions } from './platform.ts';

export interface StartOptions extends PlatformOptions {
  /** `HOST:PORT` (port 0 picks a free one), default 127.0.0.1:8090. */
  listen?: string;
  /** Job slots in this process (default 8); 0 runs no workers. */
  workers?: number;
}

export interface RunningPlatform {
  url: string;
  platform: Platform;
  app: FastifyInstance;
  /** Stops accepting, finishes in-flight requests and attempts, closes pools and the database. */
  close(): Promise<void>;
}

/** Opens the platform, starts its workers and listens; what `vpnhost platform serve` and `npm start` run. */
export async function startPlatform(opts: StartOptions): Promise<RunningPlatform> {
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:8090');
  const platform = await Platform.open(opts);
  let app: FastifyInstance | null = null;
  try {
    app = await buildPlatformApp({ platform });
    await app.listen({ host, port });
    if ((opts.workers ?? 8) > 0) await platform.startWorkers(opts.workers ?? 8);
    else await platform.startSweeper();
    await platform.startScheduled();
  } catch (err) {
    await app?.close();
    await platform.close();
    throw err;
  }
  const address = app.server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const server = app;
  return {
    url, platform, app: server,
    async close() {
      await server.close();
      await platform.close();
    },
  };
}

/** A worker-only process (`vpnhost platform worker`): no API, just job slots on the shared Redis queue. */
export async function startWorkerOnly(opts: PlatformOptions & { workers?: number }): Promise<{ platform: Platform; close(): Promise<void> }> {
  const platform = await Platform.open(opts);
  try {
    await platform.startWorkers(opts.workers ?? 8);
  } catch (err) {
    await platform.close();
    throw err;
  }
  return { platform, close: () => platform.close() };
}
