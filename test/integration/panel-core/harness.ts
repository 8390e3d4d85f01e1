// Test harness for panel integration tests: a full app on a real SQLite file in a temp dir with the simulated driver.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { KeyObject } from 'node:crypto';
import { buildApp } from '../../../panel/app.ts';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import type { Dataplane } from '../../../panel/dataplane/dataplane.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { createLogger } from '../../../panel/logger.ts';
import type { Clock } from '../../../shared/clock.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { databasePath, openDatabase, type Db } from '../../../panel/store/db.ts';

/** A built app with one access hash for 127.0.0.1 and captured log lines. */
export interface Harness {
  app: FastifyInstance;
  db: Db;
  dir: string;
  driver: SimulatedDriver;
  /** The simulated bundle (the driver above is its WireGuard seam). */
  dataplane: Dataplane;
  /** Access hash bound to 127.0.0.1 (the inject default address). */
  hash: string;
  /** Every log line written so far. */
  logs: string[];
  /** inject with the access-hash cookie. */
  call(method: InjectOptions['method'], url: string, opts?: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  trustProxy?: string[];
  licensePublicKey?: KeyObject | string | null;
  clock?: Clock;
}

/** Builds the harness; always `await h.close()` in `finally`. */
export async function makeHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-panel-core-'));
  const db = openDatabase(databasePath(dir));
  const driver = new SimulatedDriver();
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const dataplane = createSimulatedDataplane({ wireguard: driver });
  const app = buildApp({
    db,
    dataplane,
    dataDir: dir,
    secretBox: SecretBox.open(dir),
    logger: createLogger({ level: 'debug', destination }),
    baseUrl: 'http://panel.test',
    version: '9.9.9-test',
    trustProxy: opts.trustProxy,
    licensePublicKey: opts.licensePublicKey ?? null,
    clock: opts.clock,
  });
  await app.ready();
  const { hash } = app.services.accessHashes.create('127.0.0.1', 'harness');
  const call: Harness['call'] = (method, url, o = {}) => {
    const headers: Record<string, string> = { cookie: `access_hash=${hash}`, ...(o.headers ?? {}) };
    let payload: string | undefined;
    if (o.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(o.form).toString();
    } else if (o.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      payload = JSON.stringify(o.json);
    }
    return app.inject({ method, url, headers, payload });
  };
  return {
    app, db, dir, driver, dataplane, hash, logs, call,
    async close() {
      await app.close();
      await driver.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Parses an envelope and checks its shape; returns it. */
export function envelope(res: LightMyRequestResponse): { error: string; msg: unknown; status: string } {
  const body = JSON.parse(res.body) as { error: string; msg: unknown; status: string };
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,msg,status') throw new Error(`not an envelope: ${res.body}`);
  return body;
}
