// The request loggers of the platform app: made only when a message passes the level, with Fastify's bindings then.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { lazyChildLoggerFactory } from '../../../module/platform/lazy-child-logger.ts';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { lines, logger: pino({ level, redact: ['password', '*.password'] }, stream) };
}

test('below the level nothing is written; at the level the line carries the request id and is redacted', async () => {
  const { lines, logger } = capture('warn');
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, childLoggerFactory: lazyChildLoggerFactory });
  app.get('/quiet', async (request) => { request.log.info('not written'); return { ok: true }; });
  app.get('/loud', async (request) => { request.log.warn({ body: { password: 'hunter2' } }, 'written'); return { ok: true }; });
  assert.equal((await app.inject('/quiet')).statusCode, 200);
  assert.equal(lines.length, 0);
  assert.equal((await app.inject('/loud')).statusCode, 200);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, 'written');
  assert.match(String(lines[0].reqId), /^req-/);
  assert.deepEqual(lines[0].body, { password: '[Redacted]' });
  await app.close();
});

test('a route log level and a level set on the request logger are honoured; child() binds on top', async () => {
  const { lines, logger } = capture('warn');
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, childLoggerFactory: lazyChildLoggerFactory, disableRequestLogging: true });
  app.get('/info', { logLevel: 'info' }, async (request) => { request.log.info('route level'); return {}; });
  app.get('/raise', async (request) => { request.log.level = 'error'; request.log.warn('dropped'); request.log.child({ part: 'x' }).error('bound'); return {}; });
  await app.inject('/info');
  await app.inject('/raise');
  assert.deepEqual(lines.map((l) => l.msg), ['route level', 'bound']);
  assert.equal(lines[1].part, 'x');
  assert.match(String(lines[1].reqId), /^req-/);
  await app.close();
});
