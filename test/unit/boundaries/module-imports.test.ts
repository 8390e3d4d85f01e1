// Layer boundary: module/, config.ts and hooks.ts import from panel/ only its pure schemas; what both halves share
// (Clock, SecretBox, the view engine, the wire schemas) lives in the top-level shared/ kernel.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { specifiers } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((entry) => (/\.(ts|js)$/.test(entry) || !entry.includes('.') ? sourceFiles(join(path, entry)) : []));
}

test('module/, config.ts and hooks.ts reach into panel/ only through panel/schemas', () => {
  const files = ['module', 'config.ts', 'hooks.ts'].flatMap((p) => sourceFiles(join(root, p)));
  assert.ok(files.length > 50, `expected the module sources, found ${files.length} files`);
  const bad: string[] = [];
  let kernelImports = 0;
  for (const file of files) {
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(file), spec));
      if (target.startsWith('shared/')) kernelImports++;
      if (target.startsWith('panel/') && !target.startsWith('panel/schemas/')) bad.push(`${relative(root, file)} imports ${spec}`);
    }
  }
  assert.ok(kernelImports > 0, 'the scan sees the module side’s imports of the shared/ kernel');
  assert.deepEqual(bad, []);
});
