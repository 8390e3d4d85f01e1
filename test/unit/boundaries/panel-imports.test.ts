// Layer boundary: no file under panel/ imports module/ or bin/ (the panel runs on gateways without the platform).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { sourceFiles, specifiers } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const panelDir = join(root, 'panel');


/** Files under panel/ with a relative import resolving outside panel/ into module/, bin/, config.ts or hooks.ts. */
function offenders(): string[] {
  const bad: string[] = [];
  for (const file of sourceFiles(panelDir)) {
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(file), spec));
      if (/^(module|bin)(\/|$)/.test(target) || /^(config|hooks)\.ts$/.test(target)) bad.push(`${relative(root, file)} imports ${spec}`);
    }
  }
  return bad;
}

test('the specifier scan sees static, side-effect, dynamic and require imports', () => {
  const text = `import a from '../../module/x.ts';\nimport '../y.ts';\nconst m = await import('../../module/z.ts');\nrequire("./w");\nexport { b } from './b.ts';`;
  assert.deepEqual(specifiers(text).sort(), ['../../module/x.ts', '../../module/z.ts', '../y.ts', './b.ts', './w'].sort());
});

test('panel/ never imports module/, bin/, config.ts or hooks.ts', () => {
  const files = sourceFiles(panelDir);
  assert.ok(files.length > 50, `expected the panel sources, found ${files.length} files`);
  assert.deepEqual(offenders(), []);
});
