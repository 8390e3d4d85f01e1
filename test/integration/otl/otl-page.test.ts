// The public one-time-link page through inject(): confirm step, single use (also under concurrency), config text and
// QR equal config_text, downloads within the grace period, not_relevant for used/expired/unknown keys, headers, escaping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OTL_DOWNLOAD_GRACE_MS } from '../../../panel/services/otl/otl-links.ts';
import type { TestPanel } from '../wireguard/panel-fixture.ts';
import { hrefOf, keyOf, otlPanel, page, shownConfig, shownQr } from './otl-fixture.ts';

const NOT_RELEVANT = '<p id="nr">Link gone</p>';

test('GET confirms without using the link; POST shows config text and QR equal to config_text; second view is not_relevant', async () => {
  const p = await otlPanel();
  try {
    await p.ok('PUT', '/otl/config', { not_relevant: NOT_RELEVANT });
    const configText = await p.ok<string>('GET', '/account/alice/config_text');
    const key = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    for (let i = 0; i < 3; i++) {
      const confirm = await page(p, 'GET', `/otl/${key}`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.body, /<form method="post" action="">/);
      assert.match(confirm.body, /Show my configuration/);
      assert.equal(shownConfig(confirm.body), null, 'the confirm step shows no configuration');
      assert.doesNotMatch(confirm.body, /PrivateKey/);
    }
    const head = await p.app.inject({ method: 'HEAD', url: `/otl/${key}` });
    assert.equal(head.statusCode, 200, 'HEAD (prefetch) does not use the link');
    const view = await page(p, 'POST', `/otl/${key}`);
    assert.equal(view.status, 200);
    assert.equal(shownConfig(view.body), configText);
    assert.equal(shownQr(view.body), configText);
    assert.match(view.body, /id="otl-account">alice</);
    for (const [method, path] of [['GET', `/otl/${key}`], ['POST', `/otl/${key}`]] as const) {
      const again = await page(p, method, path);
      assert.equal(again.status, 404, `${method} after use`);
      assert.ok(again.body.includes(NOT_RELEVANT));
      assert.equal(shownConfig(again.body), null);
    }
    assert.deepEqual((await p.ok('GET', '/otl/list')).olts, {}, 'a used link leaves the list');
  } finally {
    await p.close();
  }
});

test('two simultaneous first views: exactly one page carries the configuration', async () => {
  const p = await otlPanel();
  try {
    const configText = await p.ok<string>('GET', '/account/bob/config_text');
    for (let round = 0; round < 5; round++) {
      const key = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
      const answers = await Promise.all(Array.from({ length: 4 }, () => page(p, 'POST', `/otl/${key}`)));
      const shown = answers.filter((a) => shownConfig(a.body) === configText);
      assert.equal(shown.length, 1, `round ${round}: one view with the configuration`);
      assert.equal(shown[0].status, 200);
      assert.deepEqual(answers.filter((a) => a !== shown[0]).map((a) => a.status), [404, 404, 404]);
    }
  } finally {
    await p.close();
  }
});

/** Records, in order, each statement of the panel's one-time-link repository that runs (`<field>.<method>`). */
function recordStatements(p: TestPanel): string[] {
  const executed: string[] = [];
  const repo = (p.app.services.otl.links as unknown as { deps: { links: Record<string, unknown> } }).deps.links;
  for (const [field, stmt] of Object.entries(repo)) {
    if (!field.endsWith('Stmt')) continue;
    const target = stmt as Record<string, (...args: unknown[]) => unknown>;
    for (const method of ['get', 'run', 'all', 'iterate']) {
      const original = target[method];
      target[method] = (...args: unknown[]) => {
        executed.push(`${field}.${method}`);
        return original.apply(stmt, args);
      };
    }
  }
  return executed;
}

