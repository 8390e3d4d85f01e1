// Envelope on every failure path: malformed and oversize bodies, media types, unknown routes, unexpected errors, logs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envelope, makeHarness } from './harness.ts';

describe('HTTP error paths', () => {
  it('malformed or unsupported bodies answer a 4xx envelope, never 5xx', async () => {
    const h = await makeHarness();
    try {
      const cookie = `access_hash=${h.hash}`;
      const cases: Array<[string | undefined, string, number, string]> = [
        ['application/json', '{"traffic_statistics_frequency": ', 400, 'Malformed request body'],
        ['application/json', '[1,2,3]', 400, 'Malformed request body'],
        ['application/json', '"just a string"', 400, 'Malformed request body'],
        ['application/json', '42', 400, 'Malformed request body'],
        ['text/plain', 'hello', 400, 'Malformed request body'],
        ['application/xml', '<a/>', 415, 'Unsupported content type'],
        ['multipart/form-data; boundary=x', '--x--', 415, 'Unsupported content type'],
        ['application/x-www-form-urlencoded', '%%%=%%%&&==', 200, ''],
        ['application/json; charset=utf-8', '{"wireguard_handshake_uptime":"7"}', 200, ''],
        ['application/json', '   ', 200, ''],
        ['application/json', 'null', 200, ''],
        ['application/json', '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}', 200, ''],
      ];
      for (const [type, payload, code, error] of cases) {
        const headers: Record<string, string> = { cookie };
        if (type) headers['content-type'] = type;
        const res = await h.app.inject({ method: 'PUT', url: '/api/v1/system/config', headers, payload });
        assert.equal(res.statusCode, code, `${type} ${payload}: ${res.body}`);
        assert.equal(envelope(res).error, error, `${type} ${payload}`);
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      const big = await h.app.inject({
        method: 'PUT', url: '/api/v1/system/config', payload: `a=${'x'.repeat(1024 * 1024 + 10)}`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(big.statusCode, 413);
      assert.equal(envelope(big).error, 'Request body too large');
      // DELETE and PUT bodies are parsed as forms too (same parser on every method).
      const del = await h.app.inject({ method: 'DELETE', url: '/api/v1/wireguard/nope', payload: 'x=1', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' } });
      assert.ok(del.statusCode < 500);
      envelope(del);
    } finally {
      await h.close();
    }
  });

  it('unknown routes and methods answer the 404 envelope, inside and outside /api/v1', async () => {
    const h = await makeHarness();
    try {
      for (const [method, url] of [['GET', '/'], ['GET', '/nope'], ['POST', '/api'], ['GET', '/api/v2/system/status'],
        ['DELETE', '/api/v1/system/status'], ['PATCH', '/api/v1/system/config'], ['GET', '/api/v1/system/status/extra']] as const) {
        const res = await h.call(method, url);
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.deepEqual(envelope(res), { error: 'Not found', msg: '', status: 'error' });
        assert.match(String(res.headers['content-type']), /^application\/json/);
      }
    } finally {
      await h.close();
    }
  });

  it('an unexpected error answers 500 with a generic text and request id, logged without the cookie', async () => {
    const h = await makeHarness();
    try {
      h.app.services.systemConfig.get = () => {
        throw new Error('disk on fire /var/secret/path');
      };
      const res = await h.call('GET', '/api/v1/system/config');
      assert.equal(res.statusCode, 500);
      const body = envelope(res);
      assert.match(body.error, /^Internal server error \(request id [0-9a-f-]{36}\)$/);
      assert.ok(!res.body.includes('disk on fire') && !res.body.includes('at '), 'no message, no stack');
      const id = /request id ([0-9a-f-]+)/.exec(body.error)![1];
      const logged = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === id && l.msg === 'unexpected error');
      assert.ok(logged, 'the error is logged with the request id');
      assert.match(JSON.stringify(logged), /disk on fire/);
    } finally {
      await h.close();
    }
  });

  it('logs never contain the access hash, cookies or secret body fields', async () => {
    const h = await makeHarness();
    try {
      const secret = 'S3cr3t-P4ss-value-xyz';
      await h.call('GET', '/api/v1/system/status');
      await h.call('PUT', '/api/v1/system/config', { form: { password: secret, traffic_statistics_frequency: 'bad' } });
      await h.app.inject({ method: 'GET', url: '/api/v1/system/status', headers: { cookie: 'access_hash=deadbeef' } });
      h.app.log.info({ access_hash: h.hash, password: secret, private_key: secret, headers: { cookie: h.hash }, nested: { key: secret } }, 'probe');
      const text = h.logs.join('\n');
      const accessLines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.part === 'access');
      assert.equal(accessLines.length, 3, 'each request is logged once');
      assert.ok(!text.includes(h.hash), 'access hash absent');
      assert.ok(!text.includes(secret), 'secret absent');
      assert.ok(!text.includes('deadbeef'), 'cookie absent');
      assert.match(text, /\[redacted\]/);
    } finally {
      await h.close();
    }
  });
});
