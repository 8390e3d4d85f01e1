// The sample worker can never hold the data-plane lane: a request without an answer in time terminates the worker,
// is sent once more to a fresh one, and then fails with WorkerTimeoutError; with time enough the same file answers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WorkerTimeoutError, workerEngine } from '../../../panel/services/statistics/sample-worker-client.ts';
import { openDatabase } from '../../../panel/store/db.ts';

test('a worker that does not answer in time is terminated, retried once, then the request fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-sample-worker-'));
  const file = join(dir, 'panel.db');
  openDatabase(file).close(); // the schema in place, as the panel leaves it
  try {
    // 1 ms: no worker can even start, both tries time out
    const hasty = workerEngine(file, 'UTC', undefined, 1);
    const started = performance.now();
    await assert.rejects(hasty.sample({ at: Date.now(), dumps: [], sas: null }), WorkerTimeoutError);
    assert.ok(performance.now() - started < 10_000, 'failed fast, not hung');
    await hasty.close();

    const patient = workerEngine(file, 'UTC');
    const outcome = await patient.sample({ at: Date.now(), dumps: [], sas: null });
    assert.equal(outcome.peers, 0);
    await patient.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