test('expired, used and unknown keys answer the same not_relevant page with the same status and headers', async () => {
  const p = await otlPanel();
  try {
    await p.ok('PUT', '/otl/config', { not_relevant: NOT_RELEVANT, lifetime: '2' });
    const expired = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const used = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    assert.equal((await page(p, 'POST', `/otl/${used}`)).status, 200);
    p.clock.advance(2 * 86_400_000 - 1);
    assert.equal((await page(p, 'GET', `/otl/${expired}`)).status, 200, 'still valid 1 ms before lifetime days');
    p.clock.advance(1);
    const unknown = 'ab'.repeat(40);
    const strip = (html: string) => html.replace(/nonce="[^"]+"/g, 'nonce=""');
    const answers = [];
    for (const key of [expired, used, unknown, 'not-hex', 'x'.repeat(500)]) {
      for (const method of ['GET', 'POST'] as const) answers.push({ key, method, a: await page(p, method, `/otl/${key}`) });
    }
    for (const { key, method, a } of answers) {
      assert.equal(a.status, 404, `${method} ${key.slice(0, 8)}`);
      assert.equal(strip(a.body), strip(answers[0].a.body), 'byte-identical page (nonce aside)');
      assert.equal(a.headers['cache-control'], 'no-store');
    }
    // No timing side channel, shown without a clock: each kind runs the same one statement of the links repository
    // and nothing else (what a stopwatch could tell apart is a different code path, and there is none).
    const executed = recordStatements(p);
    const pathOf = async (method: 'GET' | 'POST', key: string) => {
      executed.length = 0;
      await page(p, method, `/otl/${key}`);
      return [...executed];
    };
    for (const method of ['GET', 'POST'] as const) {
      const paths = [];
      for (const key of [expired, used, unknown]) paths.push(await pathOf(method, key));
      assert.deepEqual(paths, Array(3).fill([method === 'GET' ? 'isLiveStmt.get' : 'consumeStmt.get']), `${method}: one and the same statement`);
    }
  } finally {
    await p.close();
  }
});

test('page headers: no-store, nonce CSP without scripts (fresh nonce per answer), no-referrer, nosniff', async () => {
  const p = await otlPanel();
  try {
    await p.ok('PUT', '/otl/config', { css: 'body{color:#123}' });
    const key = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const seen = new Set<string>();
    for (const a of [await page(p, 'GET', `/otl/${key}`), await page(p, 'POST', `/otl/${key}`), await page(p, 'GET', `/otl/${key}`)]) {
      assert.equal(a.headers['cache-control'], 'no-store');
      assert.equal(a.headers['referrer-policy'], 'no-referrer');
      assert.equal(a.headers['x-content-type-options'], 'nosniff');
      assert.match(String(a.headers['content-type']), /^text\/html; charset=utf-8/);
      const csp = String(a.headers['content-security-policy']);
      const nonce = /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1];
      assert.ok(nonce, csp);
      assert.match(csp, /default-src 'none'/);
      assert.doesNotMatch(csp, /script-src|unsafe-inline/);
      assert.ok(!seen.has(nonce), 'a fresh nonce per answer');
      seen.add(nonce);
      const styles = [...a.body.matchAll(/<style nonce="([^"]+)">/g)].map((m) => m[1]);
      assert.ok(styles.length >= 1 && styles.every((n) => n === nonce), 'every style element carries the nonce');
      assert.doesNotMatch(a.body, /<script/);
      assert.equal(a.headers['set-cookie'], undefined);
    }
  } finally {
    await p.close();
  }
});

test('downloads of the consuming view work for the grace period, then die; other tokens and files are refused', async () => {
  const p = await otlPanel();
  try {
    const configText = await p.ok<string>('GET', '/account/alice/config_text');
    const key = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const view = await page(p, 'POST', `/otl/${key}`);
    const href = hrefOf(view.body, 'otl-download-config');
    assert.ok(href && href.startsWith(`${key}/`) && href.endsWith('/wireguard.conf'), String(href));
    assert.match(view.body, /download="alice\.conf"/);
    const url = `/otl/${href}`;
    for (let i = 0; i < 2; i++) {
      const file = await page(p, 'GET', url);
      assert.equal(file.status, 200);
      assert.equal(file.body, configText);
      assert.equal(file.headers['content-disposition'], 'attachment; filename="alice.conf"');
      assert.equal(file.headers['cache-control'], 'no-store');
    }
    const token = href.split('/')[1];
    for (const bad of [`/otl/${key}/${'0'.repeat(64)}/wireguard.conf`, `/otl/${key}/${token}/other`, `/otl/${'ab'.repeat(40)}/${token}/wireguard.conf`,
      `/otl/${key}/${token}/ca.pem`, `/otl/${key}/${token}/profile`, `/otl/${key}/${token}/__proto__`]) {
      const a = await page(p, 'GET', bad);
      assert.equal(a.status, 404, bad);
      assert.ok(!a.body.includes('PrivateKey'));
    }
    p.clock.advance(OTL_DOWNLOAD_GRACE_MS - 1);
    assert.equal((await page(p, 'GET', url)).status, 200, 'within the grace period');
    p.clock.advance(1);
    assert.equal((await page(p, 'GET', url)).status, 404, 'after the grace period');
  } finally {
    await p.close();
  }
});

