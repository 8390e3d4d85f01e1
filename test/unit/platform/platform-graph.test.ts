// The platform's plugin graph: the start order is derived from needs (whatever the listed order), a missing need and
// a cycle fail the start naming them, a failed start stops what had started, and stops run in reverse start order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FeatureGraphError, liveFeatureFor, orderFeatures, RunningGraph, type Feature } from '../../../shared/feature-graph.ts';
import { HTTP_FEATURES } from '../../../module/platform/features/http-features.ts';
import type { PlatformRegistry } from '../../../module/platform/features/registry.ts';
import { Platform, PLATFORM_FEATURES } from '../../../module/platform/platform.ts';

/** Every feature after the providers of all it needs. */
function assertDerived(order: readonly { name: string; needs: readonly string[] }[], provider: Map<string, string>): void {
  const pos = new Map(order.map((f, i) => [f.name, i]));
  for (const f of order) {
    for (const need of f.needs) {
      const by = provider.get(need);
      if (by) assert.ok(pos.get(by)! < pos.get(f.name)!, `${f.name} starts after ${by}, the provider of ${need}`);
    }
  }
}

const asFeatures = <R>(list: readonly unknown[]) => list as unknown as Feature<R>[];
const providers = (list: readonly { name: string; provides: readonly string[] }[]) => new Map(list.flatMap((f) => f.provides.map((key) => [key, f.name] as const)));

test('the platform\'s start order is derived from the needs, whatever order the features are listed in', () => {
  const provider = providers(PLATFORM_FEATURES);
  const order = orderFeatures(asFeatures<PlatformRegistry>(PLATFORM_FEATURES), ['options']);
  assert.equal(order.length, PLATFORM_FEATURES.length);
  assertDerived(order, provider);
  const reversed = orderFeatures(asFeatures<PlatformRegistry>([...PLATFORM_FEATURES].reverse()), ['options']);
  assertDerived(reversed, provider);
  const names = reversed.map((f) => f.name);
  // the store opens before the key file is made and before the module host, which loads before the admins and the switch watch built on it
  for (const [before, after] of [['store', 'secrets'], ['store', 'module-host'], ['tasks', 'lifecycle'], ['billing', 'module-host'], ['module-host', 'service-admin'], ['service-admin', 'billing-binding'], ['module-host', 'module-switch-watch']]) {
    assert.ok(names.indexOf(before) < names.indexOf(after), `${before} before ${after}`);
  }
});

test('the HTTP features need only what the running platform provides (and the app and web settings)', () => {
  const seeded = [...new Set([...PLATFORM_FEATURES.flatMap((f) => f.provides), 'options', 'app', 'web'])];
  const order = orderFeatures(asFeatures<PlatformRegistry>(HTTP_FEATURES), seeded).map((f) => f.name);
  assert.equal(order.length, HTTP_FEATURES.length);
  const withoutLifecycle = seeded.filter((key) => key !== 'lifecycle');
  assert.throws(() => orderFeatures(asFeatures<PlatformRegistry>(HTTP_FEATURES), withoutLifecycle), /feature "worker-api" needs "lifecycle", which no feature provides/);
});

test('a platform missing a feature fails at start naming the need, before anything opens', async () => {
  const withoutStore = PLATFORM_FEATURES.filter((f) => f.name !== 'store');
  await assert.rejects(Platform.open({ dataDir: '/nonexistent/never-created' }, withoutStore), (err: unknown) =>
    err instanceof FeatureGraphError && /feature "\S+" needs "store", which no feature provides/.test(err.message));
  const withoutBilling = PLATFORM_FEATURES.filter((f) => f.name !== 'billing');
  await assert.rejects(Platform.open({ dataDir: '/nonexistent/never-created' }, withoutBilling), /needs "billingParts", which no feature provides/);
});

interface Reg {
  seed: number;
  a: number;
  b: number;
  c: number;
}
const define = liveFeatureFor<Reg, string>();

test('a cycle is named; a failed start stops what had started; stops run in reverse start order, once', async () => {
  const x = define({ name: 'x', needs: ['b'], provides: ['a'], start: () => ({ a: 1 }) });
  const y = define({ name: 'y', needs: ['a'], provides: ['b'], start: () => ({ b: 2 }) });
  await assert.rejects(RunningGraph.start([x, y], { seed: 0 }, 'abort'), /features needing each other \(a cycle\): x, y/);

  const log: string[] = [];
  const fa = define({ name: 'fa', needs: ['seed'], provides: ['a'], start: (get, life) => (life.onStop((arg) => log.push(`stop fa ${arg}`)), { a: get('seed') + 1 }) });
  const fb = define({ name: 'fb', needs: ['a'], provides: ['b'], start: async (get, life) => (life.onStop((arg) => log.push(`stop fb ${arg}`)), { b: get('a') * 10 }) });
  const broken = define({ name: 'broken', needs: ['b'], provides: ['c'], start: () => { throw new Error('no c today'); } });
  await assert.rejects(RunningGraph.start([broken, fb, fa], { seed: 1 }, 'abort'), /no c today/);
  assert.deepEqual(log, ['stop fb abort', 'stop fa abort']);

  log.length = 0;
  const graph = await RunningGraph.start([fb, fa], { seed: 1 }, 'abort');
  assert.deepEqual(graph.order, ['fa', 'fb']);
  assert.equal(graph.get('b'), 20);
  const fc = define({ name: 'fc', needs: ['b'], provides: ['c'], start: (get, life) => (life.onStop((arg) => log.push(`stop fc ${arg}`)), { c: get('b') + 1 }) });
  await graph.extend([fc], 'abort');
  assert.equal(graph.get('c'), 21);
  await Promise.all([graph.stop('close'), graph.stop('again')]);
  assert.deepEqual(log, ['stop fc close', 'stop fb close', 'stop fa close']);
  await assert.rejects(graph.extend([fc], 'abort'), /the graph is stopped/);
});
