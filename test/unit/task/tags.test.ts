// Task tags: `[action, 'service:<uuid>']` built and read back in one place, in any order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isServiceTag, parseTags, serialTags, serviceTag, serviceTaskTags } from '../../../module/task/tags.ts';

test('serviceTaskTags builds the spec example and parseTags reads it back in any order', () => {
  const tags = serviceTaskTags('suspend', 'a1b2');
  assert.deepEqual(tags, ['suspend', 'service:a1b2']);
  assert.deepEqual(parseTags(tags), { serviceUuid: 'a1b2', action: 'suspend' });
  assert.deepEqual(parseTags([...tags].sort()), { serviceUuid: 'a1b2', action: 'suspend' });
  assert.equal(serviceTag('x'), 'service:x');
});

test('tags without a service or an action parse to null; a bare prefix is no service tag', () => {
  assert.deepEqual(parseTags([]), { serviceUuid: null, action: null });
  assert.deepEqual(parseTags(['nightly']), { serviceUuid: null, action: 'nightly' });
  assert.deepEqual(parseTags(['service:']), { serviceUuid: null, action: 'service:' });
  assert.equal(isServiceTag('service:'), false);
  assert.deepEqual(serialTags(['create', 'service:u', 'other']), ['service:u']);
});
