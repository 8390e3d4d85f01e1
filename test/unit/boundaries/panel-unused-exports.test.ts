// Dead exports: every value panel/ exports is imported somewhere else (panel, module, bin, test), schemas aside.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { unusedExports } from '../../helpers/unused-exports.ts';

const root = resolve(new URL('../../../', import.meta.url).pathname);

test('no value exported from panel/ goes unimported (panel/schemas/ is the API the module shares, exempt)', () => {
  // `node --import tsx test/helpers/unused-exports.ts` lists them all
  const unused = unusedExports(root).filter((entry) => !entry.startsWith('panel/schemas/'));
  assert.deepEqual(unused, []);
});

test('the scan sees an export nobody imports', () => {
  const all = unusedExports(root);
  // the API schemas are listed (exempt above): the scan does find unimported exports
  assert.ok(all.some((entry) => entry.startsWith('panel/schemas/')), all.join(', '));
});
