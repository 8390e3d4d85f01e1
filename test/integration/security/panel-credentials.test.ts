// Exact credentials on the panel: only one `access_hash` cookie holding exactly the 80 lower-case hex characters opens /api/v1.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';

const STATUS = '/api/v1/system/status';

async function withCookie(h: Harness, cookie: string) {
  return h.app.inject({ method: 'GET', url: STATUS, headers: { cookie } });
}

/** Security lines (JSON) in the harness's captured log. */
function authFailures(h: Harness): Array<Record<string, unknown>> {
  return h.logs
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.security === true && line.event === 'auth_failed');
}

describe('exact access-hash credentials', () => {
  it('accepts the single exact cookie and refuses every loosened variant with Not authorized', async () => {
    const h = await makeHarness();
    try {
      const ok = await withCookie(h, `access_hash=${h.hash}`);
      assert.equal(ok.statusCode, 200);
      assert.equal(envelope(ok).status, 'success');
      assert.equal((await withCookie(h, `theme=dark; access_hash=${h.hash}; lang=en`)).statusCode, 200, 'among other cookies');

      const upperFirst = h.hash.replace(/[a-f]/, (c) => c.toUpperCase());
      assert.notEqual(upperFirst, h.hash, 'the hash holds a letter to upper-case');
      const percent = [...h.hash].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
      const variants: Array<[string, string]> = [
        ['upper case', `access_hash=${h.hash.toUpperCase()}`],
        ['one letter upper case', `access_hash=${upperFirst}`],
        ['double quotes', `access_hash="${h.hash}"`],
        ['single quotes', `access_hash='${h.hash}'`],
        ['leading space in the value', `access_hash= ${h.hash}`],
        ['trailing space before the next cookie', `access_hash=${h.hash} ; lang=en`],
        ['tab in the value', `access_hash=\t${h.hash}`],
        ['space before =', `access_hash =${h.hash}`],
        ['fully percent-encoded', `access_hash=${percent}`],
        ['one char percent-encoded', `access_hash=%${h.hash.charCodeAt(0).toString(16)}${h.hash.slice(1)}`],
        ['two access_hash cookies, valid first', `access_hash=${h.hash}; access_hash=${'0'.repeat(80)}`],
        ['two access_hash cookies, valid last', `access_hash=${'0'.repeat(80)}; access_hash=${h.hash}`],
        ['the valid cookie twice', `access_hash=${h.hash}; access_hash=${h.hash}`],
        ['a second one in another letter case', `access_hash=${h.hash}; ACCESS_HASH=${h.hash}`],
        ['upper-case cookie name', `ACCESS_HASH=${h.hash}`],
        ['trailing garbage', `access_hash=${h.hash}x`],
        ['81 characters', `access_hash=${h.hash}0`],
        ['79 characters', `access_hash=${h.hash.slice(0, 79)}`],
        ['semicolon-less second pair', `access_hash=${h.hash},access_hash=${h.hash}`],
      ];
      for (const [label, cookie] of variants) {
        const res = await withCookie(h, cookie);
        assert.equal(res.statusCode, 401, label);
        assert.deepEqual(envelope(res), { error: E.NOT_AUTHORIZED, msg: '', status: 'error' }, label);
      }

      // Each refusal is a security line, and none of them holds the hash.
      const failures = authFailures(h);
      assert.equal(failures.length, variants.length);
      for (const line of failures) assert.equal(JSON.stringify(line).includes(h.hash), false);
      assert.equal(h.logs.join('').toLowerCase().includes(h.hash.toLowerCase()), false, 'the hash never appears in any case');
    } finally {
      await h.close();
    }
  });

  it('over a real socket, two Cookie headers each holding the hash are refused (node joins them with "; ")', async () => {
    const h = await makeHarness();
    try {
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      const address = h.app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const raw = async (headers: string[]) => {
        const { connect } = await import('node:net');
        return new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () =>
            socket.write(`GET ${STATUS} HTTP/1.1\r\nHost: panel\r\nConnection: close\r\n${headers.map((x) => `${x}\r\n`).join('')}\r\n`));
          let text = '';
          socket.on('data', (chunk) => (text += chunk.toString()));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
      };
      assert.match(await raw([`Cookie: access_hash=${h.hash}`]), /^HTTP\/1\.1 200 /);
      assert.match(await raw([`Cookie: access_hash=${h.hash}`, `Cookie: access_hash=${h.hash}`]), /^HTTP\/1\.1 401 /);
      assert.match(await raw([`Cookie: lang=en`, `Cookie: access_hash=${h.hash}`]), /^HTTP\/1\.1 200 /, 'one access_hash across two headers');
    } finally {
      await h.close();
    }
  });
});
