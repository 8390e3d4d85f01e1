// The panel's layers (docs/architecture-panel.md): which top-level folder of panel/ may import which.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { specifiers } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const panelDir = join(root, 'panel');
const kernelDir = join(root, 'shared');

/**
 * For each part of panel/, the other parts its files may import (its own part always). The top-level shared/ kernel
 * counts as two parts here: `schemas` for its wire schemas (shared/wire/), `shared` for the rest (Clock, SecretBox,
 * the view engine).
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  schemas: [],
  'logger.ts': [],
  store: ['schemas', 'shared', 'dataplane'],
  dataplane: ['schemas', 'shared'],
  services: ['schemas', 'shared', 'store', 'dataplane', 'http', 'logger.ts'],
  http: ['schemas', 'services', 'dataplane', 'logger.ts'],
  routes: ['http', 'schemas', 'services'],
  pages: ['http', 'schemas', 'services', 'shared'],
  cli: ['schemas', 'shared', 'store', 'dataplane', 'services', 'http', 'logger.ts', 'server.ts', 'app.ts'],
  'app.ts': ['http', 'routes', 'pages', 'services', 'schemas'],
  'server.ts': ['app.ts', 'dataplane', 'services', 'shared', 'store', 'logger.ts', 'http', 'schemas'],
};

/** Known crossings, each with its reason; a new one fails the test until it is listed here or removed. */
const EXCEPTIONS = new Set([
  // the packing of a statistics baseline set is pure and shared by the repository and the sampler
  'store/repositories/traffic-statistics.ts -> services/statistics/baseline-set.ts',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(entry) ? [path] : [];
  });
}

/** The top-level part of panel/ a path lies in (`services`, `app.ts`, ...), or the kernel's layer for shared/. */
function partOf(path: string): string {
  if (path.startsWith(kernelDir + '/')) return path.startsWith(join(kernelDir, 'wire') + '/') ? 'schemas' : 'shared';
  return relative(panelDir, path).split('/')[0];
}

test('every part of panel/ imports only the parts its layer allows', () => {
  const bad: string[] = [];
  const files = sourceFiles(panelDir);
  assert.ok(files.length > 100, `found ${files.length} files`);
  for (const file of files) {
    const from = partOf(file);
    const allowed = MAY_IMPORT[from];
    assert.ok(allowed, `no layer rule for panel/${from}`);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(panelDir + '/') && !target.startsWith(kernelDir + '/')) continue;
      const to = partOf(target);
      const edge = `${relative(panelDir, file)} -> ${relative(panelDir, target)}`;
      if (to !== from && !allowed.includes(to) && !EXCEPTIONS.has(edge)) bad.push(edge);
    }
  }
  assert.deepEqual(bad, []);
});

test('the rule table covers every part of panel/', () => {
  const parts = readdirSync(panelDir).filter((entry) => statSync(join(panelDir, entry)).isDirectory() || /\.ts$/.test(entry));
  assert.deepEqual(parts.filter((p) => !MAY_IMPORT[p]), []);
});
