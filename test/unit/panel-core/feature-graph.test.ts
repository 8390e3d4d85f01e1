// The feature graph: order derived from needs/provides, a missing need fails at start with its name, cycles and lies refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeFeatures, FeatureGraphError, featureFor, orderFeatures, type Feature } from '../../../shared/feature-graph.ts';
import { PANEL_FEATURES } from '../../../panel/services/index.ts';

interface Reg {
  seed: number;
  a: number;
  b: string;
  c: number[];
}
const define = featureFor<Reg>();
const fa = define({ name: 'fa', needs: ['seed'], provides: ['a'], build: (get) => ({ a: get('seed') + 1 }) });
const fb = define({ name: 'fb', needs: ['a'], provides: ['b'], build: (get) => ({ b: `b${get('a')}` }) });
const fc = define({ name: 'fc', needs: ['a', 'b'], provides: ['c'], build: (get) => ({ c: [get('a'), get('b').length] }) });

test('builds in the order the needs give, whatever the listed order', () => {
  assert.deepEqual(orderFeatures([fc, fb, fa], ['seed']).map((f) => f.name), ['fa', 'fb', 'fc']);
  const reg = composeFeatures([fc, fb, fa], { seed: 1 });
  assert.deepEqual([reg.a, reg.b, reg.c], [2, 'b2', [2, 2]]);
  // ties keep the listed order
  const fd = define({ name: 'fd', needs: ['seed'], provides: [], build: () => ({}) });
  assert.deepEqual(orderFeatures([fd, fa], ['seed']).map((f) => f.name), ['fd', 'fa']);
});

test('a need no feature provides fails at start, naming the need and who needs it', () => {
  assert.throws(() => composeFeatures([fb, fc], { seed: 1 }), (err: unknown) =>
    err instanceof FeatureGraphError && err.message === 'feature "fb" needs "a", which no feature provides');
  assert.throws(() => composeFeatures([fa], {}), /feature "fa" needs "seed", which no feature provides/);
});

test('a cycle, a key provided twice, an undeclared use and a wrong result are refused', () => {
  const x = define({ name: 'x', needs: ['b'], provides: ['a'], build: () => ({ a: 1 }) });
  assert.throws(() => orderFeatures([x, fb], ['seed']), /a cycle\): x, fb/);
  assert.throws(() => orderFeatures([fa, x], ['seed']), /"a" is provided by both feature "fa" and feature "x"/);
  const sneaky = { name: 'sneaky', needs: ['seed'], provides: ['a'], build: (get: (k: keyof Reg) => unknown) => ({ a: get('b') }) } as unknown as Feature<Reg>;
  assert.throws(() => composeFeatures([sneaky, fb], { seed: 1 }), /a cycle|without declaring/);
  const sneaky2 = { name: 'sneaky2', needs: ['seed'], provides: ['b'], build: (get: (k: keyof Reg) => unknown) => ({ b: String(get('a')) }) } as unknown as Feature<Reg>;
  assert.throws(() => composeFeatures([fa, sneaky2], { seed: 1 }), /feature "sneaky2" used "a" without declaring it in needs/);
  const liar = { name: 'liar', needs: ['seed'], provides: ['a'], build: () => ({ b: 'x' }) } as unknown as Feature<Reg>;
  assert.throws(() => composeFeatures([liar], { seed: 1 }), /feature "liar" provided \[b\], declared \[a\]/);
});

test('the panel\'s features form a graph: every need provided by the seed or one feature, no cycle; removing one names what is missing', () => {
  const order = orderFeatures(PANEL_FEATURES, ['deps']).map((f) => f.name);
  assert.equal(order.length, PANEL_FEATURES.length);
  const pos = new Map(order.map((name, i) => [name, i]));
  const provider = new Map(PANEL_FEATURES.flatMap((f) => f.provides.map((key) => [key, f.name] as const)));
  for (const f of PANEL_FEATURES) {
    for (const need of f.needs) if (need !== 'deps') assert.ok(pos.get(provider.get(need)!)! < pos.get(f.name)!, `${f.name} after the provider of ${need}`);
  }
  // metrics is made before the statistics that report to it (once a forward reference)
  assert.ok(pos.get('metrics')! < pos.get('statistics')!);
  const withoutDns = PANEL_FEATURES.filter((f) => f.name !== 'dns');
  assert.throws(() => orderFeatures(withoutDns, ['deps']), /needs "dns", which no feature provides/);
});
