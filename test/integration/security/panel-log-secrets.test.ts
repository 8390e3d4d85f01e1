// Panel logs at debug level: secrets sent in the query string, in headers and in bodies never appear in any log line.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { makeHarness } from '../panel-core/harness.ts';

describe('panel logs', () => {
  it('hold no secret from queries, headers or bodies, on answered, refused, malformed and failing requests', async () => {
    const h = await makeHarness();
    try {
      const keys = generateKeyPair();
      const secrets = {
        accessHash: h.hash,
        otherHash: randomBytes(40).toString('hex'),
        adminToken: `vpa_${randomBytes(32).toString('hex')}`,
        workerToken: `vpw_${randomBytes(32).toString('hex')}`,
        password: `Pw-${randomBytes(9).toString('base64url')}`,
        privateKey: keys.privateKey,
        otlKey: randomBytes(40).toString('hex'),
      };
      const query = new URLSearchParams({
        access_hash: secrets.accessHash, token: secrets.adminToken, worker_token: secrets.workerToken,
        password: secrets.password, private_key: secrets.privateKey,
      }).toString();
      const cookie = `access_hash=${h.hash}`;
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const json = { 'content-type': 'application/json' };
      await h.call('POST', '/api/v1/wireguard', { form: { name: 'srv' } });
      const requests: InjectOptions[] = [
        // query strings: authorised, refused, unknown routes, the hash as a bare key, a one-time-link key in the path
        { method: 'GET', url: `/api/v1/system/status?${query}`, headers: { cookie } },
        { method: 'GET', url: `/api/v1/system/status?${query}` },
        { method: 'GET', url: `/api/v1/no/such/route?${query}`, headers: { cookie } },
        { method: 'GET', url: `/no/such/page?${query}` },
        { method: 'GET', url: `/api/v1/account?${secrets.accessHash}` },
        { method: 'GET', url: `/otl/${secrets.otlKey}?${query}` },
        { method: 'GET', url: `/%zz?${query}` },
        // headers: the hash and tokens where a careless client puts them
        { method: 'GET', url: '/api/v1/system/status', headers: { cookie: `access_hash=${secrets.otherHash}`, 'x-access-hash': h.hash } },
        { method: 'GET', url: '/api/v1/system/status', headers: { authorization: `Bearer ${secrets.adminToken}`, 'x-worker-token': secrets.workerToken } },
        { method: 'GET', url: '/api/v1/system/status', headers: { cookie: `access_hash=${h.hash.toUpperCase()}` } },
        { method: 'GET', url: '/api/v1/system/status', headers: { cookie: `access_hash="${h.hash}"; password=${secrets.password}` } },
        { method: 'GET', url: '/api/v1/system/status', headers: { cookie, authorization: `Basic ${Buffer.from(`admin:${secrets.password}`).toString('base64')}` } },
        // bodies: accepted, invalid, refused before parsing, malformed
        { method: 'POST', url: '/api/v1/account', headers: { cookie, ...form }, payload: new URLSearchParams({ wg_name: 'srv', password: secrets.password, private_key: secrets.privateKey, public_key: keys.publicKey }).toString() },
        { method: 'POST', url: '/api/v1/account', headers: { cookie, ...form }, payload: new URLSearchParams({ wg_name: 'srv', password: secrets.password, private_key: `${secrets.privateKey}x` }).toString() },
        { method: 'POST', url: '/api/v1/account', headers: { cookie, ...json }, payload: JSON.stringify({ wg_name: 'nope', password: secrets.password, private_key: secrets.privateKey, access_hash: h.hash }) },
        { method: 'POST', url: '/api/v1/account', headers: json, payload: JSON.stringify({ password: secrets.password, private_key: secrets.privateKey }) },
        { method: 'PUT', url: '/api/v1/system/config', headers: { cookie, ...json }, payload: `{"password":"${secrets.password}","token":"${secrets.adminToken}"` },
        { method: 'PUT', url: '/api/v1/system/config', headers: { cookie, ...form }, payload: `password=${encodeURIComponent(secrets.password)}&worker_token=${secrets.workerToken}&traffic_statistics_frequency=x` },
        { method: 'PUT', url: '/api/v1/system/config', headers: { cookie, 'content-type': 'text/plain' }, payload: `${secrets.password} ${secrets.privateKey}` },
      ];
      for (const request of requests) await h.app.inject(request);
      // An unexpected error whose message quotes a URL with a secret in its query.
      h.app.services.systemConfig.get = () => {
        throw new Error(`upstream http://example.test/api?access_hash=${secrets.accessHash}&password=${secrets.password} failed`);
      };
      assert.equal((await h.call('GET', '/api/v1/system/config')).statusCode, 500);

      const parsed = h.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(parsed.some((l) => l.part === 'access' && l.url === '/api/v1/system/status?[redacted]'), 'access lines with the query redacted');
      assert.ok(parsed.some((l) => l.part === 'access' && l.url === '/otl/[redacted]?[redacted]'), 'one-time-link key masked');
      assert.ok(parsed.some((l) => l.event === 'auth_failed' && l.security === true), 'refusals logged as security events');
      assert.ok(parsed.some((l) => l.msg === 'unexpected error' && JSON.stringify(l).includes('?[redacted]')), 'the error is logged, its URL redacted');
      const text = h.logs.join('');
      for (const [name, value] of Object.entries(secrets)) {
        for (const form of new Set([value, encodeURIComponent(value), value.toUpperCase()])) {
          assert.equal(text.includes(form), false, `${name} appears in the logs`);
        }
      }
    } finally {
      await h.close();
    }
  });
});
