// Platform credentials and logs: one Authorization header only; secrets sent in query, headers and bodies never reach the logs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { UNAUTHORIZED } from '../../../module/platform/errors.ts';
import { createPlatformLogger } from '../../../module/platform/logger.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let platform: Platform;
let app: FastifyInstance;
let dataDir: string;
let adminToken: string;
let workerToken: string;
let port: number;
/** Every log line of the platform and its HTTP app, at debug level. */
const lines: string[] = [];

before(async () => {
  dataDir = tempDir('platform-security');
  const sink = new Writable({ write: (chunk, _enc, cb) => { lines.push(String(chunk)); cb(); } });
  const logger = createPlatformLogger('debug', sink);
  platform = await Platform.open({ dataDir, logger });
  app = await buildPlatformApp({ platform, logger: logger.child({ part: 'http' }) });
  adminToken = (await platform.tokens.create('admin')).token;
  workerToken = (await platform.workerTokens.create('worker')).token;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});

after(async () => {
  await app?.close();
  await platform?.close();
  removeDir(dataDir);
});

/** One raw HTTP/1.1 request over a socket (repeated headers reach the server as sent); returns the status code. */
function rawRequest(path: string, headers: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: platform\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('platform credentials', () => {
  it('accepts one valid Authorization header and refuses two, whatever their order or values', async () => {
    assert.equal(await rawRequest('/api/admin/products', [`Authorization: Bearer ${adminToken}`]), 200);
    assert.equal(await rawRequest('/api/admin/products', [`Authorization: Bearer ${adminToken}`, `Authorization: Bearer ${adminToken}`]), 401, 'the valid token twice');
    assert.equal(await rawRequest('/api/admin/products', [`Authorization: Bearer ${adminToken}`, 'Authorization: Bearer nonsense']), 401, 'valid first');
    assert.equal(await rawRequest('/api/admin/products', ['Authorization: Bearer nonsense', `Authorization: Bearer ${adminToken}`]), 401, 'valid last');
    assert.equal(await rawRequest('/api/admin/products', [`authorization: Bearer ${adminToken}`, `AUTHORIZATION: Bearer ${adminToken}`]), 401, 'names in other cases');
    assert.equal(await rawRequest('/api/worker/info', [`Authorization: Bearer ${workerToken}`]), 200);
    assert.equal(await rawRequest('/api/worker/info', [`Authorization: Bearer ${workerToken}`, `Authorization: Bearer ${workerToken}`]), 401, 'worker API too');
  });

  it('refuses two tokens folded into one header (what inject and some proxies send)', async () => {
    const single = await app.inject({ method: 'GET', url: '/api/admin/products', headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(single.statusCode, 200);
    const folded = await app.inject({ method: 'GET', url: '/api/admin/products', headers: { authorization: `Bearer ${adminToken}, Bearer ${adminToken}` } });
    assert.equal(folded.statusCode, 401);
    assert.deepEqual(folded.json(), { error: UNAUTHORIZED });
  });
});

describe('platform logs', () => {
  it('hold no secret sent in the query string, in headers or in bodies (debug level, errors included)', async () => {
    const hash = randomBytes(40).toString('hex');
    const password = `Pw-${randomBytes(9).toString('base64url')}`;
    const privateKey = randomBytes(32).toString('base64');
    const wrongToken = `vpa_${randomBytes(32).toString('hex')}`;
    const secrets = { adminToken, workerToken, hash, password, privateKey, wrongToken };
    const query = `access_hash=${hash}&token=${adminToken}&password=${encodeURIComponent(password)}&private_key=${encodeURIComponent(privateKey)}`;
    const admin = { authorization: `Bearer ${adminToken}` };
    const requests: InjectOptions[] = [
      // query strings, on answered, refused, unknown and open routes
      { method: 'GET', url: `/api/admin/products?${query}`, headers: admin },
      { method: 'GET', url: `/api/admin/tasks?${query}`, headers: admin },
      { method: 'GET', url: `/api/admin/products?${query}` },
      { method: 'GET', url: `/api/admin/no-such-route?${query}`, headers: admin },
      { method: 'GET', url: `/no-such-route?${query}` },
      { method: 'GET', url: `/healthz?${query}` },
      { method: 'GET', url: `/api/worker/info?${query}`, headers: { authorization: `Bearer ${workerToken}` } },
      // headers
      { method: 'GET', url: '/api/admin/products', headers: { authorization: `Bearer ${wrongToken}`, cookie: `access_hash=${hash}`, 'x-access-hash': hash, 'x-password': password } },
      { method: 'GET', url: '/api/admin/products', headers: { authorization: `Bearer ${workerToken}` } },
      { method: 'GET', url: '/api/worker/info', headers: { authorization: `Bearer ${adminToken}` } },
      { method: 'GET', url: '/api/worker/info', headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` } },
      // bodies: refused, invalid, failing and malformed
      { method: 'POST', url: '/api/admin/products', headers: admin, payload: { module: 'VpnProduct', product_data: { server_location: `http://127.0.0.1:1/?access_hash=${hash}`, access_hash: hash, password } } },
      { method: 'POST', url: '/api/admin/products', headers: admin, payload: { module: 'NoSuchModule', product_data: { access_hash: hash, private_key: privateKey } } },
      { method: 'POST', url: '/api/admin/products', payload: { module: 'VpnProduct', product_data: { access_hash: hash } } },
      { method: 'POST', url: '/api/admin/services', headers: admin, payload: { product_uuid: 'none', service_data: { password, private_key: privateKey, access_hash: hash } } },
      { method: 'POST', url: '/api/admin/services', headers: { ...admin, 'content-type': 'application/json' }, payload: `{"service_data":{"password":"${password}","private_key":"${privateKey}"` },
      { method: 'POST', url: '/api/admin/products', headers: { ...admin, 'content-type': 'application/json' }, payload: `{"module": "VpnProduct", "product_data": {"secret": "${hash}"}}}` },
      { method: 'POST', url: '/api/worker/module-logs', headers: { authorization: `Bearer ${wrongToken}` }, payload: { entries: [{ password, private_key: privateKey }] } },
    ];
    for (const request of requests) await app.inject(request);
    const text = lines.join('');
    // The requests were logged (fastify's own request lines and the refusals), with redacted URLs.
    assert.ok(lines.some((line) => line.includes('"incoming request"') && line.includes('/api/admin/products?[redacted]')), 'fastify request lines at debug');
    assert.ok(lines.some((line) => line.includes('"event":"auth_failed"')), 'refusals logged');
    for (const [name, value] of Object.entries(secrets)) {
      assert.equal(text.includes(value), false, `${name} appears in the logs`);
      assert.equal(text.includes(encodeURIComponent(value)), false, `${name} (URL-encoded) appears in the logs`);
    }
  });
});
