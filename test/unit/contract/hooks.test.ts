// The typed event bus of hooks.ts: listener order, unsubscription, failing listeners never break the emitter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createHooks, HOOK_EVENTS, type ServiceEvent } from '../../../hooks.ts';
import { EventBus } from '../../../module/contract/event-bus.ts';

const event: ServiceEvent = { service_uuid: 's1', product_uuid: 'p1', module: 'VpnProduct', at: '2026-01-01T00:00:00.000Z' };

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { lines, logger };
}

test('listeners run in order, sync and async, and can be removed', async () => {
  const bus = new EventBus<{ ping: number }>();
  const seen: string[] = [];
  bus.on('ping', (n) => void seen.push(`a${n}`));
  const off = bus.on('ping', async (n) => {
    await new Promise((r) => setImmediate(r));
    seen.push(`b${n}`);
  });
  bus.on('ping', (n) => void seen.push(`c${n}`));
  await bus.emit('ping', 1);
  off();
  await bus.emit('ping', 2);
  assert.deepEqual(seen, ['a1', 'b1', 'c1', 'a2', 'c2']);
  assert.equal(bus.listenerCount('ping'), 2);
});

test('a throwing or rejecting listener is reported and the others still run', async () => {
  const errors: string[] = [];
  const bus = new EventBus<{ ping: number }>((name, error) => errors.push(`${name}: ${(error as Error).message}`));
  const seen: number[] = [];
  bus.on('ping', () => {
    throw new Error('sync boom');
  });
  bus.on('ping', async () => Promise.reject(new Error('async boom')));
  bus.on('ping', (n) => void seen.push(n));
  assert.equal(await bus.emit('ping', 7), 2);
  assert.deepEqual(seen, [7]);
  assert.deepEqual(errors, ['ping: sync boom', 'ping: async boom']);
  const quiet = new EventBus<{ ping: number }>(() => {
    throw new Error('handler broken too');
  });
  quiet.on('ping', () => {
    throw new Error('x');
  });
  assert.equal(await quiet.emit('ping', 1), 1);
});

test('createHooks registers the default logging listener on every service event', async () => {
  const { lines, logger } = capture();
  const hooks = createHooks(logger);
  for (const name of HOOK_EVENTS) assert.equal(hooks.listenerCount(name), 1, name);
  await hooks.emit('service.provisioned', event);
  await hooks.emit('service.failed', { ...event, action: 'create', reason: 'Service creation failed' });
  assert.deepEqual(lines.map((l) => [l.level, l.event, l.service_uuid]), [
    [30, 'service.provisioned', 's1'],
    [40, 'service.failed', 's1'],
  ]);
  assert.equal(lines[1].reason, 'Service creation failed');
});

test('a plugin listener that throws is logged by the bus and the emitter carries on', async () => {
  const { lines, logger } = capture();
  const hooks = createHooks(logger);
  hooks.on('service.terminated', () => {
    throw new Error('plugin bug');
  });
  assert.equal(await hooks.emit('service.terminated', event), 1);
  assert.ok(lines.some((l) => l.msg === 'hook listener failed' && l.err === 'plugin bug' && l.event === 'service.terminated'));
  assert.ok(lines.some((l) => l.event === 'service.terminated' && l.msg === 'service event'));
});

test('settled waits for the running emits and for those their listeners start meanwhile', async () => {
  const bus = new EventBus<{ first: number; second: number }>();
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  bus.on('first', async (n) => {
    await gate;
    seen.push(`first${n}`);
    void bus.emit('second', n + 1);
  });
  bus.on('second', async (n) => {
    await new Promise((r) => setImmediate(r));
    seen.push(`second${n}`);
  });
  void bus.emit('first', 1);
  let settled = false;
  const waiting = bus.settled().then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'a listener is still running');
  release();
  await waiting;
  assert.deepEqual(seen, ['first1', 'second2'], 'the emit a listener started finished too');
  await bus.settled();
});
