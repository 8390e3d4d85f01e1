// Layer boundary: the shared/ kernel (Clock, SecretBox, the view engine, the wire schemas) imports only itself and
// packages — nothing of panel/, module/, bin/, config.ts, hooks.ts or test/ — so both halves can import it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { sourceFiles, specifiers } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const kernelDir = join(root, 'shared');

test('shared/ imports only shared/ and packages', () => {
  const files = sourceFiles(kernelDir);
  assert.ok(files.some((file) => file.endsWith('/clock.ts')), `expected the kernel sources, found ${files.length} files`);
  const bad: string[] = [];
  for (const file of files) {
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(kernelDir + '/')) bad.push(`${relative(root, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(bad, []);
});
