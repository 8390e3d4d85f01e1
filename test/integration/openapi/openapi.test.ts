// GET /api/v1/openapi.json: a valid OpenAPI 3 document listing every registered /api/v1 route with the envelope.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { makePanel } from '../wireguard/panel-fixture.ts';

/** Whether a JSON schema says what a value is (a type, a constant, a choice or a reference), not `{}`. */
function typedSchema(schema: Record<string, unknown> | undefined): boolean {
  return !!schema && ['type', 'const', 'enum', 'anyOf', 'oneOf', 'allOf', '$ref', 'not'].some((key) => key in schema);
}

/** A JSON schema without the draft marker (the document's schemas carry none). */
function stripped(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

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

    // Every registered route (HEAD twins aside) is in the document, under its OpenAPI path form, with a typed answer.
    const routes = p.app.routeTable.filter((r) => r.url.startsWith('/api/v1/') && r.method !== 'HEAD');
    for (const route of routes) {
      const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${path} documented`);
      assert.ok(route.spec, `${route.method} ${path} declares its schemas on the route`);
      const content = op.responses['200'].content;
      if (route.spec.produces) {
        assert.deepEqual(Object.keys(content), [route.spec.produces], `${route.method} ${path} answers ${route.spec.produces}`);
      } else {
        const ok = content['application/json'].schema;
        assert.deepEqual(Object.keys(ok.properties).sort(), ['error', 'msg', 'status'], `${route.method} ${path} envelope`);
        assert.ok(typedSchema(ok.properties.msg), `${route.method} ${path}: msg is typed: ${JSON.stringify(ok.properties.msg)}`);
        // the documented msg is the one the route declared
        assert.deepEqual(ok.properties.msg, stripped(z.toJSONSchema(route.spec.msg, { target: 'openapi-3.0', unrepresentable: 'any', io: 'output' })), `${route.method} ${path} msg`);
      }
      for (const code of ['4XX', '5XX']) {
        assert.equal(op.responses[code].content['application/json'].schema.properties.status.enum?.[0], 'error', `${route.method} ${path} ${code}`);
      }
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

test('what the GET routes answer matches the msg schema each route declares (parameters filled from a server and an account)', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    const fill: Record<string, string> = { name: 'alice', year: '2026', month: '1' };
    const gets = p.app.routeTable.filter((r) => r.url.startsWith('/api/v1/') && r.method === 'GET' && !r.spec?.produces);
    let checked = 0;
    for (const route of gets) {
      const serverScoped = route.url.startsWith('/api/v1/wireguard/:name');
      const path = route.url.replace('/api/v1', '').replace(/:([A-Za-z_]+)/g, (_m, key: string) => (serverScoped && key === 'name' ? 'srv' : fill[key] ?? key));
      const answer = await p.call('GET', path);
      if (answer.status !== 200) {
        // licensed resources without a license, IKEv2 profiles without IKEv2: the error envelope
        assert.equal(answer.body.status, 'error', `${route.url}: ${JSON.stringify(answer.body)}`);
        continue;
      }
      const parsed = route.spec!.msg.safeParse(answer.body.msg);
      assert.ok(parsed.success, `${route.url}: ${parsed.error?.message}`);
      checked++;
    }
    assert.ok(checked >= 30, `answers checked: ${checked} of ${gets.length}`);
  } finally {
    await p.close();
  }
});
