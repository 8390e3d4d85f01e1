// Shared validation patterns of the module contract: product/service data, password, IP, notification message, sanitising.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  escapeHtml, notificationMessageSchema, nullableIp, passwordSchema, productDataSchema, sanitizeInput, serviceDataSchema, stripTags, validate,
} from '../../../module/contract/validation.ts';

const product = { server_location: 'Amsterdam', plan_type: 'basic', disk_space: 10, bandwidth: 100 };
const service = { domain: 'example.com', username: 'alice' };

const errorsOf = (schema: Parameters<typeof validate>[0], data: unknown) => {
  const r = validate(schema, data);
  return r.success ? null : r.errors;
};

test('product data: every field required, with a per-field error bag', () => {
  assert.deepEqual(errorsOf(productDataSchema, {}), {
    server_location: ['The server location field is required.'],
    plan_type: ['The plan type field is required.'],
    disk_space: ['The disk space field is required.'],
    bandwidth: ['The bandwidth field is required.'],
  });
  assert.deepEqual(errorsOf(productDataSchema, { ...product, server_location: '' }), { server_location: ['The server location field is required.'] });
  assert.deepEqual(errorsOf(productDataSchema, { ...product, server_location: 7 }), { server_location: ['The server location field must be a string.'] });
});

test('plan_type is basic, premium or enterprise', () => {
  for (const plan of ['basic', 'premium', 'enterprise']) assert.equal(errorsOf(productDataSchema, { ...product, plan_type: plan }), null);
  assert.deepEqual(errorsOf(productDataSchema, { ...product, plan_type: 'gold' }), { plan_type: ['The selected plan type is invalid.'] });
  assert.deepEqual(errorsOf(productDataSchema, { ...product, plan_type: 'Basic' }), { plan_type: ['The selected plan type is invalid.'] });
});

test('disk_space 0 / 1 / 1000 / 1001, integers only, numeric strings accepted', () => {
  assert.deepEqual(errorsOf(productDataSchema, { ...product, disk_space: 0 }), { disk_space: ['The disk space field must be at least 1.'] });
  assert.equal(errorsOf(productDataSchema, { ...product, disk_space: 1 }), null);
  assert.equal(errorsOf(productDataSchema, { ...product, disk_space: 1000 }), null);
  assert.deepEqual(errorsOf(productDataSchema, { ...product, disk_space: 1001 }), { disk_space: ['The disk space field must not be greater than 1000.'] });
  assert.deepEqual(errorsOf(productDataSchema, { ...product, disk_space: 2.5 }), { disk_space: ['The disk space field must be an integer.'] });
  const r = validate(productDataSchema, { ...product, disk_space: '250' });
  assert.ok(r.success);
  assert.equal(r.data.disk_space, 250);
});

test('bandwidth at least 1, no maximum', () => {
  assert.deepEqual(errorsOf(productDataSchema, { ...product, bandwidth: 0 }), { bandwidth: ['The bandwidth field must be at least 1.'] });
  assert.equal(errorsOf(productDataSchema, { ...product, bandwidth: 1 }), null);
  assert.equal(errorsOf(productDataSchema, { ...product, bandwidth: 1_000_000 }), null);
});

test('domain is trimmed and lower-cased, then must be a host name with a final label of ≥ 2 letters', () => {
  const r = validate(serviceDataSchema, { ...service, domain: '  Sub.Example.COM ' });
  assert.ok(r.success);
  assert.equal(r.data.domain, 'sub.example.com');
  for (const bad of ['example', 'example.c', 'exa_mple.com', 'example.c0m', 'exa mple.com', 'example.com.']) {
    assert.deepEqual(errorsOf(serviceDataSchema, { ...service, domain: bad }), { domain: ['The domain field format is invalid.'] }, bad);
  }
  assert.deepEqual(errorsOf(serviceDataSchema, { ...service, domain: '   ' }), { domain: ['The domain field is required.'] });
  assert.equal(errorsOf(serviceDataSchema, { ...service, domain: 'my-host-1.example.io' }), null);
});

test('username trimmed, 2/3/20/21 characters, letters digits dash underscore', () => {
  assert.deepEqual(errorsOf(serviceDataSchema, { ...service, username: 'ab' }), { username: ['The username field must be at least 3 characters.'] });
  assert.equal(errorsOf(serviceDataSchema, { ...service, username: 'abc' }), null);
  assert.equal(errorsOf(serviceDataSchema, { ...service, username: 'a'.repeat(20) }), null);
  assert.deepEqual(errorsOf(serviceDataSchema, { ...service, username: 'a'.repeat(21) }), { username: ['The username field must not be greater than 20 characters.'] });
  assert.deepEqual(errorsOf(serviceDataSchema, { ...service, username: 'al ice' }), {
    username: ['The username field must only contain letters, numbers, dashes, and underscores.'],
  });
  const r = validate(serviceDataSchema, { ...service, username: '  A_b-9  ' });
  assert.ok(r.success);
  assert.equal(r.data.username, 'A_b-9');
  assert.deepEqual(errorsOf(serviceDataSchema, { domain: 'example.com' }), { username: ['The username field is required.'] });
});

