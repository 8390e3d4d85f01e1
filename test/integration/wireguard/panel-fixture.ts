// Test fixture: a full panel app on a temp-dir SQLite file and the simulated driver, with an access hash for inject().
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type PanelDeps } from '../../../panel/app.ts';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import type { Dataplane } from '../../../panel/dataplane/dataplane.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import type { Clock } from '../../../shared/clock.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { issueLicenseKey } from '../../../panel/services/license-key.ts';
import { openDatabase, type Db } from '../../../panel/store/db.ts';
import type { DefaultRouteProbe } from '../../../panel/dataplane/default-route.ts';

/** A parsed envelope answer. */
export interface Answer<T = any> {
  status: number;
  body: { error: string; msg: T; status: string };
}

/** A running test panel. */
export interface TestPanel {
  app: FastifyInstance;
  db: Db;
  driver: SimulatedDriver;
  /** The simulated bundle (the driver above is its WireGuard seam). */
  dataplane: Dataplane;
  dir: string;
  /** The `cookie` header value carrying the access hash. */
  cookie: string;
  /** Sends a form-encoded request (when `form` is given) to /api/v1`path` with the access hash. */
  call<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<Answer<T>>;
  /** Like `call` but asserts success and returns `msg`. */
  ok<T = any>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<T>;
  close(): Promise<void>;
}

/** Options of {@link makePanel}. */
export interface PanelOptions {
  /** Install a license for this many accounts (default: none, the free tier of 50). */
  licenseAccounts?: number;
  clock?: Clock;
  routeProbe?: DefaultRouteProbe;
  /** A driver to use instead of a fresh SimulatedDriver (e.g. one that fails on purpose). */
  driver?: SimulatedDriver;
  /** Reuse this data directory (and its database) instead of a new temp directory; it is not removed on close. */
  dir?: string;
  /** The address the panel would listen on (server and peer subnets may not cover it). */
  listenAddress?: string;
  /** Further app dependencies (e.g. `metricsToken`, `metricsPerPeer`). */
  deps?: Partial<PanelDeps>;
}

/** Builds the panel on a fresh temp directory. Call `close()` in `finally`. */
export async function makePanel(opts: PanelOptions = {}): Promise<TestPanel> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'vpnhost-wg-test-'));
  const db = openDatabase(join(dir, 'panel.db'));
  const driver =
    opts.driver ?? new SimulatedDriver({ now: opts.clock ? () => Math.floor(opts.clock!.now().getTime() / 1000) : undefined });
  const vendor = generateKeyPairSync('ed25519');
  const dataplane = createSimulatedDataplane({ wireguard: driver });
  const app = buildApp({
    db,
    dataplane,
    dataDir: dir,
    secretBox: SecretBox.open(dir),
    baseUrl: 'http://127.0.0.1',
    version: 'test',
    clock: opts.clock,
    routeProbe: opts.routeProbe,
    licensePublicKey: vendor.publicKey,
    listenAddress: opts.listenAddress,
    ...opts.deps,
  });
  await app.ready();
  if (opts.licenseAccounts) {
    const key = await issueLicenseKey(vendor.privateKey, { accounts: opts.licenseAccounts, expires: new Date(Date.now() + 86400_000) });
    app.services.license.install(key);
  }
  const { hash } = app.services.accessHashes.create('127.0.0.1');
  const cookie = `access_hash=${hash}`;
  const call: TestPanel['call'] = async (method, path, form) => {
    const res = await app.inject({
      method,
      url: `/api/v1${path}`,
      headers: {
        cookie,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const ok: TestPanel['ok'] = async (method, path, form) => {
    const answer = await call(method, path, form);
    if (answer.body.status !== 'success') {
      throw new Error(`${method} ${path} failed: ${answer.status} ${answer.body.error}`);
    }
    return answer.body.msg;
  };
  return {
    app,
    db,
    driver,
    dataplane,
    dir,
    cookie,
    call,
    ok,
    close: async () => {
      await app.close();
      db.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
