// Module base: spec properties, config access, lifecycle `success` / `Error: ` wrapping, result shapes, context injection.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { config } from '../../../config.ts';
import { instantiateModule, runLifecycle } from '../../../module/contract/module.ts';
import { Notification } from '../../../module/contract/notification.ts';
import { contextFor } from '../../../module/contract/platform-context.ts';
import { runModuleJob } from '../../../module/contract/run-module-job.ts';
import {
  jobError, jobSuccess, normalizeJobResult, successResult, toLifecycleResult, validationErrorResult,
} from '../../../module/contract/result.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

class Mailer extends Notification {
  mode: 'ok' | 'throw' | 'text' = 'ok';
  constructor(ctx: ConstructorParameters<typeof Notification>[0]) {
    super(ctx);
    this.logger_context.channel = 'smtp';
  }
  protected async deliver(): Promise<void> {}
  override async activate() {
    return this.guard('activate', () => {
      if (this.mode === 'throw') throw new Error('SMTP host unreachable');
      if (this.mode === 'text') return 'cannot reach host';
    });
  }
  override async deactivate(): Promise<'success'> {
    throw new Error('still sending');
  }
  async flushJob() {
    return { status: 'success' as const, message: `flushed with ${this.abortSignal ? 'signal' : 'none'}` };
  }
}

let p: TestPlatform;
beforeEach(() => (p = makePlatform({ config: { enabled: true, version: '2.0.0', api_url: 'https://panel.example', api_key: 'k-123456' } })));
afterEach(() => p.cleanup());

test('spec properties: module_name, module_type, configValues ($config), data bags, uuids, logger_context', () => {
  const m = new SampleProduct(p.ctx);
  assert.equal(m.module_name, 'SampleProduct');
  assert.equal(m.module_type, 'Product');
  assert.deepEqual(m.configValues, { enabled: true, version: '2.0.0', api_url: 'https://panel.example', api_key: 'k-123456' });
  assert.ok(Object.isFrozen(m.configValues));
  assert.deepEqual([m.product_data, m.service_data, m.module_data], [{}, {}, {}]);
  assert.equal(m.service_uuid, null);
  assert.equal(m.payment_gateway_uuid, null);
  assert.deepEqual(m.logger_context, { module_type: 'Product', module_name: 'SampleProduct' });
  assert.equal(m.config('api_url'), 'https://panel.example');
  assert.equal(m.config('missing'), undefined);
  assert.equal(m.permissionKey('create'), 'Product-SampleProduct-create');
});

test('the instance serializes to its reference, never the platform context or secrets', () => {
  const m = instantiateModule(SampleProduct, p.ctx, { service_uuid: 'svc-1' });
  assert.deepEqual(JSON.parse(JSON.stringify({ module: m })), {
    module: { module_type: 'Product', module_name: 'SampleProduct', service_uuid: 'svc-1', payment_gateway_uuid: null },
  });
  assert.ok(!Object.keys(m).includes('ctx'));
  assert.ok(!Object.keys(m).some((k) => k.endsWith('Job')), 'wrapped job methods are not enumerable');
});

test('contextFor gives a module its config.ts section', () => {
  const { config: _ignored, ...shared } = p.ctx;
  const ctx = contextFor(shared, 'Product', 'VpnProduct');
  assert.deepEqual(ctx.config, config.modules.Product.VpnProduct);
  assert.deepEqual(contextFor(shared, 'Payment', 'Nope').config, {});
  assert.equal(ctx.moduleLogs, p.ctx.moduleLogs);
  assert.equal(ctx.versions, p.ctx.versions);
});

test('activate / deactivate / update: success, or Error: <message> for a throw or an error text (logged)', async () => {
  const m = new Mailer(p.ctx);
  assert.equal(await runLifecycle(m, 'activate'), 'success');
  assert.equal(await runLifecycle(m, 'update'), 'success');
  m.mode = 'throw';
  assert.equal(await m.activate(), 'Error: SMTP host unreachable');
  m.mode = 'text';
  assert.equal(await runLifecycle(m, 'activate'), 'Error: cannot reach host');
  assert.equal(await runLifecycle(m, 'deactivate'), 'Error: still sending');
  const errors = (await p.logs.read({ level: 'error' })).reverse();
  assert.deepEqual(errors.map((e) => [e.action, e.response]), [
    ['activate', 'Error: SMTP host unreachable'],
    ['activate', 'Error: cannot reach host'],
    ['deactivate', 'Error: still sending'],
  ]);
  assert.equal(errors[0].context.channel, 'smtp');
});

test('result shapes follow the spec Errors table', () => {
  assert.deepEqual(successResult({ a: 1 }), { status: 'success', data: { a: 1 }, code: 200 });
  assert.deepEqual(validationErrorResult({ a: ['bad'] }), { status: 'error', message: { a: ['bad'] }, errors: { a: ['bad'] }, code: 422 });
  assert.deepEqual(jobSuccess(), { status: 'success' });
  assert.deepEqual(jobError('Service creation failed'), { status: 'error', message: 'Service creation failed' });
  assert.equal(toLifecycleResult(undefined), 'success');
  assert.equal(toLifecycleResult('Error: x'), 'Error: x');
  assert.equal(toLifecycleResult(new Error('y')), 'Error: y');
  assert.equal(toLifecycleResult({}), 'Error: Unknown error');
  assert.deepEqual(normalizeJobResult(undefined), { status: 'success' });
  assert.deepEqual(normalizeJobResult({ status: 'error' }), { status: 'error', message: 'Unknown error' });
  assert.deepEqual(normalizeJobResult({ status: 'done' }), { status: 'error', message: 'Unknown error' });
  assert.deepEqual(normalizeJobResult({ status: 'success', message: 'ok', extra: 1 }), { status: 'success', message: 'ok' });
});

test('runModuleJob runs other modules’ job methods with the signal and never throws', async () => {
  const m = new Mailer(p.ctx);
  const signal = new AbortController().signal;
  assert.deepEqual(await runModuleJob(m, 'flushJob', { signal }), { status: 'success', message: 'flushed with signal' });
  assert.deepEqual(await runModuleJob(m, 'nope'), { status: 'error', message: 'Unknown job method nope' });
  assert.deepEqual(await runModuleJob(m, 'constructor'), { status: 'error', message: 'Unknown job method constructor' });
  assert.deepEqual(await runModuleJob(m, 'deactivate'), { status: 'error', message: 'still sending' });
});
