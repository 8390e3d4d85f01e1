// Module views: template path mapping, HTML escaping, compiled-template cache, view_admin_module and module pages.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { clearViewCache, renderModuleView, setViewRecheckInterval, templateFile, viewCacheSize, view_admin_module } from '../../../module/contract/view.ts';
import { makePlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

const root = mkdtempSync(join(tmpdir(), 'vpnhost-views-'));
after(() => rmSync(root, { recursive: true, force: true }));
const dir = join(root, 'modules', 'Plugin', 'Fleet', 'client_area');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'general.hbs'), '<p>{{name}}</p><div>{{{html}}}</div>');

test('client_area.general maps to client_area/general.hbs under views/modules/<Type>/<Name>', () => {
  assert.equal(templateFile(root, 'Plugin', 'Fleet', 'client_area.general'), join(dir, 'general.hbs'));
  assert.equal(templateFile(root, 'Plugin', 'Fleet', 'client_area/general'), join(dir, 'general.hbs'));
});

test('template paths that could leave the module directory are refused', () => {
  for (const bad of ['../x', '..', 'a..b', '/etc/passwd', 'a/../../b', '', 'a b']) {
    assert.throws(() => templateFile(root, 'Plugin', 'Fleet', bad), /invalid template path/, bad);
  }
  assert.throws(() => templateFile(root, '..', 'Fleet', 'x'), /invalid module/);
});

test('{{value}} is HTML-escaped, {{{value}}} is raw', () => {
  const html = renderModuleView(root, 'Plugin', 'Fleet', 'client_area.general', { name: '<script>alert("x")</script>', html: '<b>ok</b>' });
  assert.equal(html, '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</p><div><b>ok</b></div>');
});

test('compiled templates are cached and recompiled when the file changes', (t) => {
  setViewRecheckInterval(0);
  t.after(() => setViewRecheckInterval(1000));
  clearViewCache();
  const file = join(root, 'modules', 'Plugin', 'Fleet', 'cached.hbs');
  writeFileSync(file, 'one {{n}}');
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'cached', { n: 1 }), 'one 1');
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'cached', { n: 2 }), 'one 2');
  assert.equal(viewCacheSize(), 1);
  writeFileSync(file, 'two {{n}} changed');
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'cached', { n: 3 }), 'two 3 changed');
  assert.equal(viewCacheSize(), 1);
});

test('a compiled template is not checked against its file again within the recheck interval', (t) => {
  t.after(() => setViewRecheckInterval(1000));
  setViewRecheckInterval(60_000);
  clearViewCache();
  const file = join(root, 'modules', 'Plugin', 'Fleet', 'rechecked.hbs');
  writeFileSync(file, 'one {{n}}');
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'rechecked', { n: 1 }), 'one 1');
  writeFileSync(file, 'two {{n}} changed');
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'rechecked', { n: 2 }), 'one 2', 'no stat within the interval');
  setViewRecheckInterval(0);
  assert.equal(renderModuleView(root, 'Plugin', 'Fleet', 'rechecked', { n: 3 }), 'two 3 changed');
});

test('a missing view fails with its path', () => {
  assert.throws(() => renderModuleView(root, 'Plugin', 'Fleet', 'nope'), /view not found: .*nope\.hbs/);
});

test('view_admin_module merges data with mergeData (mergeData wins)', () => {
  const html = view_admin_module('Plugin', 'Fleet', 'client_area.general', { name: 'a', html: 'x' }, { name: 'b&c' }, root);
  assert.equal(html, '<p>b&amp;c</p><div>x</div>');
});

test('module pages render from the repository views with escaped values', async () => {
  const p = makePlatform();
  try {
    const product = new SampleProduct(p.ctx);
    product.getProductData({ server_location: '<img src=x onerror=alert(1)>', plan_type: 'basic' });
    const page = product.getProductPage();
    assert.match(page, /data-module="SampleProduct"/);
    assert.match(page, /&lt;img src&#x3D;x onerror&#x3D;alert\(1\)&gt;/);
    assert.doesNotMatch(page, /<img/);
    product.service_uuid = 'svc-1';
    product.getServiceData({ domain: ' Example.COM ', username: ' bob ', notes: '<b>vip</b>' });
    const servicePage = product.getServicePage();
    assert.match(servicePage, /Service example\.com/);
    assert.match(servicePage, /User: bob</);
    assert.match(servicePage, /&lt;b&gt;vip&lt;\/b&gt;/);
  } finally {
    p.cleanup();
  }
});
