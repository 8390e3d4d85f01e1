// One-time-link API through inject(): GET /account/<name>/otl, GET /otl/list, the settings GETs and the PUT/DELETE
// extensions with every text and range edge, auth on each route, nothing changed by a refusal, keys never stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { E, OWN } from '../../../panel/http/errors.ts';
import { otlLinkFormatError, otlTextFormatError, flagFormatError } from '../../../shared/wire/error-texts.ts';
import { DEFAULT_OTL_IKEV2, DEFAULT_OTL_PAGE, DEFAULT_OTL_WIREGUARD } from '../../../panel/services/otl/otl-settings.ts';
import { keyOf, otlPanel, page } from './otl-fixture.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

test('GET /account/<name>/otl: {base_url}/otl/<80 hex>, a new key each time, only the digest stored; unknown account', async () => {
  const p = await otlPanel();
  try {
    const keys = new Set<string>();
    for (let i = 0; i < 5; i++) keys.add(keyOf(await p.ok<string>('GET', '/account/alice/otl')));
    assert.equal(keys.size, 5);
    const stored = p.db.prepare('SELECT * FROM otl_links').all() as Array<Record<string, unknown>>;
    assert.equal(stored.length, 5);
    const dump = JSON.stringify(stored);
    for (const key of keys) {
      assert.ok(!dump.includes(key), 'the key itself is not stored');
      assert.ok(stored.some((r) => r.digest === sha256(key)));
    }
    const missing = await p.call('GET', '/account/nobody/otl');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: E.ACCOUNT_NOT_FOUND, msg: '', status: 'error' });
  } finally {
    await p.close();
  }
});

test('GET /otl/list: only live links keyed by the digest, created_data and lifetime (expiry) as UTC dates', async () => {
  const p = await otlPanel();
  try {
    assert.deepEqual(await p.ok('GET', '/otl/list'), { olts: {} });
    const a = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    await p.ok('PUT', '/otl/config', { lifetime: '30' });
    const b = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    const used = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    assert.equal((await page(p, 'POST', `/otl/${used}`)).status, 200);
    assert.deepEqual(await p.ok('GET', '/otl/list'), {
      olts: {
        [sha256(a)]: { account: 'alice', created_data: '2026-03-10', key: sha256(a), lifetime: '2026-03-11' },
        [sha256(b)]: { account: 'bob', created_data: '2026-03-10', key: sha256(b), lifetime: '2026-04-09' },
      },
    });
    p.clock.advance(86_400_000);
    assert.deepEqual(Object.keys((await p.ok('GET', '/otl/list')).olts), [sha256(b)], 'alice\'s 1-day link expired exactly');
  } finally {
    await p.close();
  }
});

test('settings GETs answer the defaults; PUTs change only the given fields and persist', async () => {
  const p = await otlPanel();
  try {
    assert.deepEqual(await p.ok('GET', '/otl/config'), DEFAULT_OTL_PAGE);
    assert.deepEqual(await p.ok('GET', '/otl/config_wireguard'), DEFAULT_OTL_WIREGUARD);
    assert.deepEqual(await p.ok('GET', '/otl/config_ikev2'), DEFAULT_OTL_IKEV2);
    assert.equal(typeof DEFAULT_OTL_PAGE.lifetime, 'string');
    const page1 = await p.ok('PUT', '/otl/config', { title: '<h1>T</h1>', lifetime: '365' });
    assert.deepEqual(page1, { ...DEFAULT_OTL_PAGE, title: '<h1>T</h1>', lifetime: '365' });
    assert.deepEqual(await p.ok('GET', '/otl/config'), page1);
    const wg = await p.ok('PUT', '/otl/config_wireguard', { enable_config_qr: 'false', button6_label: 'Six', button6_link: 'market://details?id=x' });
    assert.deepEqual(wg, { ...DEFAULT_OTL_WIREGUARD, enable_config_qr: false, button6_label: 'Six', button6_link: 'market://details?id=x' });
    const ike = await p.ok('PUT', '/otl/config_ikev2', { enable: '0', download_profile_button_label: 'Profile', button1_link: '' });
    assert.deepEqual(ike, { ...DEFAULT_OTL_IKEV2, enable: false, download_profile_button_label: 'Profile', button1_link: '' });
    assert.deepEqual(await p.ok('GET', '/otl/config_ikev2'), ike);
    // JSON bodies work the same as forms.
    const res = await p.app.inject({ method: 'PUT', url: '/api/v1/otl/config', headers: { cookie: p.cookie, 'content-type': 'application/json' }, payload: { lifetime: 7, css: '' } });
    assert.equal(res.json().msg.lifetime, '7');
  } finally {
    await p.close();
  }
});

