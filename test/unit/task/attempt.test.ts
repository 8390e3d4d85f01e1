// One attempt: outcome classification, timeout abort, and the retry decision table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyResult, decide, runAttempt, timeoutMessage, UNKNOWN_ERROR } from '../../../module/task/attempt.ts';
import { DEFAULT_TASK_OPTIONS } from '../../../module/task/queue.ts';

const ctx = { taskId: 't', attempt: 1, timeout: 5 };

test('a result completes, an error result fails without exception, a throw is an exception', async () => {
  assert.deepEqual(await runAttempt(async () => ({ status: 'success' }), {}, ctx), { kind: 'completed', result: { status: 'success' } });
  assert.deepEqual(await runAttempt(async () => undefined, {}, ctx), { kind: 'completed', result: null });
  assert.deepEqual(await runAttempt(async () => ({ status: 'error', message: 'Suspension failed' }), {}, ctx), {
    kind: 'failed', message: 'Suspension failed', exception: false,
  });
  assert.deepEqual(await runAttempt(async () => { throw new Error('boom'); }, {}, ctx), { kind: 'failed', message: 'boom', exception: true });
  assert.deepEqual(await runAttempt(() => { throw new TypeError('sync'); }, {}, ctx), { kind: 'failed', message: 'sync', exception: true });
});

test('classifyResult renders non-string messages', () => {
  assert.deepEqual(classifyResult({ status: 'error' }), { kind: 'failed', message: UNKNOWN_ERROR, exception: false });
  assert.deepEqual(classifyResult({ status: 'error', message: { domain: ['required'] } }), { kind: 'failed', message: '{"domain":["required"]}', exception: false });
});

test('the timeout aborts the signal and fails the attempt even if the handler ignores it', async () => {
  let seen: AbortSignal | undefined;
  const outcome = await runAttempt(async (_input, c) => {
    seen = c.signal;
    await new Promise(() => undefined);
  }, {}, { ...ctx, timeout: 0.05 });
  assert.deepEqual(outcome, { kind: 'failed', message: timeoutMessage(0.05), exception: false });
  assert.equal(seen?.aborted, true);
});

test('a stop signal ends the attempt as stopped', async () => {
  const stop = new AbortController();
  const running = runAttempt(async (_input, c) => new Promise((resolve) => c.signal.addEventListener('abort', resolve)), {}, { ...ctx, stopSignal: stop.signal });
  stop.abort();
  assert.equal((await running).kind, 'stopped');
});

test('decide: retry while tries are left, fail on tries or maxExceptions', () => {
  const options = { ...DEFAULT_TASK_OPTIONS, tries: 3, backoff: 2, maxExceptions: 2 };
  const now = 1_000_000;
  assert.deepEqual(decide({ attempts: 1, exceptions: 0, options }, { kind: 'failed', message: 'x', exception: false }, now), {
    status: 'pending', exceptions: 0, lastError: 'x', result: null, availableAt: now + 2000,
  });
  assert.equal(decide({ attempts: 3, exceptions: 0, options }, { kind: 'failed', message: 'x', exception: false }, now).status, 'failed');
  assert.equal(decide({ attempts: 1, exceptions: 1, options }, { kind: 'failed', message: 'x', exception: true }, now).status, 'failed');
  assert.equal(decide({ attempts: 1, exceptions: 1, options }, { kind: 'failed', message: 'x', exception: false }, now).status, 'pending');
  assert.deepEqual(decide({ attempts: 2, exceptions: 1, options }, { kind: 'completed', result: { a: 1 } }, now).status, 'completed');
});
