// The strict Prometheus text parser used by the /metrics tests accepts valid exposition and refuses malformed lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gauge, Histogram, Registry } from 'prom-client';
import { parsePromText } from './prom-text.ts';

test('parses what prom-client writes, labels with escapes included', async () => {
  const registry = new Registry();
  const g = new Gauge({ name: 'g_x', help: 'a gauge', labelNames: ['a'], registers: [registry] });
  g.set({ a: 'quote " back \\ nl \n' }, 2.5);
  const h = new Histogram({ name: 'h_s', help: 'a histogram', buckets: [1, 2], registers: [registry] });
  h.observe(0.5); h.observe(1.5); h.observe(3);
  const families = parsePromText(await registry.metrics());
  assert.deepEqual(families.get('g_x')!.samples, [{ name: 'g_x', labels: { a: 'quote " back \\ nl \n' }, value: 2.5 }]);
  const count = families.get('h_s')!.samples.find((s) => s.name === 'h_s_count')!;
  assert.equal(count.value, 3);
});

test('refuses malformed exposition', () => {
  const head = '# HELP m help\n# TYPE m gauge\n';
  for (const bad of [
    'm 1\n', // no HELP/TYPE
    `${head}m{a="1" 1\n`,
    `${head}m{a=1} 1\n`,
    `${head}m{a="1",a="2"} 1\n`,
    `${head}m one\n`,
    `${head}m 1\nm 2\n`,
    `${head}n 1\n`,
    `${head}m 1`,
    '# HELP h h\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1\n',
    '# HELP h h\n# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 1\nh_sum 1\n',
  ]) assert.throws(() => parsePromText(bad), Error, JSON.stringify(bad));
});
