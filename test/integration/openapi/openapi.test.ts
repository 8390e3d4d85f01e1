// GET /api/v1/openapi.json: a valid OpenAPI 3 document listing every registered /api/v1 route with the envelope.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { makePanel } from '../wireguard/panel-fixture.ts';

test('openapi.json validates as OpenAPI 3 and lists every /api/v1 route with the envelope', async () => {
  const p = await makePanel();
  try {
    const res = await p.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { cookie: p.cookie } });
    assert.equal(res.statusCode, 200);
    const envelope = res.json();
    assert.equal(envelope.status, 'success');
    assert.equal(envelope.error, '');
    const doc = envelope.msg;
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
    assert.match(validator.version, /^3\./);

    // Every registered route (HEAD twins aside) is in the document, under its OpenAPI path form.
    const routes = p.app.routeTable.filter((r) => r.url.startsWith('/api/v1/') && r.method !== 'HEAD');
    assert.ok(routes.length >= 45, `routes enumerated: ${routes.length}`);
    for (const route of routes) {
      const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${path} documented`);
      const ok = op.responses['200'].content['application/json'].schema;
      assert.deepEqual(Object.keys(ok.properties).sort(), ['error', 'msg', 'status'], `${route.method} ${path} envelope`);
      for (const name of [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1])) {
        assert.ok(op.parameters?.some((prm: { in: string; name: string }) => prm.in === 'path' && prm.name === name), `${path} param ${name}`);
      }
    }
    const documented = Object.values(doc.paths as Record<string, object>).reduce((n, ops) => n + Object.keys(ops).length, 0);
    assert.equal(documented, routes.length, 'nothing documented that is not registered');

    // Schemas come from the zod route schemas: the account, the listing query, the POST body, the error envelope.
    const list = doc.paths['/api/v1/account'].get;
    assert.deepEqual(list.parameters.filter((prm: { in: string }) => prm.in === 'query').map((prm: { name: string }) => prm.name).sort(), ['limit', 'offset']);
    const item = list.responses['200'].content['application/json'].schema.properties.msg.items;
    assert.ok(item.properties.allowed_IPs && item.properties.private_key && item.required.includes('wg_name'));
    assert.ok(doc.paths['/api/v1/account'].post.requestBody, 'POST /account body documented');
    assert.equal(list.responses['4XX'].content['application/json'].schema.properties.status.enum?.[0] ?? list.responses['4XX'].content['application/json'].schema.properties.status.const, 'error');
    assert.ok(!doc.paths['/metrics'], '/metrics is no API route');

    // Behind the access hash like the rest of the API.
    assert.equal((await p.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).statusCode, 401);
  } finally {
    await p.close();
  }
});
