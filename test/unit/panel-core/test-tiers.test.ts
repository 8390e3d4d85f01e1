// `npm test`'s tier choice: the host-free tiers by default (the others named with how to run them), all in CI.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phasesOf, selectTiers, skippedNotice, startOrder, TIERS } from '../../helpers/test-tiers.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const names = (tiers: Array<{ name: string }>) => tiers.map((t) => t.name);

test('by default only the tiers that need nothing from the host run; the others are named with how to run them', () => {
  const s = selectTiers([], {});
  assert.deepEqual(names(s.run), ['unit', 'contract', 'integration']);
  assert.deepEqual(names(s.skipped), ['system', 'browser']);
  assert.match(skippedNotice(s.skipped[0]), /^skipped tier: system \(needs root, network namespaces.*`npm test -- system` or `VPNHOST_TEST_SYSTEM=1 npm test`/);
  // CI=false or another value is no CI
  assert.deepEqual(names(selectTiers([], { CI: 'false' }).run), ['unit', 'contract', 'integration']);
});

test('CI=true always runs every tier, in order', () => {
  assert.deepEqual(names(selectTiers([], { CI: 'true' }).run), ['unit', 'contract', 'integration', 'system', 'browser']);
  assert.deepEqual(selectTiers([], { CI: 'true' }).skipped, []);
});

test('the system tier runs when asked: its variable, --all, or its name', () => {
  assert.deepEqual(names(selectTiers([], { VPNHOST_TEST_SYSTEM: '1' }).run), ['unit', 'contract', 'integration', 'system']);
  assert.deepEqual(names(selectTiers([], { VPNHOST_TEST_SYSTEM: '1' }).skipped), ['browser']);
  assert.deepEqual(names(selectTiers(['--all'], {}).run), ['unit', 'contract', 'integration', 'system', 'browser']);
  assert.deepEqual(names(selectTiers(['system'], {}).run), ['system']);
  assert.deepEqual(names(selectTiers(['unit', 'browser'], {}).run), ['unit', 'browser']);
  assert.match(selectTiers(['sytem'], {}).error ?? '', /^unknown tier: sytem/);
});

test('phases: contract runs alongside unit, system alongside integration, browser alone; a tier whose partner is not selected runs alone', () => {
  const phases = (run: ReturnType<typeof selectTiers>['run']) => phasesOf(run).map((phase) => phase.map((t) => t.name));
  assert.deepEqual(phases(selectTiers([], { CI: 'true' }).run), [['unit', 'contract'], ['integration', 'system'], ['browser']]);
  assert.deepEqual(phases(selectTiers([], {}).run), [['unit', 'contract'], ['integration']]);
  assert.deepEqual(phases(selectTiers(['system', 'browser'], {}).run), [['system'], ['browser']]);
  assert.deepEqual(phases(selectTiers(['contract', 'browser'], {}).run), [['contract'], ['browser']]);
  const tiers = [{ name: 'a', dir: 'a', concurrency: 1, testTimeoutMin: 1 }, { name: 'b', dir: 'b', concurrency: 1, testTimeoutMin: 1, alongside: 'a' }];
  assert.deepEqual(phasesOf(tiers).map((phase) => phase.map((t) => t.name)), [['a', 'b']]);
});

test('start order: a tier\'s startFirst files go first in their order, the rest keep theirs; every listed file exists', () => {
  const tier = { name: 't', dir: 'test/t', concurrency: 2, testTimeoutMin: 1, startFirst: ['c.ts', 'gone.ts', 'a.ts'] };
  assert.deepEqual(startOrder(tier, ['a.ts', 'b.ts', 'c.ts', 'd.ts']), ['c.ts', 'a.ts', 'b.ts', 'd.ts']);
  assert.deepEqual(startOrder({ ...tier, startFirst: undefined }, ['b.ts', 'a.ts']), ['b.ts', 'a.ts']);
  const listed = TIERS.flatMap((t) => t.startFirst ?? []);
  assert.ok(listed.length > 0);
  assert.deepEqual(listed.filter((file) => !existsSync(join(SOURCE_ROOT, file))), [], 'a startFirst file that no longer exists');
});
