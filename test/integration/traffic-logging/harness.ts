// Harness for traffic logging tests: a full app (simulated data plane) with a hand-driven flow source and one server + account.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../../panel/app.ts';
import type { Dataplane } from '../../../panel/dataplane/dataplane.ts';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { SimulatedFlowSource } from '../../../panel/dataplane/traffic-log/simulated/simulated-flow-source.ts';
import type { FlowEvent } from '../../../panel/services/traffic-logging/flow-event.ts';
import type { ShipperOptions } from '../../../panel/services/traffic-logging/shipper.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { databasePath, openDatabase, type Db } from '../../../panel/store/db.ts';

export interface TlHarness {
  app: FastifyInstance;
  db: Db;
  source: SimulatedFlowSource;
  /** The data plane the app drives (inspect it; writes go through the app). */
  dataplane: Dataplane;
  call(method: 'GET' | 'PUT' | 'POST', url: string, form?: Record<string, string>, cookie?: boolean): Promise<LightMyRequestResponse>;
  /** PUT with a JSON body. */
  putJson(url: string, body: unknown): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Builds the app; always `await h.close()` in `finally`. */
export async function makeTlHarness(shipper?: ShipperOptions): Promise<TlHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-tl-'));
  const db = openDatabase(databasePath(dir));
  const driver = new SimulatedDriver();
  const source = new SimulatedFlowSource();
  const dataplane = createSimulatedDataplane({ wireguard: driver });
  const app = buildApp({
    db, dataplane, dataDir: dir, secretBox: SecretBox.open(dir),
    baseUrl: 'http://panel.test', version: '9.9.9-test', trafficLogging: { source, shipper },
  });
  await app.ready();
  const { hash } = app.services.accessHashes.create('127.0.0.1', 'tl');
  const call: TlHarness['call'] = (method, url, form, cookie = true) =>
    app.inject({
      method, url,
      headers: { ...(cookie ? { cookie: `access_hash=${hash}` } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
  const putJson: TlHarness['putJson'] = (url, body) =>
    app.inject({ method: 'PUT', url, headers: { cookie: `access_hash=${hash}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return {
    app, db, source, dataplane, call, putJson,
    async close() {
      await app.services.trafficLogging.stop();
      await app.close();
      await driver.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A NEW TCP event from `src` to 192.0.2.10:443. */
export function newFlow(src: string, sport = 40000, time = new Date('2026-11-23T10:00:00.123Z')): FlowEvent {
  return { time, state: 'new', family: 4, protocol: 'tcp', src, dst: '192.0.2.10', sport, dport: 443, interface_in: 'wg0', interface_out: 'eth0', length: 60, tos: 0, mark: 7 };
}

/** Parses an envelope. */
export function env(res: LightMyRequestResponse): { error: string; msg: unknown; status: string } {
  return JSON.parse(res.body) as { error: string; msg: unknown; status: string };
}
