// The sample worker can never hold a sample: one that does not start, does not answer or dies fails its requests with
// SampleWorkerError once its thread is gone; the next request gets a fresh worker.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SampleWorkerError, workerEngine } from '../../../panel/services/statistics/sample-worker-client.ts';
import { openDatabase } from '../../../panel/store/db.ts';

const entry = (name: string) => new URL(`../../fixtures/statistics/${name}`, import.meta.url);
const empty = () => ({ at: Date.now(), dumps: [], sas: null });

async function withFile(run: (file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-sample-worker-'));
  const file = join(dir, 'panel.db');
  openDatabase(file).close(); // the schema in place, as the panel leaves it
  try {
    await run(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const failsWith = (reason: SampleWorkerError['reason']) => (err: unknown) => err instanceof SampleWorkerError && err.reason === reason;

test('a worker that never says it listens fails its request at the start deadline', () => withFile(async (file) => {
  const engine = workerEngine(file, 'UTC', { entry: entry('worker-never-ready.mjs'), startTimeoutMs: 200, timeoutMs: 60_000 });
  await assert.rejects(engine.sample(empty()), failsWith('start'));
  await engine.close();
}));

test('a worker that listens but does not answer fails its request at the request deadline', () => withFile(async (file) => {
  const engine = workerEngine(file, 'UTC', { entry: entry('worker-stalls.mjs'), timeoutMs: 200 });
  await assert.rejects(engine.sample(empty()), failsWith('timeout'));
  await engine.close();
}));

test('a worker that dies fails its request at once', () => withFile(async (file) => {
  const engine = workerEngine(file, 'UTC', { entry: entry('worker-dies.mjs') });
  await assert.rejects(engine.peerLeft([1]), failsWith('exit'));
  await engine.close();
}));

test('after a stalled worker the next request gets a fresh one, which answers', () => withFile(async (file) => {
  const engine = workerEngine(file, 'UTC', { entry: entry('worker-stalls-once.mjs'), timeoutMs: 300 });
  await assert.rejects(engine.sample(empty()), failsWith('timeout'));
  // the real worker compiles its TypeScript first: a patient deadline for this one
  const patient = workerEngine(file, 'UTC', { entry: entry('worker-stalls-once.mjs') });
  const outcome = await patient.sample(empty());
  assert.equal(outcome.peers, 0);
  await Promise.all([engine.close(), patient.close()]);
}));
