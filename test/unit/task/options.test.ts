// Task option defaults (the spec's Limits: tries 1, backoff 10 s, timeout 600 s, maxExceptions 2) and validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveOptions, splitOptions } from '../../../module/task/options.ts';
import { DEFAULT_TASK_OPTIONS } from '../../../module/task/queue.ts';

test('defaults are the spec limits', () => {
  assert.deepEqual(DEFAULT_TASK_OPTIONS, { tries: 1, backoff: 10, timeout: 600, maxExceptions: 2 });
  assert.deepEqual(resolveOptions(), DEFAULT_TASK_OPTIONS);
  assert.deepEqual(resolveOptions({ tries: 3 }), { tries: 3, backoff: 10, timeout: 600, maxExceptions: 2 });
});

test('resolveOptions accepts sub-second seconds and rejects impossible values', () => {
  assert.deepEqual(resolveOptions({ backoff: 0, timeout: 0.5 }), { tries: 1, backoff: 0, timeout: 0.5, maxExceptions: 2 });
  assert.throws(() => resolveOptions({ tries: 0 }));
  assert.throws(() => resolveOptions({ tries: 1.5 }));
  assert.throws(() => resolveOptions({ backoff: -1 }));
  assert.throws(() => resolveOptions({ timeout: 0 }));
  assert.throws(() => resolveOptions({ maxExceptions: 0 }));
});

test('splitOptions moves the ModuleJob keys out of the input and requires integers', () => {
  const { input, options } = splitOptions({ module: { type: 'Product' }, method: 'createJob', tries: 3, backoff: 60, timeout: 120, maxExceptions: 1 });
  assert.deepEqual(input, { module: { type: 'Product' }, method: 'createJob' });
  assert.deepEqual(options, { tries: 3, backoff: 60, timeout: 120, maxExceptions: 1 });
  assert.deepEqual(splitOptions({ method: 'x', tries: null }).options, {});
  assert.throws(() => splitOptions({ backoff: 1.5 }));
  assert.throws(() => splitOptions({ tries: '3' }));
});