test('PUT refusals: lifetime edges, flags, links, text size; each with its text and nothing changed', async () => {
  const p = await otlPanel();
  try {
    const before = [await p.ok('GET', '/otl/config'), await p.ok('GET', '/otl/config_wireguard'), await p.ok('GET', '/otl/config_ikev2')];
    const cases: Array<[string, Record<string, string>, string]> = [
      ['/otl/config', { lifetime: '0' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config', { lifetime: '366' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config', { lifetime: '1.5' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config', { lifetime: '' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config', { lifetime: '-1' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config', { title: 'x'.repeat(65_537) }, otlTextFormatError('title')],
      ['/otl/config', { css: 'a\u0000b' }, otlTextFormatError('css')],
      ['/otl/config', { not_relevant: 'ok', lifetime: 'abc' }, OWN.OTL_WRONG_LIFETIME],
      ['/otl/config_wireguard', { enable: 'yes' }, flagFormatError('enable')],
      ['/otl/config_wireguard', { enable_config_qr: '2' }, flagFormatError('enable_config_qr')],
      ['/otl/config_wireguard', { enable_config_text: '' }, flagFormatError('enable_config_text')],
      ['/otl/config_wireguard', { button1_link: 'javascript:alert(1)' }, otlLinkFormatError('button1_link')],
      ['/otl/config_wireguard', { button2_link: 'not a url' }, otlLinkFormatError('button2_link')],
      ['/otl/config_wireguard', { button3_link: 'DATA:text/html,x' }, otlLinkFormatError('button3_link')],
      ['/otl/config_ikev2', { enable: 'on' }, flagFormatError('enable')],
      ['/otl/config_ikev2', { button6_link: '/relative' }, otlLinkFormatError('button6_link')],
    ];
    for (const [path, form, text] of cases) {
      const answer = await p.call('PUT', path, form);
      assert.equal(answer.status, 400, `${path} ${JSON.stringify(form).slice(0, 60)}`);
      assert.deepEqual(answer.body, { error: text, msg: '', status: 'error' });
    }
    assert.deepEqual([await p.ok('GET', '/otl/config'), await p.ok('GET', '/otl/config_wireguard'), await p.ok('GET', '/otl/config_ikev2')], before);
    assert.equal((await p.ok('PUT', '/otl/config', { lifetime: '1', title: 'x'.repeat(65_536) })).lifetime, '1', 'edges accepted');
  } finally {
    await p.close();
  }
});

test('DELETE /otl/<key> (extension): by listed digest or by link key; unknown and malformed keys answer 404', async () => {
  const p = await otlPanel();
  try {
    const a = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const b = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    assert.equal(await p.ok('DELETE', `/otl/${sha256(a)}`), 'success');
    assert.equal(await p.ok('DELETE', `/otl/${b}`), 'success');
    assert.deepEqual(await p.ok('GET', '/otl/list'), { olts: {} });
    assert.equal((await page(p, 'GET', `/otl/${a}`)).status, 404, 'revoked link shows not_relevant');
    for (const key of [sha256(a), b, 'zz', 'A'.repeat(80), '0'.repeat(63)]) {
      const answer = await p.call('DELETE', `/otl/${key}`);
      assert.equal(answer.status, 404, key);
      assert.deepEqual(answer.body, { error: OWN.OTL_NOT_FOUND, msg: '', status: 'error' });
    }
  } finally {
    await p.close();
  }
});

test('every OTL API route needs the access hash; the public page needs none and sets no cookie', async () => {
  const p = await otlPanel();
  try {
    const routes: Array<['GET' | 'PUT' | 'DELETE', string]> = [
      ['GET', '/account/alice/otl'], ['GET', '/otl/list'], ['GET', '/otl/config'], ['GET', '/otl/config_wireguard'],
      ['GET', '/otl/config_ikev2'], ['PUT', '/otl/config'], ['PUT', '/otl/config_wireguard'], ['PUT', '/otl/config_ikev2'],
      ['DELETE', `/otl/${'0'.repeat(64)}`],
    ];
    for (const [method, path] of routes) {
      const res = await p.app.inject({ method, url: `/api/v1${path}` });
      assert.equal(res.statusCode, 401, `${method} ${path}`);
      assert.deepEqual(res.json(), { error: E.NOT_AUTHORIZED, msg: '', status: 'error' });
    }
    assert.equal((p.db.prepare('SELECT COUNT(*) AS n FROM otl_links').get() as { n: number }).n, 0, 'no link made without auth');
    const key = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const res = await p.app.inject({ method: 'GET', url: `/otl/${key}` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['set-cookie'], undefined);
  } finally {
    await p.close();
  }
});

