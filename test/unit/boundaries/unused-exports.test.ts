// Dead exports: every value shared/, panel/ and module/ export is imported somewhere else (shared, panel, module, bin,
// test), the wire schemas (the API both halves share) aside.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CHECKED_DIRS, deadExports, unusedExports } from '../../helpers/unused-exports.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;

test('no value exported from shared/, panel/ or module/ goes unimported (wire schemas exempt)', () => {
  // `node --import tsx test/helpers/unused-exports.ts` lists them all
  assert.deepEqual(deadExports(root), []);
});

test('the scan sees the exempt wire schemas nobody imports', () => {
  const all = unusedExports(root, [...CHECKED_DIRS]);
  assert.ok(all.some((entry) => entry.startsWith('panel/schemas/')), all.join(', '));
  assert.ok(all.some((entry) => entry.startsWith('shared/wire/')), all.join(', '));
});

test('in each checked folder, an export imported nowhere is listed and an imported one is not', () => {
  const tree = mkdtempSync(join(tmpdir(), 'unused-exports-'));
  try {
    const files: Record<string, string> = {
      'shared/kernel.ts': 'export const usedKernel = 1;\nexport function deadKernel() {}\n',
      'panel/part.ts': "import { usedKernel } from '../shared/kernel.ts';\nexport const usedPanel = usedKernel;\nexport class DeadPanel {}\n",
      'module/part.ts': "import { usedPanel } from '../panel/part.ts';\nexport const deadModule = usedPanel;\nexport type OnlyAType = string;\n",
      'test/uses.ts': "import * as everything from '../module/other.ts';\nvoid everything;\n",
      'module/other.ts': 'export const seenThroughNamespace = 1;\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(tree, path, '..'), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    assert.deepEqual(unusedExports(tree, [...CHECKED_DIRS]), ['module/part.ts:deadModule', 'panel/part.ts:DeadPanel', 'shared/kernel.ts:deadKernel']);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
});
