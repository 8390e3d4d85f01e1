// Access-hash authentication through inject(): cookie, IP binding (IPv4, IPv6, ::ffff:), deletion, X-Forwarded-For.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { AccessHashService } from '../../../panel/services/access-hashes.ts';
import { databasePath, openDatabase } from '../../../panel/store/db.ts';
import { AccessHashRepository } from '../../../panel/store/repositories/access-hashes.ts';
import { envelope, makeHarness, type Harness } from './harness.ts';

const STATUS = '/api/v1/system/status';

async function get(h: Harness, opts: { cookie?: string; remoteAddress?: string; xff?: string; url?: string }) {
  const headers: Record<string, string> = {};
  if (opts.cookie !== undefined) headers.cookie = opts.cookie;
  if (opts.xff !== undefined) headers['x-forwarded-for'] = opts.xff;
  return h.app.inject({ method: 'GET', url: opts.url ?? STATUS, headers, remoteAddress: opts.remoteAddress });
}

function assertUnauthorized(res: Awaited<ReturnType<typeof get>>, label: string) {
  assert.equal(res.statusCode, 401, label);
  assert.deepEqual(envelope(res), { error: E.NOT_AUTHORIZED, msg: '', status: 'error' }, label);
}

describe('access-hash authentication', () => {
  it('refuses a missing, empty, malformed or unknown hash and accepts the right one', async () => {
    const h = await makeHarness();
    try {
      assertUnauthorized(await get(h, {}), 'no cookie');
      assertUnauthorized(await get(h, { cookie: 'access_hash=' }), 'empty');
      assertUnauthorized(await get(h, { cookie: 'access_hash=xyz' }), 'malformed');
      assertUnauthorized(await get(h, { cookie: `access_hash=${'0'.repeat(80)}` }), 'unknown');
      const flipped = `${h.hash.slice(0, 79)}${h.hash[79] === 'a' ? 'b' : 'a'}`;
      assertUnauthorized(await get(h, { cookie: `access_hash=${flipped}` }), 'one char off');
      assertUnauthorized(await get(h, { cookie: `other=${h.hash}` }), 'wrong cookie name');
      const ok = await get(h, { cookie: `theme=dark; access_hash=${h.hash}; lang=en` });
      assert.equal(ok.statusCode, 200);
      assert.equal(envelope(ok).status, 'success');
      assertUnauthorized(await get(h, { cookie: `access_hash=${h.hash.toUpperCase()}` }), 'upper-case hex (only the exact form counts)');
    } finally {
      await h.close();
    }
  });

  it('guards every /api/v1 route, unknown ones included, before parsing the body', async () => {
    const h = await makeHarness();
    try {
      for (const [method, url] of [['GET', '/api/v1/system/info'], ['PUT', '/api/v1/system/reload'], ['GET', '/api/v1/license'],
        ['PUT', '/api/v1/system/config/default'], ['GET', '/api/v1/no/such/route'], ['GET', '/api/v1/wireguard'], ['POST', '/api/v1/account']] as const) {
        assertUnauthorized(await h.app.inject({ method, url }), `${method} ${url}`);
      }
      const bad = await h.app.inject({ method: 'PUT', url: '/api/v1/system/config', headers: { 'content-type': 'application/json' }, payload: '{oops' });
      assertUnauthorized(bad, 'malformed body without auth');
      const unknown = await h.call('GET', '/api/v1/no/such/route');
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(envelope(unknown), { error: 'Not found', msg: '', status: 'error' });
    } finally {
      await h.close();
    }
  });

  it('binds a hash to one client IP; IPv4-mapped IPv6 equals IPv4; IPv6 forms are canonicalised', async () => {
    const h = await makeHarness();
    try {
      assertUnauthorized(await get(h, { cookie: `access_hash=${h.hash}`, remoteAddress: '127.0.0.2' }), 'other IP');
      assert.equal((await get(h, { cookie: `access_hash=${h.hash}`, remoteAddress: '::ffff:127.0.0.1' })).statusCode, 200);
      const v6 = h.app.services.accessHashes.create('2001:DB8:0:0::10', 'v6');
      assert.equal(v6.ip, '2001:db8::10');
      assert.equal((await get(h, { cookie: `access_hash=${v6.hash}`, remoteAddress: '2001:db8::10' })).statusCode, 200);
      assert.equal((await get(h, { cookie: `access_hash=${v6.hash}`, remoteAddress: '2001:0db8:0000::0010' })).statusCode, 200);
      assertUnauthorized(await get(h, { cookie: `access_hash=${v6.hash}`, remoteAddress: '2001:db8::11' }), 'other v6');
      assertUnauthorized(await get(h, { cookie: `access_hash=${v6.hash}` }), 'v6 hash from 127.0.0.1');
      const mapped = h.app.services.accessHashes.create('::ffff:10.1.2.3');
      assert.equal(mapped.ip, '10.1.2.3');
      assert.equal((await get(h, { cookie: `access_hash=${mapped.hash}`, remoteAddress: '10.1.2.3' })).statusCode, 200);
      assert.equal((await get(h, { cookie: `access_hash=${mapped.hash}`, remoteAddress: '::ffff:10.1.2.3' })).statusCode, 200);
    } finally {
      await h.close();
    }
  });

  it('a hash created or deleted through another connection (the CLI) counts at once', async () => {
    const h = await makeHarness();
    const other = openDatabase(databasePath(h.dir));
    try {
      const cli = new AccessHashService(new AccessHashRepository(other));
      const extra = cli.create('127.0.0.1', 'from cli');
      assert.equal((await get(h, { cookie: `access_hash=${extra.hash}` })).statusCode, 200);
      assert.equal(cli.delete(extra.id), true);
      assertUnauthorized(await get(h, { cookie: `access_hash=${extra.hash}` }), 'deleted');
      assert.equal((await get(h, { cookie: `access_hash=${h.hash}` })).statusCode, 200, 'others unaffected');
    } finally {
      other.close();
      await h.close();
    }
  });

  it('honours X-Forwarded-For only from a trusted proxy', async () => {
    const plain = await makeHarness();
    try {
      const remote = plain.app.services.accessHashes.create('203.0.113.7');
      // Not trusted: the header is ignored, the socket address (127.0.0.1) is judged.
      assertUnauthorized(await get(plain, { cookie: `access_hash=${remote.hash}`, xff: '203.0.113.7' }), 'untrusted xff');
      assert.equal((await get(plain, { cookie: `access_hash=${plain.hash}`, xff: '203.0.113.7' })).statusCode, 200);
    } finally {
      await plain.close();
    }
    const proxied = await makeHarness({ trustProxy: ['127.0.0.1', '10.0.0.5'] });
    try {
      const remote = proxied.app.services.accessHashes.create('203.0.113.7');
      const cookie = `access_hash=${remote.hash}`;
      assert.equal((await get(proxied, { cookie, xff: '203.0.113.7' })).statusCode, 200, 'via trusted proxy');
      assert.equal((await get(proxied, { cookie, xff: '198.51.100.1, 203.0.113.7, 10.0.0.5' })).statusCode, 200, 'proxy chain');
      assertUnauthorized(await get(proxied, { cookie, xff: '203.0.113.7, 198.51.100.1' }), 'spoofed left entry');
      assertUnauthorized(await get(proxied, { cookie, xff: 'not-an-ip' }), 'garbage xff');
      assertUnauthorized(await get(proxied, { cookie, xff: '203.0.113.7', remoteAddress: '127.0.0.9' }), 'untrusted peer');
      // Behind a trusted proxy, the hash bound to the proxy itself no longer matches a forwarded client.
      assertUnauthorized(await get(proxied, { cookie: `access_hash=${proxied.hash}`, xff: '203.0.113.7' }), 'proxy hash for forwarded client');
    } finally {
      await proxied.close();
    }
  });
});
