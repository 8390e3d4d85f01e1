// Contract suite of TaskQueue, run against every backend (embedded SQLite here, BullMQ on a real Redis in system).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { LOST_WORKER_ERROR, timeoutMessage } from '../../module/task/attempt.ts';
import type { TaskQueue } from '../../module/task/queue.ts';
import { probe, registerFixtureHandlers } from '../fixtures/task/handlers.ts';
import type { QueueHarness } from '../fixtures/task/harness.ts';
import { nodeScriptArgs } from '../helpers/node-script.ts';

/** Builds a fresh harness (own database, own Redis prefix), or null when the backend's tools are missing. */
export type MakeHarness = (t: TestContext) => Promise<QueueHarness | null>;

const root = new URL('../..', import.meta.url).pathname;
const WAIT = 20_000;

/** Opens a queue with the fixture jobs registered and, unless `started` is false, started. */
async function openQueue(h: QueueHarness, started = true): Promise<TaskQueue> {
  const queue = h.open();
  registerFixtureHandlers(queue);
  if (started) await queue.start({ concurrency: 2 });
  return queue;
}

/** Runs `body` with a harness; skipped when `make` answers null; always cleaned up. */
async function withHarness(t: TestContext, make: MakeHarness, body: (h: QueueHarness) => Promise<void>): Promise<void> {
  const h = await make(t);
  if (!h) return;
  try {
    await body(h);
  } finally {
    await h.close();
  }
}

