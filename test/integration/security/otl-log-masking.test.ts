// No one-time-link key or download token in any panel log line, however the page's path is spelled (`/otl/`,
// `/%6ftl/`, double slashes, case, double encoding, query strings), on pages, downloads, refusals and errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hrefOf } from '../otl/otl-fixture.ts';
import { makeHarness } from '../panel-core/harness.ts';

/** Every `%XX` run decoded, three rounds (what a reader of the log could turn back into the key). */
function decoded(text: string): string {
  let out = text;
  for (let i = 0; i < 3; i++) out = out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => { try { return decodeURIComponent(run); } catch { return run; } });
  return out;
}

describe('panel logs and one-time links', () => {
  it('never hold a link key or a download token, whatever the spelling of the path', async () => {
    const h = await makeHarness();
    try {
      const api = async (method: 'GET' | 'POST', url: string, form?: Record<string, string>) => {
        const res = await h.call(method, `/api/v1${url}`, form ? { form } : {});
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        return JSON.parse(res.body).msg;
      };
      await api('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10' });
      await api('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice' });
      await api('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'bob' });
      const keyOf = (url: string) => /\/otl\/([0-9a-f]{80})$/.exec(url)![1];
      const alice = keyOf(await api('GET', '/account/alice/otl'));
      const bob = keyOf(await api('GET', '/account/bob/otl'));
      const page = (method: 'GET' | 'POST' | 'HEAD', url: string) =>
        h.app.inject({ method, url, ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' } : {}) });

      // the two spellings the issue names, and the other ways to write the same path
      const spellings = (key: string) => [
        `/otl/${key}`, `/%6ftl/${key}`, `/%6Ftl/${key}?utm=mail`, `//otl/${key}`, `/OTL/${key}`, `/otl//${key}`,
        `/%256ftl/${key}`, `/otl%2f${key}`, `/otl/${key}?k=${key}`, `/./otl/${key}`, `/otl/${key.toUpperCase()}`,
      ];
      for (const url of spellings(bob)) {
        await page('GET', url);
        await page('HEAD', url);
      }
      const view = await page('POST', `/%6ftl/${alice}`);
      const consumed = view.statusCode === 200 ? view : await page('POST', `/otl/${alice}`);
      assert.equal(consumed.statusCode, 200);
      const download = hrefOf(consumed.body, 'otl-download-config')!;
      const token = download.split('/')[1];
      assert.match(token, /^[0-9a-f]{64}$/);
      for (const prefix of ['/otl', '/%6ftl', '//otl', '/OTL']) {
        for (const file of ['wireguard.conf', 'profile', 'ca.pem']) await page('GET', `${prefix}/${alice}/${token}/${file}`);
      }
      assert.equal((await page('GET', `/otl/${alice}/${token}/wireguard.conf`)).statusCode, 200, 'the download worked');
      // the key where a careless client puts it: API paths, queries, a refused request
      await h.call('DELETE', `/api/v1/otl/${bob}`);
      await h.call('GET', `/api/v1/account/${alice}`);
      await h.app.inject({ method: 'GET', url: `/api/v1/otl/list?key=${bob}` });
      // an unexpected error quoting the link
      h.app.services.systemConfig.get = () => {
        throw new Error(`mailer said: http://panel.test/%6Ftl/${alice}/${token}/wireguard.conf is unreachable`);
      };
      assert.equal((await h.call('GET', '/api/v1/system/config')).statusCode, 500);

      const text = h.logs.join('');
      const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(lines.some((l) => l.part === 'access' && l.url === '/otl/[redacted]'), 'page lines logged, masked');
      assert.ok(lines.some((l) => l.part === 'access' && l.url === '/OTL/[redacted]'), 'the other case too');
      assert.ok(lines.filter((l) => l.part === 'access').length >= 40, 'every request has its access line');
      for (const [name, secret] of Object.entries({ alice, bob, token })) {
        for (const haystack of [text.toLowerCase(), decoded(text).toLowerCase()]) {
          assert.equal(haystack.includes(secret.slice(0, 40)), false, `${name} (or its first half) appears in the logs`);
        }
      }
    } finally {
      await h.close();
    }
  });
});
