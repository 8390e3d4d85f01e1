// Pure parts of the one-time-link page: renderer (escaping, fragments, nonce, switches), buttons, title, file name, CSP,
// settings read-back over defaults, link field checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { otlButtons, OtlPageRenderer, plainTitle } from '../../../panel/pages/otl-page-render.ts';
import { otlCsp } from '../../../panel/pages/otl-page.ts';
import { otlWireguardConfigUpdateSchema } from '../../../shared/wire/otl.ts';
import { DEFAULT_OTL_IKEV2, DEFAULT_OTL_PAGE, DEFAULT_OTL_WIREGUARD, OtlSettingsService } from '../../../panel/services/otl/otl-settings.ts';
import { wgQuickFilename } from '../../../panel/services/otl/otl-service.ts';
import { otlDigest } from '../../../panel/services/otl/otl-links.ts';
import { openDatabase } from '../../../panel/store/db.ts';
import { SettingsRepository } from '../../../panel/store/repositories/settings.ts';

const renderer = new OtlPageRenderer();
const frame = { page: { ...DEFAULT_OTL_PAGE, title: '<i>Acme</i> & Co', css: 'p{margin:0}', before_body: '<p id="b">x</p>' }, nonce: 'N0nce' };

test('configuration page: account data escaped, fragments raw, every style element nonced, no script', () => {
  const html = renderer.config(frame, {
    account: '<script>alert(1)</script>',
    graceMinutes: 10,
    wireguard: {
      text: '[Interface]\nPrivateKey = a+b/c=\n</pre><script>x</script>', qr: 'data:image/png;base64,AAAA', qrSize: 320,
      download: 'k/t/wireguard.conf', filename: 'a.conf', label: 'Save <it>', buttons: [{ label: 'L"1', link: 'https://x.test/?a=1&b=2' }],
    },
    ikev2: null,
  });
  assert.ok(!html.includes('<script>'), 'no raw script from account data');
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(html.includes('&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;'));
  assert.ok(html.includes('<header class="otl-title"><i>Acme</i> & Co</header>'), 'title fragment raw');
  assert.ok(html.includes('<title>Acme &amp; Co</title>'), 'document title plain and escaped');
  assert.ok(html.includes('<p id="b">x</p>'));
  assert.ok(html.includes('<style nonce="N0nce">p{margin:0}</style>'));
  assert.equal([...html.matchAll(/<style(?: [^>]*)?>/g)].filter((m) => !m[0].includes('nonce="N0nce"')).length, 0);
  assert.ok(html.includes('>Save &lt;it&gt;<'));
  assert.ok(html.includes('href="https://x.test/?a&#x3D;1&amp;b&#x3D;2"'));
  assert.ok(html.includes('>L&quot;1<'));
  assert.doesNotMatch(html, /otl-ikev2-heading/);
});

test('switches: no QR, no text, no WireGuard part', () => {
  const base = { account: 'a', graceMinutes: 10, ikev2: null };
  const wg = { text: null, qr: null, qrSize: 320, download: 'd', filename: 'a.conf', label: 'Save', buttons: [] };
  const html = renderer.config(frame, { ...base, wireguard: wg });
  assert.doesNotMatch(html, /id="otl-qr"|id="otl-config-text"|<ul class="otl-buttons"/);
  assert.match(html, /id="otl-download-config"/);
  assert.doesNotMatch(renderer.config(frame, { ...base, wireguard: null }), /otl-wg-heading/);
});

test('confirm and not_relevant pages', () => {
  const confirm = renderer.confirm(frame);
  assert.match(confirm, /<form method="post" action="">/);
  assert.doesNotMatch(confirm, /PrivateKey/);
  const gone = renderer.notRelevant({ ...frame, page: { ...frame.page, not_relevant: '<h1>Gone</h1>' } });
  assert.ok(gone.includes('<section class="otl-not-relevant"><h1>Gone</h1></section>'));
  assert.doesNotMatch(gone, /<form/);
});

test('buttons need both label and link; titles; file names; CSP; digest', () => {
  assert.deepEqual(otlButtons({ ...DEFAULT_OTL_IKEV2, button2_label: 'x', button4_label: 'Four', button4_link: 'https://4' }), [{ label: 'Four', link: 'https://4' }]);
  assert.equal(otlButtons(DEFAULT_OTL_WIREGUARD).length, 3);
  assert.equal(plainTitle('<b>A</b>  <i>B</i>'), 'A B');
  assert.equal(plainTitle('<img src=x>'), 'VPN configuration');
  assert.equal(wgQuickFilename('alice'), 'alice.conf');
  assert.equal(wgQuickFilename('a-very-long-account-name'), 'a-very-long-acc.conf');
  assert.equal(wgQuickFilename('***'), 'wg0.conf');
  assert.equal(otlCsp('abc'), "default-src 'none'; style-src 'nonce-abc'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
  assert.equal(otlDigest('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('link fields: absolute URLs of any safe scheme, empty allowed, trimmed; dangerous schemes refused', () => {
  for (const ok of ['https://a.test/x', 'itms-apps://apps.apple.com/app/id1', 'market://details?id=com.x', '', '  https://t.test  ']) {
    assert.equal(otlWireguardConfigUpdateSchema.safeParse({ button1_link: ok }).success, true, ok);
  }
  assert.equal(otlWireguardConfigUpdateSchema.parse({ button1_link: '  https://t.test  ' }).button1_link, 'https://t.test');
  for (const bad of ['javascript:alert(1)', ' JavaScript:x', 'vbscript:x', 'data:text/html,x', 'file:///etc/passwd', 'relative/path', 'https://a b', 42]) {
    assert.equal(otlWireguardConfigUpdateSchema.safeParse({ button1_link: bad }).success, false, String(bad));
  }
});

test('settings: stored fields over defaults; a stored value of the wrong type falls back to the default', () => {
  const db = openDatabase(':memory:');
  try {
    const repo = new SettingsRepository(db);
    const settings = new OtlSettingsService(repo, { now: () => new Date(0) });
    assert.deepEqual(settings.page(), DEFAULT_OTL_PAGE);
    settings.updatePage({ title: 'T', lifetime: '5' });
    assert.equal(settings.lifetimeDays(), 5);
    repo.set('otl.wireguard', { enable: 'yes', enable_config_qr: false, button1_label: 7, unknown: 1 });
    const wg = settings.wireguard();
    assert.equal(wg.enable, true, 'wrong type → default');
    assert.equal(wg.enable_config_qr, false);
    assert.equal(wg.button1_label, DEFAULT_OTL_WIREGUARD.button1_label);
    assert.ok(!('unknown' in wg));
  } finally {
    db.close();
  }
});
