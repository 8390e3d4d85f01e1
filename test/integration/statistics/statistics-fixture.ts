// Test fixture: a full panel on a temp-dir SQLite file, the simulated driver, a manual clock and a fixed time zone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type PanelDeps } from '../../../panel/app.ts';
import type { Dataplane } from '../../../panel/dataplane/dataplane.ts';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import type { SampleResult } from '../../../panel/services/statistics/sampler.ts';
import { manualClock } from '../../../shared/clock.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { openDatabase, type Db } from '../../../panel/store/db.ts';

/** A running statistics test panel. */
export interface StatsPanel {
  app: FastifyInstance;
  db: Db;
  driver: SimulatedDriver;
  /** The data plane the app drives (inspect it; writes go through the app). */
  dataplane: Dataplane;
  clock: ReturnType<typeof manualClock>;
  dir: string;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<{ status: number; body: any }>;
  ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<any>;
  /** Sets a peer's live counters (rx = bytes received from it, tx = bytes sent to it). */
  counters(iface: string, publicKey: string, rx: number, tx: number): void;
  /** The scheduler's sample: in the data-plane lane, every interface, then the parked peers it counted removed. */
  sample(): Promise<SampleResult>;
  close(): Promise<void>;
}

/** Builds the panel at `start` in `timeZone`; `dir`/`driver` reuse a previous one's (a restart). */
export async function makeStatsPanel(
  opts: { start?: string; timeZone?: string; dir?: string; driver?: SimulatedDriver; worker?: PanelDeps['statisticsWorker'] } = {},
): Promise<StatsPanel> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'vpnhost-stats-test-'));
  const db = openDatabase(join(dir, 'panel.db'));
  const clock = manualClock(new Date(opts.start ?? '2026-03-15T12:00:00Z'));
  const driver = opts.driver ?? new SimulatedDriver({ now: () => Math.floor(clock.now().getTime() / 1000) });
  const dataplane = createSimulatedDataplane({ wireguard: driver });
  const app = buildApp({
    db, dataplane, dataDir: dir, secretBox: SecretBox.open(dir),
    baseUrl: 'http://127.0.0.1', version: 'test', clock, timeZone: opts.timeZone ?? 'UTC',
    statisticsWorker: opts.worker,
  });
  await app.ready();
  const { hash } = app.services.accessHashes.create('127.0.0.1');
  const call: StatsPanel['call'] = async (method, path, form) => {
    const res = await app.inject({
      method, url: `/api/v1${path}`,
      headers: { cookie: `access_hash=${hash}`, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    return { status: res.statusCode, body: res.json() };
  };
  return {
    app, db, driver, dataplane, clock, dir, call,
    ok: async (method, path, form) => {
      const answer = await call(method, path, form);
      if (answer.body.status !== 'success') throw new Error(`${method} ${path} failed: ${answer.status} ${answer.body.error}`);
      return answer.body.msg;
    },
    counters: (iface, publicKey, rx, tx) => driver.simulateHandshake(iface, publicKey, { endpoint: '192.0.2.7:5000', rx, tx }),
    sample: () => app.services.dataplaneSync.serial(() => app.services.statistics.sampleAndSettle()),
    close: async () => {
      await app.close();
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
