// Module versions: compareVersions, the installed version table and the update() runner.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { compareVersions, syncModuleVersion } from '../../../module/contract/versions.ts';
import type { LifecycleResult } from '../../../module/contract/result.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

test('compareVersions', () => {
  assert.equal(compareVersions('1.0.9', '1.1.0'), -1);
  assert.equal(compareVersions('1.1.0', '1.0.9'), 1);
  assert.equal(compareVersions('1.10.0', '1.9.9'), 1);
  assert.equal(compareVersions('1.1', '1.1.0'), 0);
  assert.equal(compareVersions('v2.0.0', '2.0.0'), 0);
  assert.equal(compareVersions('1.1.0-beta.2', '1.1.0'), -1);
  assert.equal(compareVersions('1.1.0-beta.2', '1.1.0-beta.10'), -1);
  assert.equal(compareVersions('1.1.0-alpha', '1.1.0-beta'), -1);
  assert.equal(compareVersions('1.1.0-1', '1.1.0-alpha'), -1);
  assert.equal(compareVersions('1.0.0+build.5', '1.0.0'), 0);
  assert.throws(() => compareVersions('1.x', '1.0'), /invalid version/);
});

let p: TestPlatform;
beforeEach(() => (p = makePlatform({ config: { enabled: true, version: '1.1.0' } })));
afterEach(() => p.cleanup());

class Migrating extends SampleProduct {
  seen: string[] = [];
  updateAnswer: LifecycleResult | Error = 'success';
  override async update(): Promise<LifecycleResult> {
    this.seen.push(this.getCurrentVersion());
    if (compareVersions(this.getCurrentVersion(), '1.1.0') < 0) this.seen.push('migrate to 1.1.0');
    if (this.updateAnswer instanceof Error) throw this.updateAnswer;
    return this.updateAnswer;
  }
}

test('the version table: record and read', async () => {
  assert.equal(await p.versionQueries.installed('Product', 'X'), null);
  await p.versions.record('Product', 'X', '1.0.0');
  await p.versions.record('Product', 'X', '1.2.0');
  assert.equal(await p.versionQueries.installed('Product', 'X'), '1.2.0');
});

test('code version comes from config.ts, else the static version', () => {
  assert.equal(new Migrating(p.ctx).version, '1.1.0');
  const q = makePlatform({ config: { enabled: true } });
  try {
    assert.equal(new Migrating(q.ctx).version, '1.0.0');
  } finally {
    q.cleanup();
  }
});

test('fresh install records the version without update(); getCurrentVersion is 0.0.0 before', async () => {
  const m = new Migrating(p.ctx);
  assert.equal(m.getCurrentVersion(), '0.0.0');
  assert.deepEqual(await syncModuleVersion(m, p.ctx.versions), { action: 'installed', to: '1.1.0' });
  assert.deepEqual(m.seen, []);
  assert.equal(m.getCurrentVersion(), '1.1.0');
  assert.deepEqual(await syncModuleVersion(m, p.ctx.versions), { action: 'current', version: '1.1.0' });
});

test('a changed version runs update(), which reads the old version; success records the new one', async () => {
  await p.versions.record('Product', 'Migrating', '1.0.9');
  const m = new Migrating(p.ctx);
  assert.deepEqual(await syncModuleVersion(m, p.ctx.versions), { action: 'updated', from: '1.0.9', to: '1.1.0', result: 'success' });
  assert.deepEqual(m.seen, ['1.0.9', 'migrate to 1.1.0']);
  assert.equal(m.getCurrentVersion(), '1.1.0');
});

test('a failing update() keeps the old version; a throw becomes Error: <message>', async () => {
  await p.versions.record('Product', 'Migrating', '1.0.0');
  const m = new Migrating(p.ctx);
  m.updateAnswer = 'Error: column missing';
  assert.deepEqual(await syncModuleVersion(m, p.ctx.versions), { action: 'failed', from: '1.0.0', to: '1.1.0', result: 'Error: column missing' });
  m.updateAnswer = new Error('disk full');
  assert.deepEqual(await syncModuleVersion(m, p.ctx.versions), { action: 'failed', from: '1.0.0', to: '1.1.0', result: 'Error: disk full' });
  assert.equal(m.getCurrentVersion(), '1.0.0');
});