test('notes are optional, nullable and default to null', () => {
  const r = validate(serviceDataSchema, service);
  assert.ok(r.success);
  assert.equal(r.data.notes, null);
  const n = validate(serviceDataSchema, { ...service, notes: null });
  assert.ok(n.success && n.data.notes === null);
  const t = validate(serviceDataSchema, { ...service, notes: 'hi' });
  assert.ok(t.success && t.data.notes === 'hi');
  assert.deepEqual(errorsOf(serviceDataSchema, { ...service, notes: 5 }), { notes: ['The notes field must be a string.'] });
});

test('password: required, ≥ 8, one lower, one upper, one digit', () => {
  assert.equal(errorsOf(passwordSchema, 'Abcdefg1'), null);
  assert.deepEqual(errorsOf(passwordSchema, ''), { _: ['The password field is required.'] });
  assert.deepEqual(errorsOf(passwordSchema, 'Abcdef1'), { _: ['The password field must be at least 8 characters.'] });
  assert.deepEqual(errorsOf(passwordSchema, 'ABCDEFG1'), { _: ['The password field must contain at least one lowercase letter.'] });
  assert.deepEqual(errorsOf(passwordSchema, 'abcdefg1'), { _: ['The password field must contain at least one uppercase letter.'] });
  assert.deepEqual(errorsOf(passwordSchema, 'Abcdefgh'), { _: ['The password field must contain at least one number.'] });
});

test('nullable IP: null, empty, v4 and v6 pass; anything else fails', () => {
  const ip = nullableIp('server_ip');
  for (const [input, out] of [[null, null], ['', null], [undefined, null], ['10.0.0.1', '10.0.0.1'], ['fd00::1', 'fd00::1']] as const) {
    const r = validate(ip, input);
    assert.ok(r.success);
    assert.equal(r.data, out);
  }
  assert.deepEqual(errorsOf(ip, '10.0.0.256'), { _: ['The server ip field must be a valid IP address.'] });
  assert.deepEqual(errorsOf(ip, 'host.example'), { _: ['The server ip field must be a valid IP address.'] });
});

test('notification message: to e-mail, subject 255 ok / 256 refused, message required, attachments optional array', () => {
  const ok = { to: 'a@example.com', subject: 's'.repeat(255), message: '<p>Hi</p>' };
  assert.equal(errorsOf(notificationMessageSchema, ok), null);
  assert.equal(errorsOf(notificationMessageSchema, { ...ok, attachments: [{ name: 'a.txt' }] }), null);
  assert.deepEqual(errorsOf(notificationMessageSchema, { ...ok, subject: 's'.repeat(256) }), { subject: ['The subject field must not be greater than 255 characters.'] });
  assert.deepEqual(errorsOf(notificationMessageSchema, { ...ok, to: 'not-an-email' }), { to: ['The to field must be a valid email address.'] });
  assert.deepEqual(errorsOf(notificationMessageSchema, { ...ok, attachments: 'a.txt' }), { attachments: ['The attachments field must be an array.'] });
  assert.deepEqual(errorsOf(notificationMessageSchema, {}), {
    to: ['The to field is required.'],
    subject: ['The subject field is required.'],
    message: ['The message field is required.'],
  });
});

test('sanitizeInput trims and strips tags, deeply, leaving secret-named members alone', () => {
  assert.deepEqual(sanitizeInput({ name: '  <b>Bob</b> ', nested: { note: '<script>x</script>ok ' }, list: [' <i>a</i>'], password: ' <p@ss> ', n: 5 }), {
    name: 'Bob',
    nested: { note: 'xok' },
    list: ['a'],
    password: ' <p@ss> ',
    n: 5,
  });
  assert.equal(stripTags('a<!-- c -->b<br/>c'), 'abc');
  assert.equal(stripTags('1 < 2 and 3 > 2'), '1 < 2 and 3 > 2');
});

test('escapeHtml escapes the handlebars set', () => {
  assert.equal(escapeHtml(`<a href="x" onclick='y'>&\`=</a>`), '&lt;a href&#x3D;&quot;x&quot; onclick&#x3D;&#x27;y&#x27;&gt;&amp;&#x60;&#x3D;&lt;/a&gt;');
  assert.equal(escapeHtml(null), '');
});