function spawnWorker(h: QueueHarness): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, nodeScriptArgs('../fixtures/task/worker', import.meta.url), {
    cwd: root,
    env: { ...process.env, ...h.childEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { child, output: () => text };
}

async function waitForFiles(paths: string[], child: ChildProcess, output: () => string): Promise<void> {
  for (let waited = 0; waited < WAIT; waited += 50) {
    if (paths.every((path) => existsSync(path))) return;
    if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}): ${output()}`);
    await sleep(50);
  }
  throw new Error(`worker did not start the tasks: ${output()}`);
}

/** Registers the contract tests of a TaskQueue backend under `label`. */
export function runTaskQueueContract(label: string, make: MakeHarness): void {
  describe(`TaskQueue contract: ${label}`, { concurrency: true }, () => {
    test('runs an added task to completion and records its result', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const added = await queue.add('echo', 'Module', { value: 42 }, ['create', 'service:a']);
        assert.equal(added.status, 'pending');
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'completed');
        assert.equal(done.attempts, 1);
        assert.equal(done.exceptions, 0);
        assert.equal(done.lastError, null);
        assert.deepEqual(done.result, { echo: 42, attempt: 1, tries: 1, password: null });
        assert.deepEqual(done.tags, ['create', 'service:a']);
        assert.deepEqual(done.options, { tries: 1, backoff: 10, timeout: 600, maxExceptions: 2 });
      });
    });

    test('stop lets the running attempt finish, then awaits the drain, whose adds are still queued; then it is closed', async (t) => {
      await withHarness(t, make, async (h) => {
        const order: string[] = [];
        let followUp: Promise<{ id: string; status: string }> | null = null;
        const queue = h.open({
          drain: async () => {
            order.push('drain');
            // what a hook listener of the last outcome does: queue a follow-up task
            followUp = queue.add('echo', 'Module', { value: 'after' }, ['notification']);
            await followUp;
          },
        });
        registerFixtureHandlers(queue);
        await queue.start({ concurrency: 2 });
        const held = await queue.add('hold', 'Module', { key: 'stop-drain' }, []);
        for (let waited = 0; !probe.gates.has('stop-drain'); waited += 10) {
          if (waited > WAIT) throw new Error('the held attempt did not start');
          await sleep(10);
        }
        const stopping = queue.stop(WAIT).then(() => order.push('stopped'));
        await sleep(20);
        order.push('released');
        probe.gates.get('stop-drain')!();
        await stopping;
        assert.deepEqual(order, ['released', 'drain', 'stopped']);
        assert.equal((await queue.get(held.id))?.status, 'completed');
        const added = await followUp!;
        assert.equal(added.status, 'pending');
        assert.equal((await queue.get(added.id))?.status, 'pending', 'recorded, for a started queue to run');
        const next = await openQueue(h);
        assert.equal((await next.waitFor(added.id, WAIT)).status, 'completed', 'and a later queue runs it');
      });
    });

    test('hands the handler the real input but stores and shows secrets redacted', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const secret = 'Sup3r-Secret-Pw';
        const added = await queue.add('echo', 'Module', { value: 'x', password: secret }, ['secret']);
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'completed');
        assert.equal(probe.received.get(added.id)?.password, secret);
        assert.equal(done.input.password, '[redacted]');
        assert.deepEqual(done.result, { echo: 'x', attempt: 1, tries: 1, password: '[redacted]' });
        const failing = await queue.add('leak', 'Module', { api_key: secret }, []);
        const failed = await queue.waitFor(failing.id, WAIT);
        assert.equal(failed.lastError, 'login with [redacted] refused');
        const db = new Database(h.dbPath, { readonly: true });
        try {
          const rows = JSON.stringify(db.prepare('SELECT * FROM tasks').all());
          assert.ok(!rows.includes(secret), 'the secret is not stored in clear');
        } finally {
          db.close();
        }
      });
    });

    test('retries up to `tries` attempts', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const enough = await queue.add('flaky', 'Module', { succeedOn: 3 }, [], { tries: 3, backoff: 0 });
        const short = await queue.add('flaky', 'Module', { succeedOn: 3, n: 2 }, [], { tries: 2, backoff: 0 });
        const ok = await queue.waitFor(enough.id, WAIT);
        assert.equal(ok.status, 'completed');
        assert.equal(ok.attempts, 3);
        assert.deepEqual(ok.result, { ok: true, attempt: 3 });
        const ko = await queue.waitFor(short.id, WAIT);
        assert.equal(ko.status, 'failed');
        assert.equal(ko.attempts, 2);
        assert.equal(ko.lastError, 'attempt 2 failed');
        assert.equal(probe.starts.get(short.id)?.length, 2);
      });
    });

    test('raises queued, attempt failed will retry, and finished completed/failed events, once each, in order', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const seen: string[] = [];
        queue.events.on((event) => {
          const step = String(event.task.input.succeedOn ?? event.task.input.value ?? '');
          seen.push(`${step}:${event.type}${event.type === 'finished' ? `:${event.outcome}` : ''}:${event.task.attempts}`);
        });
        const retried = await queue.add('flaky', 'Module', { succeedOn: 2 }, [], { tries: 2, backoff: 0 });
        assert.equal((await queue.waitFor(retried.id, WAIT)).status, 'completed');
        const exhausted = await queue.add('flaky', 'Module', { succeedOn: 9 }, [], { tries: 2, backoff: 0 });
        assert.equal((await queue.waitFor(exhausted.id, WAIT)).status, 'failed');
        const duplicateOf = await queue.add('echo', 'Module', { value: 'once' }, ['same'], {});
        await queue.add('echo', 'Module', { value: 'once' }, ['same'], {});
        await queue.waitFor(duplicateOf.id, WAIT);
        assert.deepEqual(seen, [
          '2:queued:0', '2:retrying:1', '2:finished:completed:2',
          '9:queued:0', '9:retrying:1', '9:finished:failed:2',
          'once:queued:0', 'once:finished:completed:1',
        ]);
      });
    });

    test('waits at least `backoff` between attempts', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const added = await queue.add('flaky', 'Module', { succeedOn: 3 }, [], { tries: 3, backoff: 1 });
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'completed');
        const starts = probe.starts.get(added.id) ?? [];
        const ends = probe.ends.get(added.id) ?? [];
        assert.equal(starts.length, 3);
        for (let i = 1; i < starts.length; i++) {
          // Clock reads of two code paths (ms resolution): allow a few ms of rounding.
          assert.ok(starts[i] - ends[i - 1] >= 1000 - 5, `attempt ${i + 1} started ${starts[i] - ends[i - 1]} ms after attempt ${i} ended`);
        }
      });
    });

    test('aborts an attempt at its timeout and counts it failed', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const added = await queue.add('hang', 'Module', {}, [], { tries: 1, timeout: 0.5 });
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'failed');
        assert.equal(done.attempts, 1);
        assert.equal(done.exceptions, 0);
        assert.equal(done.lastError, timeoutMessage(0.5));
        assert.equal(probe.aborted.get(added.id), timeoutMessage(0.5));
        assert.equal(done.result, null, 'what the handler returned after the abort is ignored');
      });
    });

    test('fails early once exceptions reach maxExceptions', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const two = await queue.add('throw', 'Module', { message: 'boom' }, [], { tries: 5, backoff: 0, maxExceptions: 2 });
        const one = await queue.add('throw', 'Module', { message: 'bang' }, [], { tries: 5, backoff: 0, maxExceptions: 1 });
        const a = await queue.waitFor(two.id, WAIT);
        assert.equal(a.status, 'failed');
        assert.equal(a.attempts, 2);
        assert.equal(a.exceptions, 2);
        assert.equal(a.lastError, 'boom');
        const b = await queue.waitFor(one.id, WAIT);
        assert.equal(b.status, 'failed');
        assert.equal(b.attempts, 1);
        assert.equal(b.exceptions, 1);
        assert.equal(probe.starts.get(one.id)?.length, 1);
      });
    });

    test('an error result fails the attempt without counting as an exception', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const added = await queue.add('errorResult', 'Module', { message: 'Service creation failed' }, [], { tries: 3, backoff: 0, maxExceptions: 1 });
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'failed');
        assert.equal(done.attempts, 3);
        assert.equal(done.exceptions, 0);
        assert.equal(done.lastError, 'Service creation failed');
      });
    });

    test('records an identical pending task as duplicate and does not run it', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h, false);
        const first = await queue.add('echo', 'Module', { value: 1, nested: { a: 1, b: 2 } }, ['create', 'service:d']);
        const again = await queue.add('echo', 'Module', { nested: { b: 2, a: 1 }, value: 1 }, ['service:d', 'create']);
        assert.equal(first.status, 'pending');
        assert.equal(again.status, 'duplicate');
        const otherTags = await queue.add('echo', 'Module', { value: 1, nested: { a: 1, b: 2 } }, ['suspend', 'service:d']);
        const otherQueue = await queue.add('echo', 'Other', { value: 1, nested: { a: 1, b: 2 } }, ['create', 'service:d']);
        assert.equal(otherTags.status, 'pending');
        assert.equal(otherQueue.status, 'pending');
        const dup = await queue.waitFor(again.id, 1000);
        assert.equal(dup.status, 'duplicate');
        assert.equal(dup.duplicateOf, first.id);
        await queue.start({ concurrency: 2 });
        for (const id of [first.id, otherTags.id, otherQueue.id]) assert.equal((await queue.waitFor(id, WAIT)).status, 'completed');
        assert.equal(probe.received.has(again.id), false);
        assert.equal((await queue.get(again.id))?.attempts, 0);
        const later = await queue.add('echo', 'Module', { value: 1, nested: { a: 1, b: 2 } }, ['create', 'service:d']);
        assert.equal(later.status, 'pending');
        assert.equal((await queue.waitFor(later.id, WAIT)).status, 'completed');
      });
    });

    test('tasks of one service run one at a time in queue order; other services are not held up', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h, false);
        const key = `gate-${Math.random()}`;
        const first = await queue.add('hold', 'Module', { key }, ['create', 'service:serial']);
        const second = await queue.add('echo', 'Module', { value: 'after' }, ['termination', 'service:serial']);
        const other = await queue.add('echo', 'Module', { value: 'other' }, ['create', 'service:elsewhere']);
        await queue.start({ concurrency: 3 });
        assert.equal((await queue.waitFor(other.id, WAIT)).status, 'completed');
        for (let waited = 0; !probe.gates.has(key) && waited < WAIT; waited += 20) await sleep(20);
        assert.ok(probe.gates.has(key), 'the first task of the service started');
        assert.equal((await queue.get(second.id))?.status, 'pending');
        assert.equal(probe.received.has(second.id), false, 'the later task of the service waits while a slot is free');
        probe.gates.get(key)!();
        const done = await queue.waitFor(second.id, WAIT);
        assert.equal(done.status, 'completed');
        assert.equal(done.attempts, 1, 'waiting used no attempt');
        assert.equal((await queue.get(first.id))?.status, 'completed');
        assert.ok(probe.starts.get(second.id)![0] >= probe.ends.get(first.id)![0], 'started after the first one ended');
      });
    });

    test('lists tasks by tag', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const a = await queue.add('echo', 'Module', { value: 'a' }, ['create', 'service:one']);
        const b = await queue.add('echo', 'Module', { value: 'b' }, ['suspend', 'service:one']);
        const c = await queue.add('echo', 'Module', { value: 'c' }, ['create', 'service:two']);
        for (const id of [a.id, b.id, c.id]) await queue.waitFor(id, WAIT);
        const one = await queue.list({ tag: 'service:one' });
        assert.deepEqual(one.map((r) => r.id).sort(), [a.id, b.id].sort());
        const created = await queue.list({ tag: 'create', status: 'completed' });
        assert.deepEqual(created.map((r) => r.id).sort(), [a.id, c.id].sort());
        assert.deepEqual(await queue.list({ tag: 'service:none' }), []);
        assert.equal((await queue.list({ tag: 'service:one', limit: 1 })).length, 1);
      });
    });

    test('retries a failed task with fresh attempts', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h);
        const key = `switch-${Math.random()}`;
        const added = await queue.add('switch', 'Module', { key }, ['service:r'], { tries: 1 });
        const failed = await queue.waitFor(added.id, WAIT);
        assert.equal(failed.status, 'failed');
        assert.equal(failed.lastError, 'switch is off');
        probe.switches.add(key);
        const again = await queue.retry(added.id);
        assert.equal(again.status, 'pending');
        assert.equal(again.attempts, 0);
        const done = await queue.waitFor(added.id, WAIT);
        assert.equal(done.status, 'completed');
        assert.equal(done.attempts, 1);
        assert.deepEqual(done.result, { on: true });
        await assert.rejects(queue.retry(added.id), /not failed/);
      });
    });

    test('waitFor rejects after its timeout and on an unknown id', async (t) => {
      await withHarness(t, make, async (h) => {
        const queue = await openQueue(h, false);
        const added = await queue.add('echo', 'Module', { value: 'never started' }, []);
        await assert.rejects(queue.waitFor(added.id, 300), /did not finish within 300 ms/);
        await assert.rejects(queue.waitFor('no-such-task', 300), /not found/);
        assert.equal((await queue.get(added.id))?.status, 'pending');
      });
    });

    test('a task in flight in a killed worker process ends per its tries', async (t) => {
      await withHarness(t, make, async (h) => {
        const producer = await openQueue(h, false);
        const once = await producer.add('slow', 'Module', { marker: join(h.dir, 'once'), ms: 120_000 }, ['crash'], { tries: 1 });
        const twice = await producer.add('slow', 'Module', { marker: join(h.dir, 'twice'), ms: 120_000 }, ['crash'], { tries: 2, backoff: 0 });
        const { child, output } = spawnWorker(h);
        try {
          await waitForFiles([join(h.dir, 'once'), join(h.dir, 'twice')], child, output);
          assert.equal((await producer.get(once.id))?.status, 'processing');
          child.kill('SIGKILL');
          await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
        } finally {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        }
        const worker = await openQueue(h);
        const a = await worker.waitFor(once.id, WAIT);
        assert.equal(a.status, 'failed');
        assert.equal(a.attempts, 1);
        assert.equal(a.lastError, LOST_WORKER_ERROR);
        const b = await worker.waitFor(twice.id, WAIT);
        assert.equal(b.status, 'completed');
        assert.equal(b.attempts, 2);
        assert.deepEqual(b.result, { attempt: 2, pid: process.pid });
      });
    });
  });
}