test('operator fragments are trusted HTML; account data is escaped; switches and buttons shape the page', async () => {
  const p = await otlPanel();
  try {
    await p.ok('PUT', '/otl/config', {
      title: '<b id="t">Acme VPN</b>', before_body: '<div id="before">B</div>', after_body: '<div id="after">A</div>', css: '.x{color:red}',
    });
    await p.ok('PUT', '/otl/config_wireguard', {
      button1_label: 'Get <the> app', button1_link: 'https://example.com/a?x=1&y="2"', button2_label: 'no link', button2_link: '',
      button3_label: '', button3_link: 'https://example.com/c', download_config_button_label: 'Save file',
      enable_config_qr: '0',
    });
    const key = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const confirm = await page(p, 'GET', `/otl/${key}`);
    for (const html of ['<b id="t">Acme VPN</b>', '<div id="before">B</div>', '<div id="after">A</div>', '.x{color:red}']) {
      assert.ok(confirm.body.includes(html), html);
    }
    assert.match(confirm.body, /<title>Acme VPN<\/title>/);
    const view = await page(p, 'POST', `/otl/${key}`);
    assert.ok(view.body.includes('<div id="before">B</div>') && view.body.includes('<div id="after">A</div>'));
    assert.equal(shownQr(view.body), null, 'QR switched off');
    assert.ok(shownConfig(view.body), 'text still on');
    assert.match(view.body, />Save file</);
    assert.ok(view.body.includes('href="https://example.com/a?x&#x3D;1&amp;y&#x3D;&quot;2&quot;"'), 'link attribute escaped');
    assert.ok(view.body.includes('>Get &lt;the&gt; app<'), 'label escaped');
    assert.ok(!view.body.includes('no link') && !view.body.includes('https://example.com/c'), 'half-set buttons hidden');
    assert.doesNotMatch(view.body, /id="otl-ikev2-heading"/, 'no IKEv2 part without IKEv2');

    await p.ok('PUT', '/otl/config_wireguard', { enable_config_text: '0', enable_config_qr: '1' });
    const second = await page(p, 'POST', `/otl/${keyOf(await p.ok<string>('GET', '/account/alice/otl'))}`);
    assert.equal(shownConfig(second.body), null, 'text switched off');
    assert.equal(shownQr(second.body), await p.ok<string>('GET', '/account/alice/config_text'));

    await p.ok('PUT', '/otl/config_wireguard', { enable: '0' });
    const third = await page(p, 'POST', `/otl/${keyOf(await p.ok<string>('GET', '/account/alice/otl'))}`);
    assert.equal(third.status, 200);
    assert.doesNotMatch(third.body, /otl-wg-heading|otl-download-config|PrivateKey/, 'WireGuard part switched off');
  } finally {
    await p.close();
  }
});

test('disabling or deleting the account kills its links; re-enabling does not revive them', async () => {
  const p = await otlPanel();
  try {
    const a1 = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const a2 = keyOf(await p.ok<string>('GET', '/account/alice/otl'));
    const b1 = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    assert.equal((await page(p, 'POST', `/otl/${a2}`)).status, 200);
    const dl = hrefOf((await page(p, 'GET', `/otl/${a2}`)).body, 'otl-download-config');
    assert.equal(dl, null);
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    await p.ok('PUT', '/account/alice', { status: 'enable' });
    assert.equal((await page(p, 'GET', `/otl/${a1}`)).status, 404);
    assert.equal((await page(p, 'POST', `/otl/${a1}`)).status, 404);
    assert.deepEqual(Object.values((await p.ok('GET', '/otl/list')).olts).map((e: any) => e.account), ['bob']);
    await p.ok('DELETE', '/account/bob');
    assert.equal((await page(p, 'POST', `/otl/${b1}`)).status, 404);
    assert.deepEqual((await p.ok('GET', '/otl/list')).olts, {});
    const left = p.db.prepare('SELECT COUNT(*) AS n FROM otl_links l JOIN accounts a ON a.id = l.account_id WHERE a.name = ?').get('bob') as { n: number };
    assert.equal(left.n, 0);
  } finally {
    await p.close();
  }
});

test('a link made for a disabled account does not open until ... never: the page shows not_relevant', async () => {
  const p = await otlPanel();
  try {
    await p.ok('PUT', '/account/bob', { status: 'disable' });
    const key = keyOf(await p.ok<string>('GET', '/account/bob/otl'));
    assert.equal((await page(p, 'GET', `/otl/${key}`)).status, 404);
    assert.equal((await page(p, 'POST', `/otl/${key}`)).status, 404);
  } finally {
    await p.close();
  }
});
